"""Memory retrieval-quality benchmark: Recall@5, Recall@10 and MRR of `PostgresMemoryService` in
each retrieval mode (full-text, vector, hybrid) on several datasets at once, and the share of
questions with no relevant memory that get nothing back, printed as one table, with ADK's
`InMemoryMemoryService` (the default of `adk web`) on the same data as the baseline row.

Why: retrieval decides whether an agent remembers at all, and its settings (fusion, weights, a
relevance floor) trade recall against noise. Tuning them on one small dataset overfits it; this
script measures every shipped set in one run, with the settings under test given on the command
line, so a sweep needs no code change:

    python benchmarks/memory_recall.py [--dataset PATH ...] [--modes text,vector,hybrid]
        [--config settings.json] [--set retrieval.rrf_k=20 ...] [--by category] [--floors 6]
        [--embedder hash|local|gemini] [--users ID,ID] [--now ISO-TIME] [--database-url URL]
        [--json PATH]

Datasets (default: all three): the shipped synthetic set, the shipped long-conversation set
(`adk_memory/eval/data/long_conversations.json`, per-category figures below the main table) and,
in a checkout, `tests/data/multilingual_retrieval.json`. Any file in the format of
`adk_memory.eval.retrieval` works (`--dataset`, repeatable).

`--users ana-ben,lena-jonah,marcus-assistant` keeps only those scopes' memories and queries
(the long-conversation set's user ids are its conversations): the half the turn weight was
tuned on; `grace-sam,noor-assistant,ravi-chloe` is the half it was reported on.

Floors: for each set with unanswerable questions, each mode's results are replayed under
`--floors` relevance floors (results scoring below are dropped; cosine similarity in vector
mode), printing recall against the share of unanswerable questions left with nothing: the curve
a relevance floor is calibrated on (`adk_memory.eval.floor`), from the same run.

Settings: `--config` reads a JSON object of `MemoryBankConfig` fields, then each `--set
dotted.key=value` overrides one (the value is JSON if it parses, else a string), e.g. `--set
retrieval.rrf_k=20 --set retrieval.recency_weight=0`. The mode is the one thing not settable:
every mode in `--modes` runs with the same settings.

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory. The
run uses a fresh schema (`adk_memory_eval_<random>`, dropped at the end), so the embedder's
vector size never clashes with a schema already in use, and the harness purges what it stored.
The services have no guard (`NoGuard`): the datasets are trusted, and the default guard would
quarantine the dialogue's questions and requests, which are memories to find here.

`--embedder hash` (the default) uses `HashEmbedder`: words hashed into 64 buckets. Its vectors
are lexical, not semantic ("pet" and "cat" are unrelated to it), so its vector and hybrid
figures are a floor, not what a real embedding model achieves. `--embedder gemini` uses
`GeminiEmbedder` (768 dimensions) and needs GOOGLE_API_KEY (or GEMINI_API_KEY). `--embedder
local` uses `LocalEmbedder` (sentence-transformers' all-MiniLM-L6-v2, 384 dimensions, in-process:
`pip install "adk-memory[local]"` and the model in the Hugging Face cache).

Times: memories with a "date" in their metadata (the long-conversation set's) are stored with
it, and times the questions name are matched against it (`retrieval.temporal_cues`; `--set
retrieval.temporal_cues=false` measures without). Relative times ("last week") are read against
`--now` (default: the clock), so on a set dated in the past only absolute ones ("in May 2023")
can match.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import _common as common
from google.adk.events.event import Event
from google.adk.memory import InMemoryMemoryService
from google.genai import types
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import create_async_engine

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.eval import (
    ALL_MODES,
    DatasetError,
    FloorOn,
    QueryResult,
    RetrievalDataset,
    RetrievalMode,
    RetrievalReport,
    Scores,
    candidate_floors,
    evaluate,
    floor_tradeoff,
    load_dataset,
    load_long_conversations_dataset,
    load_synthetic_dataset,
    result_of,
    scores_by,
)
from adk_memory.memory.embeddings import Embedder
from adk_memory.memory.guard import NoGuard
from adk_memory.testing import HashEmbedder

ROOT = Path(__file__).resolve().parent.parent
MULTILINGUAL = ROOT / "tests" / "data" / "multilingual_retrieval.json"
K_VALUES = (5, 10)
HASH_NOTE = (
    "HashEmbedder vectors are lexical (hashed words), not semantic: vector and hybrid figures "
    "here are a floor; use --embedder gemini for a real embedding model."
)


def _embedder(name: str) -> Embedder:
    if name == "hash":
        return HashEmbedder()
    if name == "local":
        # sentence-transformers' all-MiniLM-L6-v2, run in-process (no key; the model must be
        # installed or cached: nothing else here downloads).
        from adk_memory.memory.embeddings import LocalEmbedder

        local = LocalEmbedder()
        try:  # loads the model now, so a missing one is said before the run
            common.progress(f"local embedder: {local.dimensions} dimensions")
        except (ImportError, OSError) as exc:
            sys.exit(f"--embedder local: {exc}")
        # `dimensions` is a read-only property, which the Embedder protocol's plain attribute
        # does not admit statically; at run time it is what the service reads.
        return cast(Embedder, local)
    try:
        from adk_memory.memory.embeddings import GeminiEmbedder
    except ImportError:
        sys.exit("--embedder gemini: this adk-memory has no GeminiEmbedder.")
    settings = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")
    if not any(os.environ.get(name) for name in settings):
        sys.exit(
            "--embedder gemini needs GOOGLE_API_KEY (or GEMINI_API_KEY, or Vertex AI: "
            "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION)."
        )
    embedder: Embedder = GeminiEmbedder()
    return embedder


def _datasets(paths: list[str] | None) -> list[RetrievalDataset]:
    """The datasets named, or the default three (the multilingual one only in a checkout)."""
    try:
        if paths:
            return [load_dataset(path) for path in paths]
        found = [load_synthetic_dataset(), load_long_conversations_dataset()]
        if MULTILINGUAL.is_file():
            found.append(load_dataset(MULTILINGUAL))
        else:
            common.progress(f"skipping {MULTILINGUAL.name}: not in a checkout")
        return found
    except DatasetError as exc:
        sys.exit(str(exc))


def _only_users(datasets: list[RetrievalDataset], users: str | None) -> list[RetrievalDataset]:
    """Each dataset cut to the scopes of the given user ids (comma-separated), its name saying
    so: one half of a set to tune on, the other to report, in the same run."""
    if not users:
        return datasets
    wanted = {u.strip() for u in users.split(",") if u.strip()}
    cut = []
    for dataset in datasets:
        memories = [m for m in dataset.memories if m.scope.get("user_id") in wanted]
        queries = [q for q in dataset.queries if q.scope.get("user_id") in wanted]
        if not memories or not any(not q.unanswerable for q in queries):
            common.progress(f"skipping {dataset.name!r}: no scope of {sorted(wanted)}")
            continue
        name = f"{dataset.name} ({len(wanted)} users)"
        try:
            cut.append(
                RetrievalDataset.model_validate(
                    {**dataset.model_dump(), "name": name, "memories": memories, "queries": queries}
                )
            )
        except ValidationError as exc:
            sys.exit(f"--users: {exc}")
    if not cut:
        sys.exit(f"--users: no dataset has a scope of {sorted(wanted)}")
    return cut


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`base` with `override` merged in, nested objects merged key by key."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _settings(config_file: str | None, assignments: list[str]) -> dict[str, Any]:
    """The `MemoryBankConfig` fields of `--config` and `--set`, checked against the model."""
    settings: dict[str, Any] = {}
    if config_file:
        loaded = json.loads(Path(config_file).read_text(encoding="utf-8"))
        if not isinstance(loaded, dict):
            sys.exit(f"--config {config_file}: expected a JSON object")
        settings = loaded
    for assignment in assignments:
        path, sep, raw = assignment.partition("=")
        if not sep or not path:
            sys.exit(f"--set {assignment!r}: expected dotted.key=value")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        for key in reversed(path.split(".")):
            value = {key: value}
        settings = _merge(settings, value)
    if "mode" in settings.get("retrieval", {}):
        sys.exit("retrieval.mode is chosen per run: use --modes instead")
    try:
        MemoryBankConfig.model_validate(settings)
    except ValidationError as exc:
        sys.exit(f"invalid settings: {exc}")
    return settings


def _modes(text: str) -> list[RetrievalMode]:
    chosen = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in ALL_MODES]
    if unknown or not chosen:
        sys.exit(f"--modes: use a comma-separated list of {', '.join(ALL_MODES)}")
    return [m for m in ALL_MODES if m in chosen]


def _progress(mode: str, stage: str, done: int, total: int) -> None:
    if done == total:
        common.progress(f"{mode}: {stage} done ({total})")


async def _run(
    url: str,
    datasets: list[RetrievalDataset],
    modes: list[RetrievalMode],
    settings: dict[str, Any],
    embedder: Embedder,
    now: datetime | None,
) -> list[RetrievalReport]:
    schema = f"adk_memory_eval_{uuid.uuid4().hex[:8]}"
    engine = create_async_engine(url, pool_size=10)
    try:

        def service(config: MemoryBankConfig) -> PostgresMemoryService:
            # The harness names the mode; everything else comes from the command line. No guard:
            # the datasets are trusted, and raw dialogue is full of questions and requests.
            merged = _merge(settings, config.model_dump(exclude_unset=True))
            return PostgresMemoryService(
                engine=engine,
                schema=schema,
                embedder=embedder,
                config=MemoryBankConfig.model_validate(merged),
                guard=NoGuard(),
            )

        reports = []
        for dataset in datasets:
            common.progress(f"evaluating {dataset.name!r} in schema {schema}...")
            reports.append(
                await evaluate(
                    service, dataset, k_values=K_VALUES, modes=modes, progress=_progress, now=now
                )
            )
        return reports
    finally:
        await engine.dispose()
        await common.admin(url, f"DROP SCHEMA IF EXISTS {schema} CASCADE")


ADK = "adk in-memory"
"""The baseline row: ADK's `InMemoryMemoryService` (what `adk web` uses by default)."""


async def _adk_results(dataset: RetrievalDataset) -> list[QueryResult]:
    """Each query's results from ADK's `InMemoryMemoryService`, holding every memory as one
    event of its scope's user: a keyword matcher that returns every event sharing a word with
    the query, in the order stored (so Recall@K reads its first K)."""
    adk = InMemoryMemoryService()
    users = {json.dumps(m.scope, sort_keys=True) for m in dataset.memories}
    user_of = {key: f"u{i}" for i, key in enumerate(sorted(users))}
    by_text: dict[tuple[str, str], str] = {}
    for n, memory in enumerate(dataset.memories):
        user = user_of[json.dumps(memory.scope, sort_keys=True)]
        by_text.setdefault((user, memory.fact), memory.id)
        event = Event(
            id=f"e{n}",
            author="user",
            content=types.Content(role="user", parts=[types.Part(text=memory.fact)]),
        )
        await adk.add_events_to_memory(app_name="eval", user_id=user, events=[event])
    results = []
    for query in dataset.queries:
        user = user_of.get(json.dumps(query.scope, sort_keys=True), "nobody")
        found = await adk.search_memory(app_name="eval", user_id=user, query=query.query)
        texts = [part.text or "" for m in found.memories for part in (m.content.parts or [])]
        ranked = list(dict.fromkeys(by_text[(user, t)] for t in texts if (user, t) in by_text))
        results.append(result_of(query, ranked[: max(K_VALUES)], K_VALUES, scores=[], distances=[]))
    return results


def _cells(scores: Scores) -> list[str]:
    """Recall@5, Recall@10, MRR, no-answer count, empty share and mean returned ("-": none)."""

    def fmt(value: float | None, digits: int = 3) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return [
        str(scores.answerable),
        *(fmt(scores.recall.get(k)) for k in K_VALUES),
        fmt(scores.mrr),
        str(scores.unanswerable),
        fmt(scores.empty_share),
        fmt(scores.mean_returned, 1),
    ]


HEADER = ["queries", "R@5", "R@10", "MRR", "no-ans", "empty", "returned"]


def _print_floors(
    datasets: list[RetrievalDataset], reports: list[RetrievalReport], count: int
) -> None:
    """The relevance-floor trade-off of each dataset with unanswerable queries: each mode's
    results replayed under `count` floors (on the blended score; on cosine similarity in
    vector mode), from one that drops nothing up."""
    for dataset, report in zip(datasets, reports, strict=True):
        if not any(q.unanswerable for q in dataset.queries):
            continue
        print(f"\n{report.dataset}: relevance floor trade-off (results below the floor dropped)")
        rows = []
        flat = []
        for mode in report.modes:
            on: FloorOn = "similarity" if mode.mode == "vector" else "score"
            floors = candidate_floors(mode, count, on=on)
            if len({f"{floor:.6g}" for floor in floors[1:]}) == 1:
                flat.append(f"{mode.mode} ({floors[-1]:.6g})")
            for floor, scores in floor_tradeoff(dataset, mode, floors, on=on):
                rows.append([mode.mode, on, f"{floor:.6g}", *_cells(scores)])
        common.table(["mode", "floor on", "floor", *HEADER], rows)
        if flat:
            print(
                f"note: the best result of nearly every query scores the same in {', '.join(flat)}"
                ": a rank-normalised score, which a floor cannot separate relevant from "
                "irrelevant memories with (differences are recency noise)"
            )


def _print(
    datasets: list[RetrievalDataset],
    reports: list[RetrievalReport],
    by: str,
    floors: int,
    seconds: float,
) -> None:
    rows = []
    for dataset, report in zip(datasets, reports, strict=True):
        for mode in report.modes:
            rows.append([report.dataset, mode.mode, *_cells(Scores.of(mode.queries))])
        adk = asyncio.run(_adk_results(dataset))
        rows.append([report.dataset, ADK, *_cells(Scores.of(adk))])
    common.table(["dataset", "mode", *HEADER], rows)
    for dataset, report in zip(datasets, reports, strict=True):
        if not any(by in q.metadata for q in dataset.queries):
            continue
        print(f"\n{report.dataset} by {by}:")
        group_rows = []
        for mode in report.modes:
            for name, scores in scores_by(dataset, mode, by).items():
                group_rows.append([name or "(none)", mode.mode, *_cells(scores)])
        group_rows.sort(key=lambda row: row[0])  # stable: modes stay in run order per group
        common.table([by, "mode", *HEADER], group_rows)
    if floors:
        _print_floors(datasets, reports, floors)
    embedders = {r.embedder for r in reports if r.embedder}
    print(
        f"\nqueries: answerable ones (R@K and MRR are over these); no-ans: queries with no "
        f"relevant memory; empty: share of them returning nothing; returned: mean results they "
        f"returned. Embedder: {', '.join(sorted(embedders)) or 'none'}. {seconds:.1f} s; load "
        f"{common.load_average()}."
    )
    for report in reports:
        for skipped, reason in report.skipped.items():
            print(f"{report.dataset}: skipped {skipped}: {reason}")
        for note in report.notes:
            print(f"{report.dataset}: note: {note}")


def main() -> None:
    parser = common.argument_parser(__doc__)
    parser.add_argument(
        "--dataset", action="append", help="dataset JSON, repeatable (default: the three sets)"
    )
    parser.add_argument("--modes", default=",".join(ALL_MODES), help="default: %(default)s")
    parser.add_argument(
        "--users",
        help="only the scopes of these user ids (comma-separated), e.g. half of the long set's "
        "conversations to tune on",
    )
    parser.add_argument("--config", help="JSON object of MemoryBankConfig fields")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one setting, e.g. retrieval.rrf_k=20 (repeatable)",
    )
    parser.add_argument("--by", default="category", help="query metadata key to break down by")
    parser.add_argument(
        "--floors",
        type=int,
        default=6,
        help="relevance floors to replay on sets with unanswerable queries (0: none)",
    )
    parser.add_argument("--embedder", choices=("hash", "local", "gemini"), default="hash")
    parser.add_argument("--json", help="also write the full reports (every query) to this file")
    parser.add_argument(
        "--now",
        type=datetime.fromisoformat,
        help="ISO time relative times in questions are read against (default: the clock)",
    )
    args = parser.parse_args()
    settings = _settings(args.config, args.set)
    modes = _modes(args.modes)
    datasets = _only_users(_datasets(args.dataset), args.users)
    embedder = _embedder(args.embedder)
    if settings:
        print(f"settings: {json.dumps(settings, sort_keys=True)}")
    started = time.perf_counter()
    with common.postgres_server(args.database_url, prefix="adk-memory-recall-") as url:
        reports = asyncio.run(_run(url, datasets, modes, settings, embedder, args.now))
    _print(datasets, reports, args.by, args.floors, time.perf_counter() - started)
    if isinstance(embedder, HashEmbedder) and any(m != "text" for m in modes):
        print(f"note: {HASH_NOTE}")
    if args.json:
        everything = [report.model_dump(mode="json") for report in reports]
        Path(args.json).write_text(json.dumps(everything, indent=2), encoding="utf-8")
        common.progress(f"per-query results written to {args.json}")


if __name__ == "__main__":
    main()
