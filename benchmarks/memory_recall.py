"""Memory retrieval-quality benchmark: Recall@K and MRR of `PostgresMemoryService` in each
retrieval mode (full-text, vector, hybrid) on a dataset of facts and paraphrased questions.

Why: retrieval is the part of a memory service that decides whether an agent remembers at all,
and its modes trade off differently (full-text needs shared words, vectors need a good embedder,
hybrid fuses both). This script puts figures on that, on the shipped synthetic dataset or on any
dataset in the format of `adk_memory.eval.retrieval` (e.g. converted LoCoMo or LongMemEval).

    python benchmarks/memory_recall.py [--dataset PATH] [--database-url URL]
                                       [--embedder hash|gemini] [--json PATH]

With no `--database-url` the embedded PostgreSQL is started in a temporary data directory. The
run uses a fresh schema (`adk_memory_eval_<random>`, dropped at the end), so the embedder's
vector size never clashes with a schema already in use, and the harness purges what it stored.

`--embedder hash` (the default) uses `HashEmbedder`: words hashed into 64 buckets. Its vectors
are lexical, not semantic ("pet" and "cat" are unrelated to it), so its vector and hybrid
figures are a floor, not what a real embedding model achieves. `--embedder gemini` uses
`GeminiEmbedder` (768 dimensions) and needs GOOGLE_API_KEY (or GEMINI_API_KEY).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from pathlib import Path

import _common as common
from sqlalchemy.ext.asyncio import create_async_engine

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.eval import (
    DatasetError,
    RetrievalDataset,
    evaluate,
    format_report,
    load_dataset,
    load_synthetic_dataset,
)
from adk_memory.memory.embeddings import Embedder
from adk_memory.testing import HashEmbedder

HASH_NOTE = (
    "HashEmbedder vectors are lexical (hashed words), not semantic: vector and hybrid figures "
    "here are a floor; use --embedder gemini for a real embedding model."
)


def _embedder(name: str) -> Embedder:
    if name == "hash":
        return HashEmbedder()
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


def _progress(mode: str, stage: str, done: int, total: int) -> None:
    if done == total:
        print(f"  {mode}: {stage} done ({total})", file=sys.stderr)


async def _run(
    args: argparse.Namespace, url: str, dataset: RetrievalDataset, embedder: Embedder
) -> None:
    schema = f"adk_memory_eval_{uuid.uuid4().hex[:8]}"
    engine = create_async_engine(url, pool_size=10)
    try:

        def service(config: MemoryBankConfig) -> PostgresMemoryService:
            return PostgresMemoryService(
                engine=engine, schema=schema, embedder=embedder, config=config
            )

        print(f"Evaluating {dataset.name!r} in schema {schema}...", file=sys.stderr)
        report = await evaluate(service, dataset, progress=_progress)
    finally:
        await engine.dispose()
        await common.admin(url, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    print(format_report(report))
    if isinstance(embedder, HashEmbedder):
        print(f"note: {HASH_NOTE}")
    if args.json:
        Path(args.json).write_text(report.model_dump_json(indent=2), encoding="utf-8")
        print(f"Per-query results written to {args.json}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", help="dataset JSON (default: the shipped synthetic one)")
    parser.add_argument("--database-url", help="PostgreSQL URL (default: embedded, temporary)")
    parser.add_argument("--embedder", choices=("hash", "gemini"), default="hash")
    parser.add_argument("--json", help="also write the full report (every query) to this file")
    args = parser.parse_args()
    try:
        dataset = load_dataset(args.dataset) if args.dataset else load_synthetic_dataset()
    except DatasetError as exc:
        sys.exit(str(exc))
    embedder = _embedder(args.embedder)
    with common.postgres_server(args.database_url or None, prefix="adk-memory-recall-") as url:
        asyncio.run(_run(args, url, dataset, embedder))


if __name__ == "__main__":
    main()
