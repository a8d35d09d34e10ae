"""Builds `adk_memory/eval/data/long_conversations.json`, the long-conversation retrieval set,
from the hand-written conversations in `benchmarks/long_conversations/*.txt`.

Why: the "Find more" work of issue 14 (lexical scoring, query rewriting, a relevance floor,
fusion weights) needs a measuring stick that looks like what an agent remembers: many dated
sessions of chit-chat between two people, questions whose evidence is one or more turns, and
questions nothing in the conversation answers. LoCoMo is the public benchmark of that kind; its
licence and size make it a download, not package data, so this set is written in its shape.

Owns: the conversation file format, padding each session with a greeting and a goodbye (the
small talk every real session opens and closes with, picked deterministically so that no
session of a conversation repeats another's), and the checks the dataset must pass before it is
written. It never writes anything but the output file, and the output only depends on the
input files (same files, same bytes).

Conversation file format (one or more conversations per file; `#` lines are comments)::

    === <id> | A=<name> | B=<name> | friends|assistant
    --- YYYY-MM-DD                     a session and its date
    A: text                            a turn by speaker A
    B: {key} text                      a tagged turn: the key is unique in its conversation;
                                       untagged turns, and tagged ones no question names
                                       (e.g. the superseded statement of a knowledge update),
                                       are distractors
    ??? <category> | key, key | question   a question and its evidence (no keys: no-answer)

Each memory is one turn, id ``<conversation>:D<session>:<turn>`` (LoCoMo's dia_id shape), fact
``[<session date>] <speaker>: <text>``, metadata ``{"session": n, "date": "YYYY-MM-DD",
"speaker": name}``. Each conversation is one scope ``{"app_name": "long-conversations",
"user_id": <id>}``. Question categories: single-hop, multi-hop (2+ evidence turns), temporal (the
answer depends on the session dates), paraphrase (few words shared with the evidence),
knowledge-update (the latest statement is the answer; earlier ones are distractors) and
no-answer (marked `"unanswerable": true`).

    python benchmarks/make_long_conversations.py [--check]

`--check` rebuilds in memory and fails if the shipped file differs (used by the tests).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCES = Path(__file__).resolve().parent / "long_conversations"
OUTPUT = ROOT / "adk_memory" / "eval" / "data" / "long_conversations.json"
APP_NAME = "long-conversations"

CATEGORIES = ("single-hop", "multi-hop", "temporal", "paraphrase", "knowledge-update")
NO_ANSWER = "no-answer"
MIN_SESSIONS = 8
MIN_TURNS = 120

# Greetings and goodbyes: (first speaker's line, other's line). {a} is the first speaker of the
# pair, {b} the other. A conversation's sessions use distinct pairs.
OPENERS = {
    "friends": [
        ("Hey {b}! Got a minute?", "Always. What's new?"),
        ("Hi {b}, how's your week going?", "Busy but good. You?"),
        ("Morning! Coffee in hand, ready to catch up.", "Ha, same. Go on then."),
        ("{b}! Sorry I've been quiet.", "No worries, I know how it is. How are you?"),
        ("Hello hello. Are you around?", "I'm here, just finished dinner."),
        ("Hey, it's been ages!", "It really has. Tell me everything."),
        ("Hi! Quick catch-up before the weekend?", "Perfect timing, I'm on the sofa."),
        ("Good evening, {b}.", "Evening! I was just thinking about you."),
        ("Are you free to chat for a bit?", "Sure, what's up?"),
        ("Hi {b}! Guess what.", "What? Spill."),
    ],
    "assistant": [
        ("Hi, it's {a} again.", "Welcome back, {a}. What can I help with today?"),
        ("Hello! Do you have a moment?", "Of course. What's on your mind?"),
        ("Morning. I need a hand with a few things.", "Good morning, {a}. Let's go through them."),
        ("Hey, quick question.", "Sure, ask away."),
        ("Hi there.", "Hi {a}, nice to hear from you. How are things?"),
        ("Hello again, it's been a while.", "Good to see you back. What's new?"),
        ("Can I think out loud with you for a bit?", "Please do, I'm listening."),
        ("Good evening.", "Good evening, {a}. How can I help?"),
        ("Hi! I have an update and a question.", "Great, let's start with the update."),
        ("Hello, are you there?", "I'm here. What do you need?"),
    ],
}
CLOSERS = {
    "friends": [
        ("Anyway, I should get going. Talk soon!", "Bye! Say hi to everyone."),
        ("I have to run, dinner's burning.", "Go! Speak next week."),
        ("Okay, bedtime for me. Good night!", "Night night, sleep well."),
        ("Right, back to work I go.", "Good luck, catch you later."),
        ("This was lovely, let's not leave it so long.", "Deal. Take care!"),
        ("Got to go, my phone is about to die.", "Ha, classic. Bye for now."),
        ("Let's pick this up another day.", "Definitely. Have a good one."),
        ("I'm off, someone needs a walk.", "Enjoy, talk later!"),
        ("Okay, that's enough gossip for one evening.", "Never enough. Bye!"),
        ("Speak soon, and look after yourself.", "You too, {a}."),
    ],
    "assistant": [
        ("Thanks, that's all for now.", "You're welcome, {a}. Good luck with it."),
        ("Great, that helps a lot.", "Glad to hear it. Come back any time."),
        ("Okay, I'll leave it there for today.", "Sounds good. Talk soon."),
        ("Perfect, thanks.", "Anytime. Have a good evening."),
        ("That's everything, I think.", "Great. I'll be here when you need me."),
        ("Thanks for listening.", "Of course. Take care, {a}."),
        ("I'd better go and actually do it now.", "Ha, good plan. Good luck!"),
        ("Brilliant, speak later.", "Bye for now."),
        ("Cheers, very useful.", "Happy to help."),
        ("Right, signing off.", "Have a good one, {a}."),
    ],
}

_TAG = re.compile(r"^\{([a-z0-9-]+)\}\s*")
_TURN = re.compile(r"^([AB]):\s+(.+)$")


@dataclass
class Turn:
    speaker: str  # "A" or "B"
    text: str
    key: str | None = None


@dataclass
class Session:
    date: date
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Question:
    category: str
    keys: list[str]
    text: str


@dataclass
class Conversation:
    id: str
    names: dict[str, str]
    style: str
    source: str
    sessions: list[Session] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def parse(path: Path) -> list[Conversation]:
    """The conversations of one source file (format in the module docs)."""
    conversations: list[Conversation] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        where = f"{path.name}:{number}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("=== "):
            cid, a, b, style = (part.strip() for part in line[4:].split("|"))
            names = {"A": a.removeprefix("A="), "B": b.removeprefix("B=")}
            conversations.append(Conversation(cid, names, style, where))
            continue
        if not conversations:
            raise SystemExit(f"{where}: text before the first '=== ' line")
        conversation = conversations[-1]
        if line.startswith("--- "):
            conversation.sessions.append(Session(date.fromisoformat(line[4:].strip())))
        elif line.startswith("??? "):
            category, keys, text = (part.strip() for part in line[4:].split("|", 2))
            found = [k.strip() for k in keys.split(",") if k.strip()]
            conversation.questions.append(Question(category, found, text))
        elif match := _TURN.match(line):
            text = match.group(2)
            tag = _TAG.match(text)
            turn = Turn(match.group(1), text[tag.end() :] if tag else text)
            turn.key = tag.group(1) if tag else None
            conversation.sessions[-1].turns.append(turn)
        else:
            raise SystemExit(f"{where}: not a turn, session, question or comment: {line!r}")
    return conversations


def padded(conversation: Conversation, index: int, session: Session) -> list[Turn]:
    """The session with a greeting before it and a goodbye after it (see the module docs)."""
    first = session.turns[0].speaker
    last = session.turns[-1].speaker
    other = {"A": "B", "B": "A"}
    offset = sum(map(ord, conversation.id))
    opener = OPENERS[conversation.style][(offset + index) % len(OPENERS[conversation.style])]
    closer = CLOSERS[conversation.style][(offset + 3 * index) % len(CLOSERS[conversation.style])]
    if conversation.style == "assistant":  # the user (A) opens and closes
        first, last = "A", "B"

    def pair(lines: tuple[str, str], speaker: str) -> list[Turn]:
        names = {"a": conversation.names[speaker], "b": conversation.names[other[speaker]]}
        return [
            Turn(speaker, lines[0].format(**names)),
            Turn(other[speaker], lines[1].format(**names)),
        ]

    return [*pair(opener, first), *session.turns, *pair(closer, other[last])]


def build(conversations: list[Conversation]) -> dict[str, Any]:
    """The dataset, after checking every conversation (fails with every problem listed)."""
    problems: list[str] = []
    memories: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for conversation in conversations:
        scope = {"app_name": APP_NAME, "user_id": conversation.id}
        ids: dict[str, str] = {}
        turns = 0
        dates = [s.date for s in conversation.sessions]
        if dates != sorted(set(dates)):
            problems.append(f"{conversation.id}: session dates are not strictly increasing")
        for index, session in enumerate(conversation.sessions):
            for number, turn in enumerate(padded(conversation, index, session), start=1):
                memory_id = f"{conversation.id}:D{index + 1}:{number}"
                speaker = conversation.names[turn.speaker]
                memories.append(
                    {
                        "id": memory_id,
                        "scope": scope,
                        "fact": f"[{session.date:%-d %B %Y}] {speaker}: {turn.text}",
                        "metadata": {
                            "session": index + 1,
                            "date": session.date.isoformat(),
                            "speaker": speaker,
                        },
                    }
                )
                turns += 1
                if turn.key is not None:
                    if turn.key in ids:
                        problems.append(f"{conversation.id}: key {turn.key!r} tags two turns")
                    ids[turn.key] = memory_id
        if len(conversation.sessions) < MIN_SESSIONS or turns < MIN_TURNS:
            problems.append(
                f"{conversation.id}: {len(conversation.sessions)} sessions and {turns} turns "
                f"(at least {MIN_SESSIONS} and {MIN_TURNS})"
            )
        for number, question in enumerate(conversation.questions, start=1):
            where = f"{conversation.id} question {number} ({question.text!r})"
            query: dict[str, Any] = {
                "id": f"{conversation.id}:q{number}",
                "scope": scope,
                "query": question.text,
                "relevant": [],
                "metadata": {"category": question.category},
            }
            if question.category == NO_ANSWER:
                if question.keys:
                    problems.append(f"{where}: a no-answer question has no evidence")
                query["unanswerable"] = True
            elif question.category not in CATEGORIES:
                problems.append(f"{where}: unknown category {question.category!r}")
            elif not question.keys or (question.category == "multi-hop") != (
                len(question.keys) > 1
            ):
                problems.append(f"{where}: multi-hop questions, and only they, have 2+ keys")
            for key in question.keys:
                if key not in ids:
                    problems.append(f"{where}: no turn is tagged {key!r}")
                else:
                    query["relevant"].append(ids[key])
            queries.append(query)
    if problems:
        raise SystemExit("\n".join(problems))
    counts: dict[str, int] = {}
    for query in queries:
        category = query["metadata"]["category"]
        counts[category] = counts.get(category, 0) + 1
    summary = ", ".join(f"{counts.get(c, 0)} {c}" for c in (*CATEGORIES, NO_ANSWER))
    return {
        "name": "long-conversations",
        "description": (
            f"{len(conversations)} long conversations ({len(memories)} turns in "
            f"{sum(len(c.sessions) for c in conversations)} dated sessions, one scope each), "
            "LoCoMo-like: one memory per turn, fact '[<session date>] <speaker>: <text>'. "
            f"{len(queries)} questions with turn-level evidence: {summary} (marked "
            "unanswerable). Distractors share words with questions without answering them, and "
            "recurring topics change over time (the latest statement answers). Hand-written "
            "for adk-memory's issue 14 (no real people); built by "
            "benchmarks/make_long_conversations.py."
        ),
        "memories": memories,
        "queries": queries,
    }


def render(dataset: dict[str, Any]) -> str:
    """One memory or query per line: small diffs, still plain JSON."""
    head = {k: v for k, v in dataset.items() if k not in ("memories", "queries")}
    lines = [json.dumps(head, ensure_ascii=False, indent=2)[:-2] + ","]
    for key in ("memories", "queries"):
        items = [f"    {json.dumps(item, ensure_ascii=False)}" for item in dataset[key]]
        lines.append(
            f'  "{key}": [\n' + ",\n".join(items) + "\n  ]" + ("," if key == "memories" else "")
        )
    return "\n".join(lines) + "\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the shipped file is stale")
    args = parser.parse_args()
    conversations = [c for path in sorted(SOURCES.glob("*.txt")) for c in parse(path)]
    text = render(build(conversations))
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            sys.exit(f"{OUTPUT} is stale: run python benchmarks/make_long_conversations.py")
        return
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
