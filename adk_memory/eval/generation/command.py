"""`python -m adk_memory.eval.generation`: the golden set against a real model, on the embedded
PostgreSQL in a temporary directory.

Running it
----------

``python -m adk_memory.eval.generation [--model NAME] [--dataset PATH] [--judge]
[--judge-model NAME] [--embedder none|gemini] [--json PATH]`` evaluates the shipped golden set
(or a dataset file) with a real model on the embedded PostgreSQL in a temporary directory, and
prints the report. It needs a model key (Gemini:
GOOGLE_API_KEY or GEMINI_API_KEY, or Vertex AI). In tests, drive `evaluate_generation` with
`adk_memory.testing.ScriptedLlm` instead.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from ...config import GenerationConfig
from ...memory.generation import resolve_llm
from ...memory.service import PostgresMemoryService
from ...settings.variables import environment, gemini_credentials
from .._datasets import DatasetError
from .dataset import GenerationDataset, load_generation_dataset, load_golden_dataset
from .harness import evaluate_generation
from .matching import llm_judge_matcher
from .report import format_generation_report

NO_KEY_MESSAGE = """\
No model credentials: {model!r} is a Gemini model, and neither GOOGLE_API_KEY nor GEMINI_API_KEY
nor GOOGLE_GENAI_USE_VERTEXAI is set.

  export GOOGLE_API_KEY=...        # a Gemini API key (https://aistudio.google.com/apikey)
  # or Vertex AI: GOOGLE_GENAI_USE_VERTEXAI=true GOOGLE_CLOUD_PROJECT=... GOOGLE_CLOUD_LOCATION=...

The harness itself needs no key: drive evaluate_generation with adk_memory.testing.ScriptedLlm
(as tests/test_eval_generation.py does) to check it without a model."""


def _credentials_problem(model: str) -> str | None:
    """Why `model` cannot run here, when that can be told up front (Gemini models without a key
    or Vertex AI settings); None otherwise (other models fail on their first call)."""
    if model.startswith(("gemini", "models/gemini")) and not gemini_credentials(environment()):
        return NO_KEY_MESSAGE.format(model=model)
    return None


def _print_progress(case_id: str, done: int, total: int) -> None:
    print(f"  [{done}/{total}] {case_id}", file=sys.stderr)


async def _run_cli(args: argparse.Namespace, dataset: GenerationDataset, url: str) -> int:
    embedder = None
    if args.embedder == "gemini":
        from ...memory.embeddings import GeminiEmbedder

        embedder = GeminiEmbedder()
    service = PostgresMemoryService(url, llm=args.model, embedder=embedder)
    try:
        matcher = llm_judge_matcher(args.judge_model or args.model) if args.judge else None
        print(f"Evaluating {dataset.name!r} with {args.model}...", file=sys.stderr)
        report = await evaluate_generation(
            service, dataset, matcher=matcher, progress=_print_progress
        )
    finally:
        await service.close()
    print(format_generation_report(report))
    if args.json:
        Path(args.json).write_text(report.model_dump_json(indent=2), encoding="utf-8")
        print(f"Full report written to {args.json}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m adk_memory.eval.generation`: evaluate a real model on the embedded PostgreSQL
    (a temporary data directory, removed afterwards). Returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m adk_memory.eval.generation",
        description="Score memory generation against a golden set: precision, recall, F1.",
    )
    parser.add_argument(
        "--model",
        default=GenerationConfig().model,
        help="generation model (default: %(default)s)",
    )
    parser.add_argument("--dataset", help="dataset JSON (default: the shipped golden set)")
    parser.add_argument(
        "--judge",
        action="store_true",
        help="match facts with an LLM judge instead of the lexical matcher",
    )
    parser.add_argument("--judge-model", help="the judge's model (default: --model)")
    parser.add_argument(
        "--embedder",
        choices=("none", "gemini"),
        default="none",
        help="embedder for consolidation candidates (default: none, full-text search)",
    )
    parser.add_argument("--json", help="also write the full report (every case) to this file")
    args = parser.parse_args(argv)
    try:
        dataset = load_generation_dataset(args.dataset) if args.dataset else load_golden_dataset()
    except (DatasetError, OSError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    models = [args.model]
    if args.judge:
        models.append(args.judge_model or args.model)
    if args.embedder == "gemini":
        models.append("gemini-embedding")
    for model in models:
        problem = _credentials_problem(model)
        if problem is not None:
            print(problem, file=sys.stderr)
            return 2
    try:
        resolve_llm(args.model)
    except ValueError as exc:  # a name ADK's model registry does not know
        print(f"--model {args.model!r}: {exc}", file=sys.stderr)
        return 2
    from ...db.embedded import temporary_server

    with temporary_server("adk-memory-eval-gen-") as url:
        return asyncio.run(_run_cli(args, dataset, url))
