"""Lazy package faces (PEP 562): a package's public names are imported on first use, not when
the package is.

Owns: reading a face's `if TYPE_CHECKING:` imports, the one list of what the face exports and
from where (type checkers read the same lines), and resolving a name from them on first use;
for the top-level package, a second such block lists the names that moved, each resolved with a
`DeprecationWarning` naming its new home. Why lazy: every `adk_memory.*` import runs the
packages above it first, and an eager face would load ADK, SQLAlchemy or a sibling room (an
import cycle) for a command such as `adk-memory --version` or `adk-memory db status` that needs
none of them. It never imports a module before one of its names is asked for, and holds no
names of its own.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import warnings
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any


@functools.cache
def type_checking_imports(file: str) -> tuple[dict[str, str], ...]:
    """Each `if TYPE_CHECKING:` block of the module at `file`, in order: the names it imports,
    each with the (relative) module it imports it from."""
    tree = ast.parse(Path(file).read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    return tuple(
        {
            alias.asname or alias.name: "." * node.level + (node.module or "")
            for node in block.body
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        for block in blocks
    )


def home_of(source: str, package: str) -> str:
    """The absolute name of the module a face imports a name from."""
    return importlib.util.resolve_name(source, package)


def lazy_face(
    package: str, file: str, namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of the face `package` (its `__name__`, `__file__` and
    `globals()`): its first `TYPE_CHECKING` block lists its public names, resolved once each
    and then kept in `namespace`; a second block, if any, lists names that moved, resolved on
    every use with a `DeprecationWarning` naming the module to import them from instead."""

    def __getattr__(name: str) -> Any:
        public, *moved = type_checking_imports(file)
        if name in public:
            value = namespace[name] = _resolve(public[name], package, name)
            return value
        for block in moved:
            if name in block:
                home = home_of(block[name], package)
                warnings.warn(
                    f"`{package}.{name}` is deprecated: import it from `{home}`; the "
                    f"top-level name goes in the next release.",
                    DeprecationWarning,
                    stacklevel=2,
                )
                return _resolve(block[name], package, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace["__all__"]})

    return __getattr__, __dir__


def _resolve(source: str, package: str, name: str) -> Any:
    return getattr(importlib.import_module(source, package), name)
