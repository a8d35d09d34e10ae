"""Evaluation tools: measure how well the memory service retrieves what a question needs.

`retrieval` holds the harness (dataset format, `evaluate`, Recall@K and MRR); a small synthetic
dataset ships in `data/`. Nothing in the runtime package imports this one.
"""

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
    ServiceFactory,
    evaluate,
    format_report,
    load_dataset,
    load_synthetic_dataset,
    parse_dataset,
    recall_at_k,
    recall_by,
    reciprocal_rank,
    synthetic_dataset_path,
)

__all__ = [
    "ALL_MODES",
    "DEFAULT_K_VALUES",
    "DatasetError",
    "DatasetMemory",
    "DatasetQuery",
    "ModeReport",
    "QueryResult",
    "RetrievalDataset",
    "RetrievalMode",
    "RetrievalReport",
    "ServiceFactory",
    "evaluate",
    "format_report",
    "load_dataset",
    "load_synthetic_dataset",
    "parse_dataset",
    "recall_at_k",
    "recall_by",
    "reciprocal_rank",
    "synthetic_dataset_path",
]
