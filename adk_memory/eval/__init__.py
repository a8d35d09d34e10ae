"""Evaluation tools: measure how well the memory service retrieves what a question needs.

`retrieval` holds the harness (dataset format, `evaluate`, Recall@K and MRR); `floor` replays a
report under relevance floors (recall lost vs silence gained on unanswerable questions); a small
synthetic dataset and a long-conversation one ship in `data/`. Owns: the harnesses, their
dataset formats and their reports. It never changes a service's data outside the scopes it
loads (and purges), and nothing in the runtime package ever imports this one.
"""

from .floor import FloorOn, candidate_floors, floor_scores, floor_tradeoff
from .retrieval import (
    ALL_MODES,
    DEFAULT_K_VALUES,
    DatasetError,
    DatasetMemory,
    DatasetQuery,
    ModeReport,
    QueryResult,
    RetrievalDataset,
    RetrievalMode,
    RetrievalReport,
    Scores,
    ServiceFactory,
    evaluate,
    format_report,
    load_dataset,
    load_long_conversations_dataset,
    load_synthetic_dataset,
    long_conversations_dataset_path,
    parse_dataset,
    recall_at_k,
    recall_by,
    reciprocal_rank,
    result_of,
    scores_by,
    synthetic_dataset_path,
)

__all__ = [
    "ALL_MODES",
    "DEFAULT_K_VALUES",
    "DatasetError",
    "DatasetMemory",
    "DatasetQuery",
    "FloorOn",
    "ModeReport",
    "QueryResult",
    "RetrievalDataset",
    "RetrievalMode",
    "RetrievalReport",
    "Scores",
    "ServiceFactory",
    "candidate_floors",
    "evaluate",
    "floor_scores",
    "floor_tradeoff",
    "format_report",
    "load_dataset",
    "load_long_conversations_dataset",
    "load_synthetic_dataset",
    "long_conversations_dataset_path",
    "parse_dataset",
    "recall_at_k",
    "recall_by",
    "reciprocal_rank",
    "result_of",
    "scores_by",
    "synthetic_dataset_path",
]
