"""The package's shape, checked from its source (no database, no import of the package but its
top-level `__all__`): what issue 24's "Done when" asks of `adk_memory/`.

- no module over `MAX_MODULE_LINES` lines, no function (methods included) over
  `MAX_FUNCTION_LINES`;
- no import cycle between the package's modules (imports under `TYPE_CHECKING` and inside
  functions count: a cycle of types is still a cycle to read; a package's `__init__` is a module);
- the arrows: `memory/` and `sessions/` never import each other, nor `adk/` or `cli/`; `db/`
  imports nothing of `memory/`, `sessions/`, `adk/` or `cli/`;
- inside `memory/`, the rooms' arrows (`MEMORY_ROOMS`): the service above the pipeline, the
  pipeline above the store and the policy, the store and the jobs on the shared vocabulary only;
- only the job queue's module names the jobs table (the migrations hold all DDL, theirs too);
- every exception class lives in `errors.py`;
- the top-level `__all__` has at most `MAX_TOP_LEVEL_NAMES` names.

Each failure lists every offender, one a line (`path:line name size`), so what is left to do
is read off the message, not found one at a time.
"""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "adk_memory"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_TOP_LEVEL_NAMES = 40
JOBS_TABLE = "memory_jobs"
QUEUE_MODULES = frozenset(
    {
        "adk_memory.memory.jobs.queue",
        "adk_memory.db.migrations",
        "adk_memory.db.memory_migrations",
        "adk_memory.db.roles",
    }
)
"""The modules that may name `JOBS_TABLE`: the queue, the migrations (all DDL) and the roles'
grant table (every table's privileges; it runs no statement on a table's rows)."""
ERRORS_MODULE = "adk_memory.errors"
FORBIDDEN = {
    "memory": ("sessions", "adk", "cli"),
    "sessions": ("memory", "adk", "cli"),
    "db": ("memory", "sessions", "adk", "cli"),
    "identity": ("memory", "sessions", "adk", "cli"),
    "mcp": ("sessions", "adk", "cli"),
}
"""Subpackage -> the subpackages it must never import (the arrows run cli -> adk -> memory,
sessions -> db)."""
MEMORY = f"{PACKAGE}.memory"
SHARED = "shared"
"""The room of `memory/`'s flat modules: the vocabulary every room speaks (models, scope,
checks, text...)."""
MEMORY_ROOMS = {
    "service": {"pipeline", "generation", "jobs", "store", "policy", "guard", SHARED},
    "pipeline": {"generation", "jobs", "store", "policy", "guard", SHARED},
    "policy": {"guard", "generation", SHARED},
    "guard": {"generation", SHARED},
    "generation": {SHARED},
    "store": {SHARED},
    "jobs": {SHARED},
    SHARED: {SHARED},
}
"""A room of `memory/` (its subpackage, or `SHARED`) -> the rooms it may import. The policy
reads the generation room's types (`MemoryOperation`, the source ranks) and the guard's model
check calls a model through it; `memory/__init__` (the face) may name any room."""


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    source: str
    tree: ast.Module
    imports: list[tuple[int, str]] = field(default_factory=list)
    """(line, imported module of the package), filled by `modules`."""

    @property
    def where(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def room(self) -> str:
        """The subpackage directly under the package ("memory", "db", ...), or "" at the top."""
        parts = self.name.split(".")
        return parts[1] if len(parts) > 2 or (self.is_package and len(parts) == 2) else ""


def _name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _targets(module: Module, node: ast.Import | ast.ImportFrom, known: set[str]) -> Iterator[str]:
    """The package's modules an import statement loads: `from X import n` is X.n when that is
    a module, else X itself; relative imports are resolved against the importing module."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in known)
        return
    if node.level:
        base = module.name.split(".")
        if not module.is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    for alias in node.names:
        if f"{origin}.{alias.name}" in known:
            yield f"{origin}.{alias.name}"
        elif origin in known:
            yield origin


@functools.cache
def modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name, is_package = _name(path)
        found[name] = Module(name, path, is_package, source, ast.parse(source, str(path)))
    known = set(found)
    for module in found.values():
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module.imports.extend(
                    (node.lineno, target)
                    for target in dict.fromkeys(_targets(module, node, known))
                    if target != module.name
                )
    return found


def _check(title: str, offenders: list[str]) -> None:
    """Fail listing every offender, one a line (pytest's rewrite of the list would cut it)."""
    if offenders:
        pytest.fail(f"{title}: {len(offenders)}\n" + "\n".join(offenders), pytrace=False)


def test_no_module_is_over_the_line_limit() -> None:
    offenders = [
        f"{m.where}:1 {m.name} {lines} lines"
        for m in modules().values()
        if (lines := m.source.count("\n")) > MAX_MODULE_LINES
    ]
    _check(f"modules over {MAX_MODULE_LINES} lines", offenders)


def _functions(
    node: ast.AST, prefix: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method under `node` with its qualified name (`Class.method`,
    `outer.inner`), wherever it is defined (in a class, a function, an `if` or `try` block)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + child.name, child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def test_no_function_is_over_the_line_limit() -> None:
    offenders = [
        f"{m.where}:{node.lineno} {name} {size} lines"
        for m in modules().values()
        for name, node in _functions(m.tree, "")
        if (size := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    _check(f"functions over {MAX_FUNCTION_LINES} lines", offenders)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    found = modules()
    graph = {name: {target for _, target in m.imports} for name, m in found.items()}
    offenders = [
        f"{found[name].where}:{line} {name} -> {target} (cycle of {len(component)})"
        for component in _cycles(graph)
        for name in component
        for line, target in found[name].imports
        if target in component
    ]
    _check("imports inside import cycles", offenders)


def test_the_arrows_point_one_way() -> None:
    found = modules()
    offenders = [
        f"{m.where}:{line} {m.name} -> {target}"
        for m in modules().values()
        for line, target in m.imports
        if found[target].room in FORBIDDEN.get(m.room, ())
    ]
    _check("imports against the arrows", offenders)


def _memory_room(name: str) -> str | None:
    """The room of a module of `memory/` (None outside it, and for its face)."""
    if not name.startswith(MEMORY + "."):
        return None
    room = name.split(".")[2]
    return room if room in MEMORY_ROOMS else SHARED


def test_the_rooms_of_memory_point_one_way() -> None:
    offenders = [
        f"{m.where}:{line} {m.name} -> {target} ({room} -> {target_room})"
        for m in modules().values()
        if (room := _memory_room(m.name)) is not None
        for line, target in m.imports
        if (target_room := _memory_room(target)) is not None
        and target_room != room
        and target_room not in MEMORY_ROOMS[room]
    ]
    _check("imports against the rooms of memory/", offenders)


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes of `tree` (a docstring may name a table; SQL may not)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_only_the_queue_names_the_jobs_table() -> None:
    offenders = []
    for m in modules().values():
        if m.name in QUEUE_MODULES:
            continue
        docstrings = _docstrings(m.tree)
        offenders += [
            f"{m.where}:{node.lineno} {m.name} names {JOBS_TABLE}"
            for node in ast.walk(m.tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and JOBS_TABLE in node.value
            and id(node) not in docstrings
        ]
    _check(f"modules naming {JOBS_TABLE} besides the queue", offenders)


def _base_name(base: ast.expr) -> str:
    """`errors.AdkMemoryError` -> "AdkMemoryError"; `Generic[T]` -> "Generic"."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def _is_builtin_exception(name: str) -> bool:
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, BaseException)


def test_every_exception_class_lives_in_errors() -> None:
    classes = [
        (m, node)
        for m in modules().values()
        for node in ast.walk(m.tree)
        if isinstance(node, ast.ClassDef)
    ]
    exceptions: set[str] = set()
    while True:  # a class deriving from an exception class of the package is one too
        more = {
            node.name
            for _, node in classes
            if node.name not in exceptions
            and any(
                b.endswith(("Error", "Exception", "Warning"))
                or _is_builtin_exception(b)
                or b in exceptions
                for b in map(_base_name, node.bases)
            )
        }
        if not more:
            break
        exceptions |= more
    offenders = [
        f"{m.where}:{node.lineno} {node.name}({', '.join(map(ast.unparse, node.bases))})"
        for m, node in classes
        if node.name in exceptions and m.name != ERRORS_MODULE
    ]
    _check(f"exception classes outside {ERRORS_MODULE}", offenders)


def test_the_top_level_face_is_small() -> None:
    import adk_memory

    names = sorted(adk_memory.__all__)
    if len(names) > MAX_TOP_LEVEL_NAMES:
        pytest.fail(
            f"adk_memory/__init__.py:1 __all__ {len(names)} names (at most "
            f"{MAX_TOP_LEVEL_NAMES}):\n" + ", ".join(names),
            pytrace=False,
        )
