"""The dialogue-turn weight (`RetrievalConfig.turn_length_prior`) on public persona chats:
text nobody here wrote (Synthetic-Persona-Chat, `../shared/data`, CC BY 4.0).

Each conversation's turns are stored as memories of one scope (metadata `speaker`, as an
imported transcript's); each persona sentence is a query, and its evidence is that speaker's
turns sharing at least two content words with it (lexical labels: crude, the same for both
settings). Prints the share of queries with evidence in the top k, weight off against on.

    python benchmarks/turn_weight_persona.py [--conversations 300] [--top-k 1]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import re
from pathlib import Path

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import RetrievalConfig
from adk_memory.db.embedded import temporary_server
from adk_memory.testing import HashEmbedder

DATA = Path(__file__).resolve().parents[2] / "shared/data/synthetic-persona-chat/valid.csv"
_STOP = set(
    [
        "i",
        "a",
        "an",
        "the",
        "to",
        "my",
        "me",
        "is",
        "am",
        "are",
        "was",
        "and",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "have",
        "has",
        "do",
        "like",
        "love",
        "it",
        "be",
    ]
)


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z']+", text.lower()) if w not in _STOP and len(w) > 2}


async def recall(rows: list[dict[str, str]], prior: float, top_k: int) -> tuple[int, int]:
    """(queries with evidence in the top k, queries) with the weight at `prior`."""
    hits = total = 0
    with temporary_server("persona-") as url:
        config = MemoryBankConfig(retrieval=RetrievalConfig(turn_length_prior=prior))
        async with PostgresMemoryService(
            url, embedder=HashEmbedder(64), run_worker=False, config=config
        ) as memory:
            for i, row in enumerate(rows):
                scope = {"app_name": "persona", "user_id": f"c{i}"}
                turns = [t.split(": ", 1) for t in row["Best Generated Conversation"].splitlines()]
                turns = [t for t in turns if len(t) == 2]
                for who, text in turns:
                    await memory.create_memory(text, scope, metadata={"speaker": who})
                for column, who in (("user 1 personas", "User 1"), ("user 2 personas", "User 2")):
                    for fact in row[column].splitlines():
                        words = content_words(fact)
                        gold = {
                            text
                            for speaker, text in turns
                            if speaker == who and len(words & content_words(text)) >= 2
                        }
                        if len(words) < 2 or not gold:
                            continue
                        found = await memory.retrieve_memories(
                            scope, search_query=fact, top_k=top_k
                        )
                        total += 1
                        hits += bool(gold & {r.memory.fact for r in found})
    return hits, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--top-k", type=int, default=1)
    args = parser.parse_args()
    if not DATA.exists():
        raise SystemExit(f"{DATA} is absent: nothing to measure.")
    rows = list(csv.DictReader(DATA.open(encoding="utf-8")))[: args.conversations]
    for prior in (0.0, 1.0):
        hits, total = asyncio.run(recall(rows, prior, args.top_k))
        share = f"{hits}/{total} = {hits / total:.3f}"
        print(f"turn_length_prior={prior}: evidence in the top {args.top_k}: {share}")


if __name__ == "__main__":
    main()
