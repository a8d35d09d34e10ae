"""Generation-quality harness: does `PostgresMemoryService.generate_memories` remember the right
things? Precision, recall and F1 of the memories a model generates, against a golden set.

Why these metrics: they are the memory-generation quality metrics the context-engineering
whitepaper ("Context Engineering: Sessions, Memory", Testing and Evaluation) recommends.
Precision guards against an over-eager memory that fills the bank with noise, recall against
one that misses what matters, F1 balances the two. Retrieval quality is measured separately
(`adk_memory.eval.retrieval`).

This face exports the harness's public names from its modules, one concern each: `dataset`
(the golden set's format and validation), `matching` (matchers, pairing, the figures),
`report` (results and their text), `harness` (running cases through the service's public API,
in scopes of their own, leaving nothing behind) and `command` (`python -m
adk_memory.eval.generation`). None of them writes SQL.
"""

from .._datasets import DatasetError
from .command import NO_KEY_MESSAGE, main
from .dataset import (
    DEFAULT_SCOPE,
    GOLDEN_DATASET,
    GenerationCase,
    GenerationDataset,
    golden_dataset_path,
    load_generation_dataset,
    load_golden_dataset,
    parse_generation_dataset,
)
from .harness import DEFAULT_TIMEOUT, EVAL_SCOPE_PREFIX, Progress, eval_scope, evaluate_generation
from .matching import (
    JACCARD_THRESHOLD,
    JUDGE_INSTRUCTION,
    NEGATIONS,
    STOP_WORDS,
    LlmJudge,
    Matcher,
    content_words,
    jaccard,
    lexical_match,
    llm_judge_matcher,
    match_facts,
    precision_recall_f1,
)
from .report import CaseResult, FactPair, GenerationReport, format_generation_report

__all__ = [
    "DEFAULT_SCOPE",
    "DEFAULT_TIMEOUT",
    "EVAL_SCOPE_PREFIX",
    "GOLDEN_DATASET",
    "JACCARD_THRESHOLD",
    "JUDGE_INSTRUCTION",
    "NEGATIONS",
    "NO_KEY_MESSAGE",
    "STOP_WORDS",
    "CaseResult",
    "DatasetError",
    "FactPair",
    "GenerationCase",
    "GenerationDataset",
    "GenerationReport",
    "LlmJudge",
    "Matcher",
    "Progress",
    "content_words",
    "eval_scope",
    "evaluate_generation",
    "format_generation_report",
    "golden_dataset_path",
    "jaccard",
    "lexical_match",
    "llm_judge_matcher",
    "load_generation_dataset",
    "load_golden_dataset",
    "main",
    "match_facts",
    "parse_generation_dataset",
    "precision_recall_f1",
]
