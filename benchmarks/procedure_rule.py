"""Procedure rule benchmark: how much of one user's self-description the procedure rule would let
other users see by coincidence, on real chats (no database, no model).

Why: a procedure is shown to other users when every token of it is exempt or held by at least
two of the users whose sessions support it (`adk_memory.memory.procedure_rule`). Two users who
talk about the same things share ordinary words, so a copied personal fact can pass whole when
its words are common ones. This measures that on text nobody here wrote: the validation split
of Synthetic-Persona-Chat (`../shared/data/synthetic-persona-chat/valid.csv`, see its README).

Setup: each row is one person (its "user 1": their persona sentences and their turns of the
chat). For every row A, two rows a third and two thirds of the file away, B and C, are the
other supporters (neighbouring rows often share a persona: they would be one person twice). A
procedure that copied each of A's persona sentences verbatim is judged against A, B and C's
material (their persona sentences and turns), as the rule judges it: the share of A's persona
sentences that would be shown whole to a fourth user, and the share of their non-exempt tokens
that would be (the rest are masked or hidden).

    python benchmarks/procedure_rule.py [--data PATH] [--limit 1000]

It skips cleanly when the data is absent.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

from adk_memory.memory.procedure_rule import material, unsafe, visible_to

DATA = (
    Path(os.environ.get("ADK_MEMORY_SHARED_DATA", "/work/shared/data")) / "synthetic-persona-chat"
)
"""The data folder (`../shared/data/` of the repository's checkout; `$ADK_MEMORY_SHARED_DATA`)."""


def people(path: Path, limit: int) -> list[tuple[list[str], str]]:
    """(persona sentences, everything the person said and their persona), one per row."""
    found: list[tuple[list[str], str]] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            persona = [line.strip() for line in row["user 1 personas"].splitlines() if line.strip()]
            turns = [
                line.removeprefix("User 1:").strip()
                for line in row["Best Generated Conversation"].splitlines()
                if line.startswith("User 1:")
            ]
            found.append((persona, " ".join([*persona, *turns])))
            if len(found) == limit:
                break
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA / "valid.csv")
    parser.add_argument("--limit", type=int, default=1000)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"No data at {args.data}: skipped.")
        return 0
    rows = people(args.data, args.limit)
    held = [frozenset(material(text)) for _, text in rows]
    sentences = shown_sentences = tokens = shown_tokens = 0
    for a, (persona, _) in enumerate(rows):
        b, c = (a + len(rows) // 3) % len(rows), (a + 2 * len(rows) // 3) % len(rows)
        support = {"a": held[a], "b": held[b], "c": held[c]}
        for sentence in persona:
            sentences += 1
            shown_sentences += visible_to([sentence], support, None)
            own = unsafe(sentence)
            tokens += len(own)
            shown_tokens += sum(1 for h in own if h in held[b] or h in held[c])
    print(f"Data:       {args.data} ({len(rows)} people, 3 supporters each)")
    print(f"Sentences:  {shown_sentences}/{sentences} persona sentences shown whole to others")
    print(f"            ({100 * shown_sentences / sentences:.1f}%)")
    print(f"Tokens:     {shown_tokens}/{tokens} non-exempt persona tokens shown to others")
    print(f"            ({100 * shown_tokens / tokens:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
