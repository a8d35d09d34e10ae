"""The generation golden set's format: a case is a conversation, what its scope holds before it
and what it should hold after (`GenerationCase`, `GenerationDataset`), their validation and the
shipped golden set.

Owns: the format and its rules; it never runs a case or scores one.

Dataset format
--------------

One JSON document (UTF-8). Unknown keys are errors (a misspelt ``"expected_memory"`` must fail
loudly, not score zero)::

    {
      "name": "golden-generation",             # non-empty string, shown in reports
      "description": "...",                    # optional string
      "cases": [                               # at least one
        {
          "id": "update-home-city",            # non-empty string, unique among cases
          "description": "...",                # optional string, for the reader
          "scope": {"app_name": "a", "user_id": "u"},   # optional (see below)
          "conversation": [                    # at least one ADK / genai Content dict
            {"role": "user", "parts": [{"text": "I moved to Berlin last month."}]},
            {"role": "model", "parts": [{"text": "Welcome to Berlin!"}]}
          ],
          "existing_memories": ["The user lives in Paris."],    # optional, default []
          "expected_memories": ["The user lives in Berlin."]    # required, may be []
        }
      ]
    }

Rules, checked by `load_generation_dataset` / `parse_generation_dataset` (every problem is
reported at once, with its location, e.g. ``cases[3].conversation[1].role``):

- `conversation` items are `google.genai.types.Content` dicts: `role` is "user" or "model", and
  each has at least one part; a text part's text is not blank. Other parts (`inline_data`,
  `file_data`) are allowed and reach the model as themselves.
- `existing_memories` are stored in the case's scope (as `create_memory` would) before the
  conversation is turned into memories, as memories of an earlier conversation (source type
  `implicit`), so the trust rule lets the conversation update them as a newer one would.
- `expected_memories` is the scope's whole memory *after* the conversation: the new facts, the
  existing memories that stay (an update's new version, not its old one) and nothing that was
  asked to be forgotten. An empty list means nothing should be remembered (small talk, or a
  forget request that empties the scope). Facts are non-empty, at most 10,000 characters, and
  not repeated within a list.
- `scope` (default ``{"app_name": "adk-memory-eval", "user_id": "user"}``, ADK's user scope)
  only matters through its keys: the service picks the `CustomizationConfig` (topics, few-shot
  examples) whose `scope_keys` are exactly those keys. Its values are never written to.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

from google.genai import types
from pydantic import AfterValidator, Field, field_validator, model_validator

from .._datasets import DatasetScope, Fact, Text, package_data
from .._datasets import Frozen as _Frozen
from .._datasets import load as _load
from .._datasets import parse as _parse

if TYPE_CHECKING:  # importlib.resources.abc is 3.11+; only the annotation needs it
    from importlib.resources.abc import Traversable

DEFAULT_SCOPE: dict[str, str] = {"app_name": "adk-memory-eval", "user_id": "user"}
"""A case's scope when it names none: ADK's user scope, so the default customization applies."""

GOLDEN_DATASET = "data/golden_generation.json"
"""The shipped golden set, relative to this package."""


def one_line(text: str) -> str:
    """A fact on one line, as the service stores generated facts (so comparisons are fair)."""
    return " ".join(text.split())


def _check_unique(facts: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    for i, fact in enumerate(facts):
        key = one_line(fact).casefold()
        if key in seen:
            raise ValueError(f"fact {i} repeats fact {seen[key]}: {fact!r}")
        seen[key] = i
    return facts


Facts = Annotated[list[Fact], AfterValidator(_check_unique)]


class GenerationCase(_Frozen):
    """One conversation, what the scope holds before it, and what it should hold after."""

    id: Text
    description: str = ""
    scope: DatasetScope = Field(default_factory=lambda: dict(DEFAULT_SCOPE))
    conversation: list[types.Content] = Field(min_length=1)
    existing_memories: Facts = Field(default_factory=list)
    expected_memories: Facts

    @field_validator("conversation")
    @classmethod
    def _turns(cls, conversation: list[types.Content]) -> list[types.Content]:
        problems: list[str] = []
        for i, content in enumerate(conversation):
            if content.role not in ("user", "model"):
                problems.append(f"[{i}].role: must be 'user' or 'model', got {content.role!r}")
            if not content.parts:
                problems.append(f"[{i}].parts: at least one part is needed")
            for j, part in enumerate(content.parts or ()):
                if part.text is not None and not part.text.strip():
                    problems.append(f"[{i}].parts[{j}].text: must not be empty or blank")
                elif part.text is None and part.inline_data is None and part.file_data is None:
                    problems.append(f"[{i}].parts[{j}]: needs text, inline_data or file_data")
        if problems:
            raise ValueError("\n".join(problems))
        return conversation

    @property
    def abstention(self) -> bool:
        """Nothing should be remembered after this conversation."""
        return not self.expected_memories


class GenerationDataset(_Frozen):
    """Cases of conversations and the memories they should leave (see the module docs)."""

    name: Text
    description: str = ""
    cases: list[GenerationCase] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> GenerationDataset:
        seen: set[str] = set()
        problems: list[str] = []
        for i, case in enumerate(self.cases):
            if case.id in seen:
                problems.append(f"cases[{i}].id: duplicate case id {case.id!r}")
            seen.add(case.id)
        if problems:
            raise ValueError("\n".join(problems))
        return self


def parse_generation_dataset(data: Any, *, source: str = "<dataset>") -> GenerationDataset:
    """A validated dataset from already-decoded JSON (what converters build in memory).

    Raises:
      DatasetError: listing every problem, each with its location.
    """
    return _parse(GenerationDataset, data, kind="generation", source=source)


def load_generation_dataset(path: str | os.PathLike[str] | Traversable) -> GenerationDataset:
    """Read and validate a dataset file (a path, or an `importlib.resources` traversable).

    Raises:
      DatasetError: the file is not JSON, or not a valid dataset (every problem listed).
      OSError: the file cannot be read.
    """
    return _load(GenerationDataset, path, kind="generation")


def golden_dataset_path() -> Traversable:
    """The shipped golden set (package data: works from a wheel or a checkout)."""
    return package_data(GOLDEN_DATASET)


def load_golden_dataset() -> GenerationDataset:
    """The shipped golden set: 13 assistant conversations covering preferences, personal
    information, an instruction, a booking, updates, forget requests, small talk, an
    already-known fact and a multi-fact turn."""
    return load_generation_dataset(golden_dataset_path())
