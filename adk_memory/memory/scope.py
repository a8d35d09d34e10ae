"""Memory scopes: validation, the one canonical form they are stored and matched in, and the
keys a scope's quarantined memories and procedures are kept under.

Owns: the rules (1 to 5 string keys and values, no `*`, no NUL) and the canonical key, a JSON
text with sorted keys, so exact-scope matching is one equality on an indexed column: same keys
and values, order-free, case-sensitive; and the key-prefix rules (`QUARANTINE_PREFIX`,
`PROCEDURE_PREFIX`, `kind_key`) every reader and writer of a scope's memories goes through. It
never widens a scope: there are no wildcards.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..db.replica import ReadFor
from ..errors import InputValidationError
from .models import MemoryFilter
from .procedure_rule import PUBLIC

MAX_SCOPE_KEYS = 5
MAX_SCOPE_PART_LENGTH = 256
MAX_SCOPE_KEY_BYTES = 1024
"""The canonical scope text is a btree key (and shares a covering-index entry with the
memory's vector), and PostgreSQL caps an index entry at about 2.7 kB."""

Scope = dict[str, str]


def validate_scope(scope: Any) -> Scope:
    """A copy of `scope` if it is valid; `InputValidationError` saying why if not."""
    if not isinstance(scope, Mapping):
        raise InputValidationError(
            f"A scope must be a dict of strings, got {type(scope).__name__}."
        )
    if not 1 <= len(scope) <= MAX_SCOPE_KEYS:
        raise InputValidationError(
            f"A scope has 1 to {MAX_SCOPE_KEYS} keys, got {len(scope)}: {sorted(map(str, scope))}."
        )
    checked: Scope = {}
    for key, value in scope.items():
        for kind, part in (("key", key), ("value", value)):
            if not isinstance(part, str) or not part:
                raise InputValidationError(f"Scope {kind}s must be non-empty strings: {part!r}.")
            if "*" in part or "\x00" in part:
                raise InputValidationError(f"Scope {kind} {part!r} contains '*' or NUL.")
            if not part.isascii() and not _encodable(part):
                raise InputValidationError(f"Scope {kind} {part!r} is not valid Unicode text.")
            if len(part) > MAX_SCOPE_PART_LENGTH:
                raise InputValidationError(
                    f"Scope {kind} is longer than {MAX_SCOPE_PART_LENGTH} characters."
                )
        checked[key] = value
    if len(scope_key(checked).encode()) > MAX_SCOPE_KEY_BYTES:
        raise InputValidationError(
            f"A scope's canonical text is at most {MAX_SCOPE_KEY_BYTES} bytes (UTF-8)."
        )
    return checked


def parse_scope(text: str) -> Scope:
    """A scope given as JSON text (a page's or a form's `scope` field): at most the length a
    valid scope's text can have, so no size or depth of input costs more than that to refuse,
    then parsed and validated; `InputValidationError` for anything else."""
    if not isinstance(text, str) or len(text.encode()) > 4 * MAX_SCOPE_KEY_BYTES:
        raise InputValidationError("Not a scope: the text is too long.")
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputValidationError(f"Not a scope: {text!r}.") from exc
    return validate_scope(parsed)


def _encodable(text: str) -> bool:
    """Whether `text` is storable: a lone surrogate (e.g. from a broken JSON decoder) is not,
    and an id must never be silently changed to fit (it would name another scope)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def scope_key(scope: Scope) -> str:
    """The canonical text of a validated scope: equal scopes, and only those, share it."""
    return json.dumps(scope, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def user_scope(app_name: str, user_id: str) -> Scope:
    """The scope ADK's memory calls use: one user of one app."""
    return validate_scope({"app_name": app_name, "user_id": user_id})


def app_scope(app_name: str) -> Scope:
    """The scope of what an app keeps for all its users (its procedures): the app, no user.
    It is a scope of its own, matched exactly like any other: it never includes, or is
    included in, a user's scope."""
    return validate_scope({"app_name": app_name})


def read_for(scope: Mapping[str, str] | None) -> ReadFor:
    """Whose rows a replica read of `scope` returns (None: every scope): the erasure fence it
    must pass (`db.replica.ErasureFences`). A scope without an app is no erased user's, but is
    fenced as every app's read (the cautious side)."""
    app_name = (scope or {}).get("app_name", "")
    return ReadFor(app_name, (scope or {}).get("user_id", "")) if app_name else ReadFor()


QUARANTINE_PREFIX = "quarantine:"
"""A quarantined memory is stored under its scope's key with this prefix. Every read, search and
ADK call matches a scope key exactly, so no path can return a quarantined memory without naming
the quarantine on purpose (and the tuned retrieval statements and indexes stay as they are);
approving it moves it back under its scope's own key. Revisions always carry the real key."""


def real_key_sql(column: str) -> str:
    """SQL for the scope key in `column` without the quarantine prefix (a revision's key)."""
    return (
        f"CASE WHEN starts_with({column}, '{QUARANTINE_PREFIX}') "
        f"THEN substr({column}, {len(QUARANTINE_PREFIX) + 1}) ELSE {column} END"
    )


# Row-level security (`db.rls`, docs/rls.md): every query level of a statement that scans a
# scoped table (`db.migrations.MEMORY_SCOPED_TABLES`) carries one of these gates in its WHERE;
# `rls.render` fills the gate function's name. Without one the policies answer no row.
def scope_gate(key: str) -> str:
    """The gate of a statement on one key's rows: `key` is the SQL of the key (a parameter, or
    builtins over one) in the exact form every level of the statement reads: a scope's own key,
    its quarantine or its procedures are each a key of their own to the policy (`db.rls.
    SCOPE_ROWS`, one equality the planner merges with the statement's `scope_key = $1`), so a
    statement reads one form (revisions excepted: they carry the real key, which the gate of a
    quarantine key answers too, `db.rls.REVISION_ROWS`). Bound parameters and builtins only, so
    it stays a one-time filter."""
    return f"{{act_as_scope}}({key})"


ALL_SCOPES_GATE = "{act_for_all}()"
"""The gate of a statement that acts for every scope on purpose: maintenance (purge, erasure,
sweeps, pruning, re-indexing), operators' listings and the worker's claim of the next job."""


def scope_or_all_gate(key: str, form: str = "") -> str:
    """The gate of an operator's listing of one scope, or of every scope when `key` is NULL;
    `form`: the prefix of the key form the listing reads (e.g. `QUARANTINE_PREFIX`)."""
    read = f"'{form}' || {key}" if form else key
    return f"CASE WHEN {key}::text IS NULL THEN {ALL_SCOPES_GATE} ELSE {scope_gate(read)} END"


def quarantine_key(scope_key: str) -> str:
    """Where a scope's quarantined memories are kept (see `QUARANTINE_PREFIX`)."""
    return QUARANTINE_PREFIX + scope_key


PROCEDURE_PREFIX = "procedure:"
"""A procedure (a playbook, `memory_type` "procedure") is stored under its scope's key with this
prefix, as a quarantined memory is: every read and search matches a key exactly, so a search for
facts never returns a procedure and one for procedures never a fact, and the tuned retrieval
statements and covering indexes serve both unchanged. Its revisions carry the prefixed key; its
`memory_type` is read from the key (`store.sql.MEMORY_COLUMNS`), so no column or index was added."""


def procedure_key(scope_key: str) -> str:
    """Where a scope's procedures are kept (see `PROCEDURE_PREFIX`)."""
    return PROCEDURE_PREFIX + scope_key


def kind_key(scope_key: str, flt: MemoryFilter | None) -> tuple[str, MemoryFilter | None]:
    """The key holding the kind of memories `flt` asks for (facts unless it says procedures),
    and what is left of the filter (None when the kind was all it said, so the unfiltered,
    index-only retrieval statement still serves it). Procedures are only those every user may
    see (`metadata["audience"]` holds `PUBLIC`: `procedure_support`) unless the filter names an
    audience itself (`PostgresMemoryService.retrieve_procedures` names one user's)."""
    if flt is None or flt.memory_type is None:
        return scope_key, flt
    if flt.memory_type == "fact":
        rest = flt.model_copy(update={"memory_type": None})
        return scope_key, None if rest == MemoryFilter() else rest
    metadata = dict(flt.metadata or {})
    metadata.setdefault("audience", [PUBLIC])
    return procedure_key(scope_key), flt.model_copy(
        update={"memory_type": None, "metadata": metadata}
    )
