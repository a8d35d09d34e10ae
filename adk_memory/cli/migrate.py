"""`adk-memory migrate`: create or upgrade the tables, and the vector column and index.

Owns: the one command that changes a schema: it reports each component's version (and the
vectors' dimension and index strategy), applies what is missing unless `--check`, and exits
non-zero when something is behind. It never migrates anything a flag did not ask for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import click

from ..db.enforcement import apply_setting
from ..db.migrations import MIGRATIONS, current_version
from ..db.migrations import migrate as migrate_component
from ..db.vectors import VECTOR_MAX_DIMENSIONS, migrate_vectors, vector_state
from ..memory.embeddings import GeminiEmbedder
from .options import (
    Overrides,
    Target,
    database_options,
    embedding_model_option,
    run,
)
from .output import echo_table, note


@dataclass(frozen=True)
class ComponentVersion:
    """Where one component's tables are, against what this adk-memory knows."""

    component: str
    before: int
    after: int
    latest: int
    command: str = "adk-memory migrate"
    """What brings it up to date."""
    detail: str = ""
    """More on its state (the vectors' dimension and index strategy, what they lack)."""
    leftovers: bool = False
    """Whether another index strategy's column or index is still there (vectors only)."""

    @property
    def behind(self) -> bool:
        return self.after < self.latest or self.leftovers


async def _vectors(
    conn: asyncpg.Connection,
    schema: str,
    dimensions: int | None,
    apply: bool,
    in_one_transaction: bool,
) -> ComponentVersion | None:
    """The vector column and index, for `dimensions` or else the dimension the stored vectors
    have (so a plain `migrate` upgrades an existing schema's index strategy); None when neither
    is known. `in_one_transaction`: behind a transaction-mode pooler (`migrate_vectors`)."""
    before = await vector_state(conn, schema, dimensions)
    if before is None:
        return None
    after = (
        await migrate_vectors(
            conn, schema, before.dimensions, in_one_transaction=in_one_transaction
        )
        if apply
        else before
    )
    detail = f"{after.dimensions} dims, {after.strategy} index"
    if after.pending:
        needs = ", ".join([*after.missing, *(f"removing {x}" for x in after.leftovers)])
        detail += f"; needs {needs}"
    if after.interrupted:
        detail += f"; resumes the interrupted {', '.join(after.interrupted)}"
    return ComponentVersion(
        "vectors",
        before.done,
        after.done,
        len(after.steps),
        command=f"adk-memory migrate --embedding-dimensions {after.dimensions}",
        detail=detail,
        leftovers=bool(after.retired),
    )


async def _migrate(
    target: Target, components: Sequence[str], apply: bool, dimensions: int | None
) -> list[ComponentVersion]:
    database = target.database()
    versions: list[ComponentVersion] = []
    try:
        async with database.connection() as conn:
            for name in components:
                steps = MIGRATIONS[name]
                before = await current_version(conn, target.schema, name)
                after = (
                    await migrate_component(conn, target.schema, name, steps) if apply else before
                )
                versions.append(ComponentVersion(name, before, after, len(steps)))
            vectors = (
                await _vectors(
                    conn, target.schema, dimensions, apply, database.pooler == "transaction"
                )
                if "memory" in components
                else None
            )
            # Applied (or, with --check, only read) after the migrations that create policies.
            rls = await apply_setting(
                conn, target.schema, database.row_level_security, change=apply
            )
    finally:
        await database.close()
    note(f"row-level security: {rls.describe()}")
    if vectors is not None:
        versions.append(vectors)
    elif "memory" in components:
        note(
            "vectors: no embedding dimension given and none stored yet (nothing to do for "
            "full-text search only); for vector search, pass --embedding-dimensions (or "
            "--embedding-model) to prepare them now."
        )
    return versions


def _state(version: ComponentVersion) -> str:
    if version.after > version.latest:
        state = "newer than this adk-memory: upgrade adk-memory"
    elif version.behind:
        state = f"behind: run `{version.command}`"
    elif version.before == version.after:
        state = "up to date"
    else:
        state = f"migrated from {version.before}"
    return f"{state} ({version.detail})" if version.detail else state


def _dimensions(embedding_model: str | None, embedding_dimensions: int | None) -> int | None:
    """The embedding dimension the options give: `--embedding-dimensions`, else the embedder's
    (the test hook's, or `--embedding-model`'s default size); None without either."""
    if embedding_dimensions is not None:
        return embedding_dimensions
    overrides = click.get_current_context().find_object(Overrides)
    if overrides is not None and overrides.embedder is not None:
        return overrides.embedder.dimensions
    if embedding_model is not None:
        return GeminiEmbedder(embedding_model).dimensions
    return None


@click.command()
@database_options
@click.option(
    "--check",
    is_flag=True,
    help="Change nothing; exit 1 if any component is not at this adk-memory's version.",
)
@click.option(
    "--component",
    "components",
    type=click.Choice(sorted(MIGRATIONS)),
    multiple=True,
    help="Only these components (repeatable; default: all). Sessions alone need no pgvector.",
)
@embedding_model_option
@click.option(
    "--embedding-dimensions",
    type=click.IntRange(1, VECTOR_MAX_DIMENSIONS),
    metavar="N",
    help=(
        "Prepare (with --check: check) the vector column and index for embeddings of N "
        "dimensions (default: --embedding-model's size; else the size the stored vectors have)."
    ),
)
def migrate(
    target: Target,
    check: bool,
    components: tuple[str, ...],
    embedding_model: str | None,
    embedding_dimensions: int | None,
) -> None:
    """Create or upgrade the tables, and the vector column and index.

    Each component migrates in one transaction, exactly once however many processes run this at
    the same time; the versions are printed. The vectors' steps depend on the embedding
    dimension: they run when it is known (an option, or the stored vectors'), each index built
    without blocking writes, and an interrupted build is resumed. Agents' services migrate on
    first use by default, but every other `adk-memory` command only checks, so run this first
    on a new database. Then it applies `ADK_MEMORY_ROW_LEVEL_SECURITY` to the policed tables
    (with --check: only reads it) and says whether row-level security is in force for this
    URL's role."""
    chosen = components or tuple(MIGRATIONS)
    dimensions = _dimensions(embedding_model, embedding_dimensions)
    versions = run(_migrate(target, chosen, not check, dimensions))
    echo_table(
        ["COMPONENT", "VERSION", "LATEST", "STATE"],
        [[v.component, str(v.after), str(v.latest), _state(v)] for v in versions],
    )
    if check and any(v.behind or v.after > v.latest for v in versions):
        raise click.ClickException(f"Schema {target.schema!r} is not current.")
