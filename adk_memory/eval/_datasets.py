"""Dataset plumbing the evaluation harnesses share (`retrieval` and `generation`).

Owns: the field types both dataset formats are built from (a scope checked by
the service's scope rules, non-blank text, a fact within the service's length limit, and a
frozen model base that rejects unknown keys); and turning decoded JSON, or a JSON file given as
a path or an `importlib.resources` traversable, into a validated pydantic model, with every
problem reported as a `location: message` line. Each harness keeps its own format (its models
and their cross-field rules) and its public `parse_*` / `load_*` functions, which call these.
Also the two bits both harnesses need: where shipped datasets live (`package_data`) and the
hash that names the scopes they write to (`digest`).
Its error, `DatasetError`, lives in `adk_memory.errors` (importable from here and from
`adk_memory.eval.retrieval` too).
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from ..errors import DatasetError, InputValidationError
from ..memory.checks import MAX_FACT_LENGTH
from ..memory.scope import validate_scope

if TYPE_CHECKING:  # importlib.resources.abc is 3.11+; only the annotation needs it
    from importlib.resources.abc import Traversable

ModelT = TypeVar("ModelT", bound=BaseModel)


# ------------------------------------------------------------------------------ field types


def check_scope(scope: dict[str, str]) -> dict[str, str]:
    try:
        validate_scope(scope)
    except InputValidationError as exc:
        raise ValueError(str(exc)) from None
    return scope


def check_text(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty or blank")
    return text


def check_fact(fact: str) -> str:
    if len(fact) > MAX_FACT_LENGTH:
        raise ValueError(f"a fact is at most {MAX_FACT_LENGTH} characters, got {len(fact)}")
    return fact


DatasetScope = Annotated[dict[str, str], AfterValidator(check_scope)]
Text = Annotated[str, AfterValidator(check_text)]
Fact = Annotated[Text, AfterValidator(check_fact)]


class Frozen(BaseModel):
    """Immutable, and unknown keys are errors (a misspelt key fails loudly, not silently)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


# ------------------------------------------------------------------------- parse and load


def problems(exc: ValidationError) -> list[str]:
    """pydantic's errors as `location: message` lines (`queries[2].scope`, not a tuple). A
    validator's message may start with its own sub-location (`[1].role: ...`, `.relevant: ...`),
    which is joined to the field's."""
    lines: list[str] = []
    for error in exc.errors():
        where = ""
        for part in error["loc"]:
            where += f"[{part}]" if isinstance(part, int) else f".{part}" if where else str(part)
        message = str(error["msg"]).removeprefix("Value error, ")
        for line in message.splitlines():
            if not line:
                continue
            if line.startswith(("[", ".")) and where:
                lines.append(f"{where}{line}")
            else:
                lines.append(f"{where}: {line}" if where else line)
    return lines


def parse(model: type[ModelT], data: Any, *, kind: str, source: str) -> ModelT:
    """`data` (decoded JSON) validated as `model`, a `kind` dataset ("retrieval", ...) read
    from `source` (named in the error).

    Raises:
      DatasetError: listing every problem, each with its location.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        found = problems(exc)
        raise DatasetError(
            f"{source}: invalid {kind} dataset ({len(found)} problem"
            f"{'s' if len(found) != 1 else ''}):\n" + "\n".join(f"  - {p}" for p in found)
        ) from None


def load(model: type[ModelT], path: str | os.PathLike[str] | Traversable, *, kind: str) -> ModelT:
    """Read the JSON file at `path` (a path, or an `importlib.resources` traversable) and
    validate it as `model` (see `parse`).

    Raises:
      DatasetError: the file is not JSON, or not a valid dataset (every problem listed).
      OSError: the file cannot be read.
    """
    source = str(path)
    file = Path(path) if isinstance(path, (str, os.PathLike)) else path
    text = file.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{source}: not valid JSON: {exc}") from None
    return parse(model, data, kind=kind, source=source)


# ----------------------------------------------------------------------------- shared bits


def package_data(relative: str) -> Traversable:
    """A file shipped in `adk_memory.eval` (package data: works from a wheel or a checkout)."""
    return resources.files("adk_memory.eval").joinpath(relative)


def digest(text: str, length: int) -> str:
    """The first `length` hex digits of `text`'s SHA-256: the harnesses' stable scope names."""
    return hashlib.sha256(text.encode()).hexdigest()[:length]
