"""The package's public face: a top level of at most 40 names, a face (`__init__` with
`__all__`) for each room, every exception class in `adk_memory/errors.py`, the names that left
the top level still importable there for one release with a warning naming their new home,
and `import adk_memory` (and each lazy face) loading no ADK. Read from the source (an AST walk)
and from fresh processes, so no test's earlier imports colour the answer."""

from __future__ import annotations

import ast
import builtins
import importlib
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import adk_memory
from adk_memory import errors
from adk_memory._faces import home_of, type_checking_imports

PACKAGE = Path(adk_memory.__file__).parent
README = PACKAGE.parent / "README.md"

FACES = [
    "adk_memory.adk",
    "adk_memory.adk.compaction",
    "adk_memory.db",
    "adk_memory.eval",
    "adk_memory.mcp",
    "adk_memory.memory",
    "adk_memory.memory.generation",
    "adk_memory.memory.guard",
    "adk_memory.sessions",
]
LAZY_FACES = ["adk_memory", "adk_memory.db", "adk_memory.memory", "adk_memory.sessions"]

_PUBLIC, _MOVED = type_checking_imports(adk_memory.__file__)


def _exception_classes() -> dict[str, list[str]]:
    """Every class in the package that derives from an exception (by name, to a fixed point
    across modules): each module and the classes it defines."""
    trees = {
        str(path.relative_to(PACKAGE.parent)): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    known = {name for name, value in vars(builtins).items() if _is_exception(value)}
    known |= {"InputValidationError", "SessionNotFoundError", "AlreadyExistsError"}
    known |= {"StaleSessionError"}  # ADK's, which ours subclass under the same names
    found: dict[str, list[str]] = {}
    while True:
        before = len(known)
        for module, tree in trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and any(
                    _base_name(base) in known for base in node.bases
                ):
                    known.add(node.name)
                    if node.name not in found.setdefault(module, []):
                        found[module].append(node.name)
        if len(known) == before:
            return found


def _is_exception(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def _base_name(base: ast.expr) -> str:
    return base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")


def test_every_exception_class_is_defined_in_errors_py() -> None:
    classes = _exception_classes()
    home = classes.pop("adk_memory/errors.py")
    assert classes == {}
    assert {"AdkMemoryError", "DatasetError", "MemoryRejectedError", "_Refused", "_NotFast"} <= set(
        home
    )


def test_every_public_error_is_an_adk_memory_error() -> None:
    for name, value in vars(errors).items():
        ours = _is_exception(value) and value.__module__ == errors.__name__
        if ours and not name.startswith("_"):
            assert issubclass(value, errors.AdkMemoryError), name


# Where each moved class was first defined, and the builtin base its callers may catch.
_OLD_HOMES = [
    ("adk_memory.adk.compaction.summarize", "SummarizationError", RuntimeError),
    ("adk_memory.adk.compaction", "SummarizationError", RuntimeError),
    ("adk_memory.adk.inspector", "_Refused", Exception),
    ("adk_memory.db.migrations", "SchemaVersionError", RuntimeError),
    ("adk_memory.db.migrations", "MigrationError", RuntimeError),
    ("adk_memory.db.server_user", "EmbeddedPostgresUnavailableError", RuntimeError),
    ("adk_memory.db.embedded", "EmbeddedPostgresUnavailableError", RuntimeError),
    ("adk_memory.db.vectors", "EmbeddingDimensionError", ValueError),
    ("adk_memory.eval._datasets", "DatasetError", ValueError),
    ("adk_memory.eval.retrieval", "DatasetError", ValueError),
    ("adk_memory.eval", "DatasetError", ValueError),
    ("adk_memory.memory.app_config", "AppConfigError", Exception),
    ("adk_memory.memory.generation.llm", "GenerationOutputError", ValueError),
    ("adk_memory.memory.generation", "GenerationOutputError", ValueError),
    ("adk_memory.memory.screen", "MemoryRejectedError", ValueError),
    ("adk_memory.sessions.decoding", "_NotFast", Exception),
]


@pytest.mark.parametrize(("module", "name", "base"), _OLD_HOMES)
def test_a_moved_error_keeps_its_old_import_path_and_its_bases(
    module: str, name: str, base: type[BaseException]
) -> None:
    moved = getattr(importlib.import_module(module), name)
    assert moved is getattr(errors, name)
    assert issubclass(moved, base)
    if not name.startswith("_"):
        assert issubclass(moved, errors.AdkMemoryError)


def test_the_wrong_type_errors_stay_type_errors() -> None:
    """The raw `TypeError`s at public doors became `InputTypeError`: still a `TypeError` (so
    old `except TypeError` clauses hold), never a `ValueError` (which tools answer the model
    with, where a wrong type is the application's mistake)."""
    assert issubclass(errors.InputTypeError, TypeError)
    assert issubclass(errors.InputTypeError, errors.AdkMemoryError)
    assert not issubclass(errors.InputTypeError, ValueError)
    assert issubclass(errors.ServiceConfigurationError, RuntimeError)
    assert issubclass(errors.EvaluationError, RuntimeError)


def test_the_top_level_is_at_most_40_names_and_each_imports() -> None:
    assert len(adk_memory.__all__) <= 40
    assert len(set(adk_memory.__all__)) == len(adk_memory.__all__)
    assert set(adk_memory.__all__) == set(_PUBLIC)
    assert not set(_PUBLIC) & set(_MOVED)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a public name never warns
        for name in adk_memory.__all__:
            assert getattr(adk_memory, name) is not None, name


@pytest.mark.parametrize("face", FACES)
def test_each_face_exports_names_that_import_and_says_what_it_must_never_do(face: str) -> None:
    module = importlib.import_module(face)
    names = module.__all__
    assert names and len(set(names)) == len(names)
    for name in names:
        assert getattr(module, name) is not None, f"{face}.{name}"
    doc = module.__doc__ or ""
    assert "Owns" in doc or "owns" in doc, face
    assert "never" in doc, face


@pytest.mark.parametrize("name", sorted(_MOVED))
def test_a_moved_top_level_name_warns_with_its_new_home(name: str) -> None:
    home = home_of(_MOVED[name], "adk_memory")
    with pytest.warns(DeprecationWarning, match=re.escape(f"import it from `{home}`")):
        value = getattr(adk_memory, name)
    assert value is getattr(importlib.import_module(home), name)
    assert name in getattr(importlib.import_module(home), "__all__", [name])
    assert name not in adk_memory.__all__


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = adk_memory.no_such_name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = importlib.import_module("adk_memory.memory").no_such_name


_PROBE = """
import json, sys, importlib
for face in sys.argv[1:]:
    importlib.import_module(face)
heavy = ("google.adk.agents", "google.genai", "sqlalchemy", "asyncpg")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))
"""


def test_importing_the_package_and_its_lazy_faces_loads_no_adk() -> None:
    """`import adk_memory` runs before every `adk_memory.*` import (and `adk-memory
    --version`): it, and the lazy faces of db/, memory/ and sessions/, import no ADK agents,
    no google-genai, no SQLAlchemy and no driver until a name is asked for."""
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, *LAZY_FACES], capture_output=True, text=True, timeout=120
    )
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout) == []


def test_the_readme_lists_the_public_api() -> None:
    """The README's "Public API" part names every top-level name and every face."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Public API", 1)[1].split("\n## ", 1)[0]
    for name in adk_memory.__all__:
        assert f"`{name}`" in section, name
    for face in FACES:
        assert f"`{face}`" in section, face
