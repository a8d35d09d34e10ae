"""The retrieval dataset format: memories, queries and the relevance judgements linking them
(`RetrievalDataset`), their validation and the shipped datasets.

Owns: the format and its rules; it never stores a memory or runs a query.

Dataset format
--------------

One JSON document (UTF-8) with exactly these keys (unknown keys are errors, so a misspelt
`"relevent"` fails loudly instead of silently scoring zero)::

    {
      "name": "my-dataset",                      # non-empty string, shown in reports
      "description": "...",                      # optional string
      "memories": [                              # at least one
        {
          "id": "m-001",                         # non-empty string, unique among memories
          "scope": {"app_name": "a", "user_id": "u1"},
          "fact": "The user is allergic to penicillin.",
          "topics": ["health"],                  # optional list of strings (default [])
          "importance": 0.8,                     # optional number in [0, 1]
          "metadata": {"source": "session 3"}    # optional JSON object, stored with the memory;
                                                 # its "date" (ISO 8601), if any, is when the
                                                 # memory is from (the entry's timestamp)
        }
      ],
      "queries": [                               # at least one
        {
          "id": "q-001",                         # non-empty string, unique among queries
          "scope": {"app_name": "a", "user_id": "u1"},
          "query": "Which antibiotics should a doctor avoid?",
          "relevant": ["m-001"],                 # at least one memory id, no repeats
          "metadata": {"category": "single-hop"} # optional JSON object, ignored by the metrics
        },
        {
          "id": "q-002",                         # a question no memory answers:
          "scope": {"app_name": "a", "user_id": "u1"},
          "query": "What is my blood type?",
          "relevant": [],                        # empty, which is only allowed with
          "unanswerable": true                   # this marker (optional, default false)
        }
      ]
    }

Rules, checked by `load_dataset` / `parse_dataset`. Every problem is reported with its location
(e.g. ``queries[3].relevant[1]``): all field problems at once, then, once the fields are valid,
all cross-reference problems (duplicate ids, relevant ids) at once. The rules:

- `scope` follows the service's scope rules: 1 to 5 keys, keys and values non-empty strings
  without `*` or NUL. Retrieval matches scopes exactly (same keys, same values), so a query only
  ever sees the memories of its own scope.
- `fact` is non-empty and at most 10,000 characters (the service's limit: a memory is a fact,
  not a document).
- Every id in `relevant` names a memory whose scope is exactly the query's scope (a memory in
  another scope could never be retrieved, so the query would be unanswerable by construction).
- `relevant` is empty exactly when the query is marked `"unanswerable": true`: a question the
  memories do not answer (what a relevance floor should return nothing for). The marker makes
  that a decision written in the data; a forgotten or emptied list stays an error.

Converting public conversational-memory datasets
------------------------------------------------

- LoCoMo (`locomo10.json`): one scope per conversation, e.g.
  ``{"app_name": "locomo", "user_id": sample_id}``. Memories: one per dialogue turn, id
  ``f"{sample_id}:{dia_id}"``, fact ``f"{speaker}: {text}"`` (optionally prefixed with the
  session date). Queries: one per `qa` item, id ``f"{sample_id}:q{i}"``, `relevant` = its
  `evidence` dia_ids with the same prefix. Drop category 5 (adversarial, unanswerable) and items
  whose evidence is empty or names no existing turn; put `category` in the query's `metadata`.
  To evaluate fact-level memories instead, make one memory per `observation` entry (each names
  the dia_id it came from) and mark relevant the observations of the evidence turns.
- LongMemEval (`longmemeval_s.json` / `_m`): every question has its own haystack, so one scope
  per question, e.g. ``{"app_name": "longmemeval", "user_id": question_id}``. Memories: one per
  turn of each haystack session, id ``f"{question_id}:{session_id}:{turn_index}"``, fact
  ``f"{role}: {content}"`` (cut to 10,000 characters). Query: `question`, `relevant` = the turns
  with `has_answer: true` (turn-level recall) or every turn of `answer_session_ids`
  (session-level). Drop abstention questions (ids ending in `_abs`): they have no evidence.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from ...memory.scope import scope_key
from .._datasets import DatasetScope, Fact, Text, package_data
from .._datasets import Frozen as _Frozen
from .._datasets import load as _load
from .._datasets import parse as _parse

if TYPE_CHECKING:  # importlib.resources.abc is 3.11+; only the annotation needs it
    from importlib.resources.abc import Traversable

SYNTHETIC_DATASET = "data/synthetic_retrieval.json"
"""The shipped synthetic dataset, relative to this package."""

LONG_CONVERSATIONS_DATASET = "data/long_conversations.json"
"""The shipped long-conversation dataset (built by `benchmarks/make_long_conversations.py`),
relative to this package."""


class DatasetMemory(_Frozen):
    """One memory to store before the queries run."""

    id: Text
    scope: DatasetScope
    fact: Fact
    topics: list[str] = Field(default_factory=list)
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default_factory=dict)


class DatasetQuery(_Frozen):
    """One search and the memories that answer it."""

    id: Text
    scope: DatasetScope
    query: Text
    relevant: list[Text]
    unanswerable: bool = False
    """No memory answers the query: `relevant` is empty, and the query is scored by whether it
    returns nothing (see "Metrics" in `report`)."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _marked(self) -> DatasetQuery:
        # The message starts with its sub-location, which the problem list joins to the query's.
        if self.unanswerable and self.relevant:
            raise ValueError(
                '.relevant: a query marked "unanswerable": true lists no relevant memories'
            )
        if not self.unanswerable and not self.relevant:
            raise ValueError(
                ".relevant: List should have at least 1 item (or mark a question no memory "
                'answers "unanswerable": true)'
            )
        return self


class RetrievalDataset(_Frozen):
    """Memories, queries and the relevance judgements linking them (see the module docs)."""

    name: Text
    description: str = ""
    memories: list[DatasetMemory] = Field(min_length=1)
    queries: list[DatasetQuery] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> RetrievalDataset:
        problems: list[str] = []
        scope_of: dict[str, str] = {}  # memory id -> canonical scope
        for i, memory in enumerate(self.memories):
            if memory.id in scope_of:
                problems.append(f"memories[{i}].id: duplicate memory id {memory.id!r}")
            else:
                scope_of[memory.id] = scope_key(memory.scope)
        if all(query.unanswerable for query in self.queries):
            problems.append("queries: at least one query must be answerable (recall needs one)")
        seen: set[str] = set()
        for i, query in enumerate(self.queries):
            if query.id in seen:
                problems.append(f"queries[{i}].id: duplicate query id {query.id!r}")
            seen.add(query.id)
            key = scope_key(query.scope)
            for j, memory_id in enumerate(query.relevant):
                where = f"queries[{i}].relevant[{j}]"
                if memory_id in query.relevant[:j]:
                    problems.append(f"{where}: {memory_id!r} is listed twice")
                elif memory_id not in scope_of:
                    problems.append(f"{where}: no memory has id {memory_id!r}")
                elif scope_of[memory_id] != key:
                    problems.append(
                        f"{where}: memory {memory_id!r} is in scope {scope_of[memory_id]}, not "
                        f"in the query's scope {key}, so it can never be retrieved"
                    )
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def scopes(self) -> list[dict[str, str]]:
        """Every distinct scope of the dataset's memories and queries, in first-seen order."""
        found: dict[str, dict[str, str]] = {}
        for scope in [*(m.scope for m in self.memories), *(q.scope for q in self.queries)]:
            found.setdefault(scope_key(scope), dict(scope))
        return list(found.values())


def parse_dataset(data: Any, *, source: str = "<dataset>") -> RetrievalDataset:
    """A validated dataset from already-decoded JSON (what converters build in memory).

    Raises:
      DatasetError: listing every problem, each with its location.
    """
    return _parse(RetrievalDataset, data, kind="retrieval", source=source)


def load_dataset(path: str | os.PathLike[str] | Traversable) -> RetrievalDataset:
    """Read and validate a dataset file (a path, or an `importlib.resources` traversable).

    Raises:
      DatasetError: the file is not JSON, or not a valid dataset (every problem listed).
      OSError: the file cannot be read.
    """
    return _load(RetrievalDataset, path, kind="retrieval")


def synthetic_dataset_path() -> Traversable:
    """The shipped synthetic dataset."""
    return package_data(SYNTHETIC_DATASET)


def load_synthetic_dataset() -> RetrievalDataset:
    """The shipped dataset: 60 personal-assistant facts of 4 users and 30 paraphrased queries."""
    return load_dataset(synthetic_dataset_path())


def long_conversations_dataset_path() -> Traversable:
    """The shipped long-conversation dataset."""
    return package_data(LONG_CONVERSATIONS_DATASET)


def load_long_conversations_dataset() -> RetrievalDataset:
    """The shipped LoCoMo-like dataset: 6 conversations of 8 dated sessions (one memory per
    turn, one scope each), questions by category with turn-level evidence, and questions no
    turn answers (its description gives the counts)."""
    return load_dataset(long_conversations_dataset_path())
