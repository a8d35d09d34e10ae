"""`adk-memory memories import FILE`: write memories from JSON lines (what `memories export`
writes, or any file of `{"fact": ..., "scope": {...}}` objects) through `create_memories`; and
`adk-memory memories reindex`: rebuild the stored memories' full-text index
(`reindex_text`), the bulk writes an operator runs.

Owns: reading the lines and grouping consecutive lines of one scope into batches, each written
by one `create_memories` call (one statement: redacted, guarded, embedded in batches, with its
revisions), and each line's key. Every line is checked before anything is written; a batch the
memory service refuses stops the import, with the batches before it written (the message says
how many), except a batch of a user who opted out of memory: skipped, and counted. It never
writes SQL and never keeps an exported memory's id or times: an import creates memories of its
own (a remaining expiry becomes the TTL; an expired line is skipped).

Idempotent: each line is written with a key (`MemoryFact.key`), its `id` when it has one (an
export's), else its content, so running an import again, or the whole file after an import
that stopped part-way, writes each line once. A line whose key's memory was deleted since, or
holds another fact (an edited export line with the same id), is skipped and counted, never
overwritten.

An erased user stays erased: a line of an erased (app, user) whose memory an erasure removed, or
that is from before their latest erasure by its `create_time` (else `update_time`; a line
without either counts as before), is skipped and counted (`erased_among`, the rule every import
follows), unless `--allow-erased`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import IO, Any, NamedTuple

import click
from pydantic import ValidationError

from ..config import MemoryBankConfig, RetrievalConfig
from ..errors import InputValidationError, OptedOutError
from ..memory.embeddings import GeminiEmbedder
from ..memory.entries import keyed_ids
from ..memory.models import MemoryFact, SourceType
from ..memory.scope import Scope, validate_scope
from ..memory.service import PostgresMemoryService
from ..memory.store.tombstones import Kind
from ..settings.variables import parse_redact
from .options import (
    Overrides,
    Target,
    database_options,
    embedding_model_option,
    redact_option,
    run,
)
from .output import held_in_quarantine, note, plural, running_count

BATCH = 1000
"""Facts per `create_memories` call (at most; a batch never spans two scopes)."""


def _key(record: dict[str, Any]) -> str:
    """A line's key: its `id` (an export's memory id), else a digest of the whole line."""
    if isinstance(record.get("id"), str) and record["id"]:
        return "id:" + record["id"]
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "line:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _fact(record: object, now: datetime) -> tuple[Scope, MemoryFact] | None:
    """One line's scope and fact; None for a memory that has already expired."""
    if not isinstance(record, dict) or not isinstance(record.get("fact"), str):
        raise InputValidationError('a line must be a JSON object with a "fact" string.')
    scope = validate_scope(record.get("scope"))
    ttl = None
    if record.get("expire_time") is not None:
        try:
            expires = datetime.fromisoformat(str(record["expire_time"]))
        except ValueError as exc:
            raise InputValidationError(f"expire_time is not an ISO time: {exc}") from exc
        ttl = (expires if expires.tzinfo else expires.replace(tzinfo=timezone.utc)) - now
        if ttl.total_seconds() <= 0:
            return None
    try:
        source_type = SourceType(record.get("source_type") or SourceType.BOOTSTRAPPED)
    except ValueError as exc:
        raise InputValidationError(f"unknown source_type {record['source_type']!r}.") from exc
    return scope, MemoryFact(
        record["fact"],
        key=_key(record),
        topics=record.get("topics"),
        metadata=record.get("metadata"),
        content=record.get("content"),
        importance=record.get("importance"),
        confidence=record.get("confidence"),
        ttl=ttl,
        source_type=source_type,
    )


def _time(record: dict[str, Any]) -> datetime | None:
    """When the line's memory was made (`create_time`, else `update_time`), if it says."""
    value = record.get("create_time") or record.get("update_time")
    try:
        when = datetime.fromisoformat(str(value)) if value else None
    except ValueError as exc:
        raise InputValidationError(f"create_time is not an ISO time: {exc}") from exc
    return when if when is None or when.tzinfo else when.replace(tzinfo=timezone.utc)


def _read(
    lines: IO[str],
) -> tuple[list[tuple[int, Scope, MemoryFact]], dict[str, Any], int, int]:
    """Every fact with its line number and scope (all checked before any write), each fact's
    time by its key, how many lines had expired, and how many were held in quarantine where
    they were exported (`"quarantined": true`): never imported, since this import's guard may
    not be the one that held them, and a fact it allowed would be live."""
    now = datetime.now(timezone.utc)
    facts: list[tuple[int, Scope, MemoryFact]] = []
    times: dict[str, datetime | None] = {}
    expired = held = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            parsed = _fact(record, now)
            if parsed is not None:
                times[parsed[1].key or ""] = _time(record)
        except (ValueError, InputValidationError) as exc:
            raise InputValidationError(f"Line {number}: {exc}") from exc
        if record.get("quarantined") is True:
            held += 1
        elif parsed is None:
            expired += 1
        else:
            facts.append((number, *parsed))
    return facts, times, expired, held


async def _unerased(
    service: PostgresMemoryService, scope: Scope, batch: list[MemoryFact], times: dict[str, Any]
) -> list[MemoryFact]:
    """The batch without what an erasure removed (`erased_among`)."""
    if "app_name" not in scope or "user_id" not in scope:
        return batch
    ids = {fact.key or "": keyed_ids(scope, fact.key or "", fact.fact)[0] for fact in batch}
    at = {ids[key]: times.get(key) for key in ids}
    erased = await service.erased_among(Kind.MEMORY, scope["app_name"], scope["user_id"], at)
    return [fact for fact in batch if ids[fact.key or ""] not in erased]


def _batches(
    facts: list[tuple[int, Scope, MemoryFact]],
) -> Iterator[tuple[int, Scope, list[MemoryFact]]]:
    """Runs of consecutive facts of one scope, at most `BATCH` long: (first line, scope,
    facts)."""
    start = 0
    while start < len(facts):
        scope = facts[start][1]
        end = start + 1
        while end < len(facts) and end - start < BATCH and facts[end][1] == scope:
            end += 1
        yield facts[start][0], scope, [fact for _, _, fact in facts[start:end]]
        start = end


class _Imported(NamedTuple):
    """What one `memories import` did, line by line."""

    written: int
    """Memories imported, now or by an earlier run (identical lines are one memory)."""
    skipped: int
    """Lines written before and deleted or changed since."""
    expired: int
    erased: int
    """Lines of erased users (unless --allow-erased)."""
    opted_out: int
    """Lines of users who opted out of memory."""
    held: int
    """Memories of this run the guard holds in quarantine."""
    held_at_source: int
    """Lines held in quarantine where they were exported (not imported)."""


async def _import(service: PostgresMemoryService, source: IO[str], allow_erased: bool) -> _Imported:
    facts, times, expired, held_at_source = _read(source)
    written: set[str] = set()
    held: set[str] = set()
    lines = skipped = erased = opted_out = 0
    with running_count("lines imported") as progress:
        async with service:
            for first_line, scope, read in _batches(facts):
                batch = read if allow_erased else await _unerased(service, scope, read, times)
                erased += len(read) - len(batch)
                lines += len(read) - len(batch)
                if not batch:
                    continue
                try:
                    done = await service.create_memories(batch, scope)
                except OptedOutError:  # nothing of the batch written; the others go on
                    opted_out += len(batch)
                    continue
                except InputValidationError as exc:
                    raise InputValidationError(
                        f"The batch from line {first_line} was refused ({exc}); "
                        f"{plural(len(written), 'memory', 'memories')} written before it."
                    ) from exc
                written.update(m.id for m in done)
                held.update(m.id for m in done if m.quarantined)
                skipped += len(batch) - len(done)
                lines += len(batch)
                progress(lines)
    return _Imported(len(written), skipped, expired, erased, opted_out, len(held), held_at_source)


@click.command("import")
@database_options
@embedding_model_option
@redact_option
@click.option(
    "--allow-erased",
    is_flag=True,
    help="Import erased users' lines too (restoring them on purpose).",
)
@click.argument("source", type=click.File("r", encoding="utf-8"))
def import_memories(
    target: Target, embedding_model: str | None, redact: str, allow_erased: bool, source: IO[str]
) -> None:
    """Import memories from JSON lines (e.g. a `memories export`), each a memory of its line's
    scope, redacted and guarded as the agent's own writes. Use the agent's --embedding-model
    and --redact, so its searches find them. Safe to run again, or to resume after a stop:
    each line (known by its `id`, else its content) is imported once. Lines of an erased user
    from before the erasure are skipped (and counted) unless --allow-erased."""
    overrides = click.get_current_context().find_object(Overrides) or Overrides()
    embedder = overrides.embedder or (
        GeminiEmbedder(embedding_model) if embedding_model is not None else None
    )
    service = target.memory(embedder=embedder, redactor=parse_redact(redact), run_worker=False)
    done = run(_import(service, source, allow_erased))
    written, skipped, expired, erased, opted_out, held, held_at_source = done
    notes = [f"{plural(expired, 'expired line')} skipped"] if expired else []
    if held_at_source:
        notes.append(
            f"{plural(held_at_source, 'line')} held in quarantine at the source skipped "
            "(review them there)"
        )
    if erased:
        notes.append(f"{plural(erased, 'line')} of erased users skipped (--allow-erased)")
    if skipped:
        notes.append(f"{plural(skipped, 'line')} skipped: imported before, then deleted or changed")
    if opted_out:
        notes.append(f"{plural(opted_out, 'line')} skipped: the user opted out of memory")
    extra = f" ({'; '.join(notes)})" if notes else ""
    note(f"Imported {plural(written, 'memory', 'memories')}{extra}.")
    held_in_quarantine(held)


async def _reindex(service: PostgresMemoryService, batch_size: int) -> int:
    with running_count("memories reindexed") as progress:
        async with service:
            return await service.reindex_text(batch_size, progress=progress)


@click.command()
@database_options
@click.option(
    "--text-search-language",
    default=RetrievalConfig().text_search_language,
    show_default=True,
    help="The agents' Postgres text-search configuration (their text_search_language).",
)
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=1000, show_default=True)
def reindex(target: Target, text_search_language: str, batch_size: int) -> None:
    """Rebuild every stored memory's full-text index: once after upgrading from a version that
    indexed text without normalisation and bigrams (Chinese, Japanese or Thai memories are not
    found until then), or after changing the text-search language. In batches; safe to run
    again, or alongside traffic."""
    try:
        retrieval = RetrievalConfig(text_search_language=text_search_language)
    except ValidationError as exc:
        raise click.BadParameter(
            "a Postgres text-search configuration name (english, simple, german, ...)",
            param_hint="--text-search-language",
        ) from exc
    service = target.memory(config=MemoryBankConfig(retrieval=retrieval), run_worker=False)
    count = run(_reindex(service, batch_size))
    click.echo(f"{plural(count, 'memory', 'memories')} reindexed")
