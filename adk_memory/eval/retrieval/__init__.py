"""Retrieval-quality harness: how often `PostgresMemoryService.retrieve_memories` finds the
memories a question needs, per retrieval mode (full-text, vector, hybrid).

This face exports the harness's public names from its modules, one concern each: `dataset`
(the dataset format, its validation and the shipped datasets), `report` (Recall@K, MRR and the
report) and `harness` (`evaluate`: loading a dataset into a service, running its queries, and
leaving nothing behind). They reach the database only through the service's public API.
"""

from .._datasets import DatasetError
from .dataset import (
    LONG_CONVERSATIONS_DATASET,
    SYNTHETIC_DATASET,
    DatasetMemory,
    DatasetQuery,
    RetrievalDataset,
    load_dataset,
    load_long_conversations_dataset,
    load_synthetic_dataset,
    long_conversations_dataset_path,
    parse_dataset,
    synthetic_dataset_path,
)
from .harness import (
    EMBED_BATCH_SIZE,
    EVAL_APP_PREFIX,
    EVAL_ID_KEY,
    EVAL_NAMESPACE,
    LOAD_BATCH_SIZE,
    Progress,
    ServiceFactory,
    evaluate,
)
from .report import (
    ALL_MODES,
    DEFAULT_K_VALUES,
    ModeReport,
    QueryResult,
    RetrievalMode,
    RetrievalReport,
    Scores,
    format_report,
    recall_at_k,
    recall_by,
    reciprocal_rank,
    result_of,
    scores_by,
)

__all__ = [
    "ALL_MODES",
    "DEFAULT_K_VALUES",
    "EMBED_BATCH_SIZE",
    "EVAL_APP_PREFIX",
    "EVAL_ID_KEY",
    "EVAL_NAMESPACE",
    "LOAD_BATCH_SIZE",
    "LONG_CONVERSATIONS_DATASET",
    "SYNTHETIC_DATASET",
    "DatasetError",
    "DatasetMemory",
    "DatasetQuery",
    "ModeReport",
    "Progress",
    "QueryResult",
    "RetrievalDataset",
    "RetrievalMode",
    "RetrievalReport",
    "Scores",
    "ServiceFactory",
    "evaluate",
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
