"""The memory store: every statement on the memory tables, behind one `MemoryStore`.

Owns: the SQL for memories and their revisions (writes, reads, retrieval, watermarks and
upkeep), each statement filtered by the canonical scope key so no call reaches another scope's
rows, each change written together with its revision in one statement and safe to replay after
a lost reply (`Database.run`); rows become `Memory` / `MemoryRevision` here. It never decides
what to write (the service and the generator do), never calls a model, and never changes the
schema: the tables are migrations (`db.migrations`), the vector column and index too
(`db.vectors.VECTOR_STRATEGIES`), which it asks for through `Database.ensure_vectors`.

The parts, one concern each: `memories` (writes), `reads`, `retrieval` (ranking statements and
their builders), `maintenance` (watermarks, purge and erasure, re-indexing, sweep, prune), over
`sql` (shared fragments, typed bind parameters) and `rows` (values in, rows out); `changes`
holds the typed write requests. `MemoryStore` composes them over one database and exposes
their methods as its own, so callers hold one store.

The room's other stores, one table each: `profiles` (`ProfileStore`: profiles and their
revisions), `support` (`SupportStore`: who supports an app's procedures, their audiences),
`tombstones` (`Tombstones`: what stays erased), `opt_outs` (`OptOutStore`), `app_configs`
(`AppConfigStore`: each app's stored configuration) and `audit` (`AuditStore`: the audit of
operator access, no content). Arrows: the store imports only the shared
vocabulary of `memory/` (models, scope, text, the procedure rule) and `db/`; never the service,
the pipeline, the policy, the guard or the jobs.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

from ...db.engine import Database
from ...db.migrations import MEMORY_MIGRATIONS
from ...errors import InputValidationError
from .. import scope as _scope
from ..text import AUTO, search_text
from .app_configs import AppConfigStore
from .audit import AuditEntry, AuditRecord, AuditStore
from .changes import (
    GenerationWrites,
    MemoryChange,
    MemoryDeletion,
    MemoryUpdate,
    NewMemory,
    Watermark,
)
from .maintenance import Maintenance
from .memories import MemoryWrites
from .opt_outs import OptOutStore
from .profiles import ProfileStore
from .reads import MemoryReads
from .retrieval import RERANKED_MIN, Retrieval, Search
from .support import SupportStore
from .tombstones import Kind, Tombstones

__all__ = [
    "RERANKED_MIN",
    "AppConfigStore",
    "AuditEntry",
    "AuditRecord",
    "AuditStore",
    "GenerationWrites",
    "Kind",
    "MemoryChange",
    "MemoryDeletion",
    "MemoryStore",
    "MemoryUpdate",
    "NewMemory",
    "OptOutStore",
    "ProfileStore",
    "Search",
    "SupportStore",
    "Tombstones",
    "Watermark",
]

# Whether the server has a text-search configuration of this name ($1).
_TEXT_CONFIG_EXISTS = "SELECT count(*) FROM pg_catalog.pg_ts_config WHERE cfgname = $1"


class MemoryStore:
    """Runs the memory statements against one `Database` (and its schema).

    Its methods are its parts' (bound here, each documented where it is written), so a caller
    holds one store and a part's signature is said once."""

    def __init__(self, db: Database, *, text_search_language: str = "english") -> None:
        self._db = db
        self._language = text_search_language
        # `text` as this store indexes and queries it (its configuration, or the detected one
        # when the store's language is "auto").
        searchable = partial(search_text, language=text_search_language)
        writes = MemoryWrites(db, searchable)
        self.insert_many = writes.insert_many
        self.update = writes.update
        self.delete = writes.delete
        self.release = writes.release
        self.import_revisions = writes.import_revisions
        self.apply_generation = writes.apply_generation
        reads = MemoryReads(db)
        self.get = reads.get
        self.get_many = reads.get_many
        self.list_memories = reads.list_memories
        self.revisions = reads.revisions
        self.quarantined = reads.quarantined
        self.scopes = reads.scopes
        self.derived_from = reads.derived_from
        self.trust_history = reads.trust_history
        self.revision_facts = reads.revision_facts
        self._retrieval = Retrieval(db, searchable)
        self.retrieval = self._retrieval.retrieval
        self.retrieve = self._retrieval.retrieve
        self.candidates = self._retrieval.candidates
        upkeep = Maintenance(db, searchable)
        self.watermark = upkeep.watermark
        self.processed_until = upkeep.processed_until
        self.purge = upkeep.purge
        self.erase = upkeep.erase
        self.reindex_text = upkeep.reindex_text
        self.sweep = upkeep.sweep
        self.prune = upkeep.prune

    async def ready(self) -> None:
        """Migrate (or check) the memory tables, and check that the server has this store's
        text-search configuration (a misspelt one would otherwise fail every write and search
        with a raw database error); cheap after the first call."""
        await self._db.ensure_migrated("memory", MEMORY_MIGRATIONS)
        if self._language == AUTO:
            return
        known = await self._db.run(lambda conn: conn.fetchval(_TEXT_CONFIG_EXISTS, self._language))
        if not known:
            raise InputValidationError(
                f"Unknown text_search_language {self._language!r}: the server has no such "
                "text-search configuration (see `SELECT cfgname FROM pg_ts_config`), or use "
                '"auto".'
            )

    async def prepare_embeddings(self, dimensions: int) -> None:
        """Make sure the embedding column and vector index fit `dimensions` (the migrations own
        that DDL: `Database.ensure_vectors`), and search the way they are built. A dimension
        other than the stored vectors' is an `EmbeddingDimensionError`."""
        state = await self._db.ensure_vectors(dimensions)
        self._retrieval.use_vectors(state.strategy)


_MOVED_TO_SCOPE = frozenset(
    {"QUARANTINE_PREFIX", "PROCEDURE_PREFIX", "quarantine_key", "procedure_key", "kind_key"}
)


def __getattr__(name: str) -> Any:
    """The key-prefix rules moved to `memory.scope`: still importable from here for one
    release, with a deprecation warning."""
    if name in _MOVED_TO_SCOPE:
        warnings.warn(
            f"adk_memory.memory.store.{name} moved to adk_memory.memory.scope.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_scope, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
