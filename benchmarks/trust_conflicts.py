"""Trust conflicts: a scripted conflict set run through real memory generation, checking that
the trust rule keeps the right value in every case.

Why: the whitepaper's provenance rule (sources ranked bootstrapped > explicit user input >
implicit conversation > tool output; conflicts resolved by trust, then recency; a less trusted
source wins only when an independent source corroborates it; a forget request always wins) must
hold whatever the consolidation model says. Here the model always sides with the newest fact
(it UPDATEs or DELETEs the stored memory every time, the natural reading of "new facts win"), so
every right answer the run reports is the code's rule at work, not the prompt's.

Each case is one user's scope: a stored memory of one source type, optionally a first attempt
to change it from another session (the corroboration), then a conversation (or, for
bootstrapped data, direct facts) that contradicts it. The expected value is computed from the
rule above, independently of adk-memory's code; the run reads the memory back. The same cases
then run under `conflict_strategy="recency"` (the model's decision stands, as in ADK's built-in
services, which keep no provenance): the baseline that shows what the rule changes.

    python benchmarks/trust_conflicts.py [--database-url URL]

Exit status 0 when the trust rule picks the right value in every case, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from dataclasses import dataclass

import _common as common
from _common import load_average, table
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.session import Session
from google.genai import types

from adk_memory import MemoryBankConfig, PostgresMemoryService
from adk_memory.config import TrustConfig
from adk_memory.memory import SourceType
from adk_memory.testing import ScriptedLlm

DATABASE = "adk_memory_bench_trust"
APP = "trust-bench"

# How extraction names each kind of source, and the rule's ranks (written out here, apart from
# `adk_memory.memory.policy.trust`, so the check does not grade the code by itself).
KINDS = {
    "bootstrapped": SourceType.BOOTSTRAPPED,
    "explicit": SourceType.USER_INPUT,
    "implicit": SourceType.IMPLICIT,
    "tool": SourceType.TOOL_OUTPUT,
}
RANK = {"bootstrapped": 3, "explicit": 2, "implicit": 1, "tool": 0}

OLD, NEW = "The user lives in Lisbon.", "The user lives in Berlin."


@dataclass(frozen=True)
class Case:
    stored: str
    """The stored memory's source kind."""
    new: str
    """The contradicting source's kind."""
    action: str = "UPDATE"
    prior: str | None = None
    """A first attempt to make the same change: from "another" session, or the "same" one."""
    forget: bool = False

    @property
    def name(self) -> str:
        extra = f", prior attempt from {self.prior} session" if self.prior else ""
        verb = "forget" if self.forget else self.action.lower()
        return f"{self.stored} <- {self.new} {verb}{extra}"

    def expected(self) -> str | None:
        """What the memory holds afterwards by the rule (None: deleted)."""
        wins = self.forget or RANK[self.new] >= RANK[self.stored] or self.prior == "another"
        if not wins:
            return OLD
        return None if self.action == "DELETE" else NEW


def cases() -> list[Case]:
    every = [Case(stored, new) for stored in KINDS for new in KINDS]  # 16: the whole matrix
    every += [Case(stored, new, prior="another") for stored, new in LOWER]
    every += [
        Case("bootstrapped", "explicit", prior="same"),
        Case("explicit", "tool", prior="same"),
    ]
    every += [
        Case("bootstrapped", "tool", action="DELETE"),
        Case("tool", "explicit", action="DELETE"),
        Case("bootstrapped", "implicit", action="DELETE", forget=True),
    ]
    return every


LOWER = [("bootstrapped", "explicit"), ("bootstrapped", "tool"), ("explicit", "implicit")]
"""Less trusted sources tried twice from different sessions: corroborated."""


class NewestWins:
    """The scripted model: extraction reports the case's fact with its source; consolidation
    changes the first memory it is shown, as the newest fact says."""

    def __init__(self) -> None:
        self.case: Case | None = None

    def __call__(self, request: LlmRequest) -> str:
        case = self.case
        assert case is not None
        schema = request.config.response_schema if request.config else None
        if "facts" in getattr(schema, "model_fields", {}):
            fact = "Where the user lives" if case.forget else NEW
            item = {"fact": fact, "topic": "USER_PERSONAL_INFO", "source": case.new}
            return json.dumps({"facts": [{**item, "forget": case.forget}]})
        text = request.contents[-1].parts[0].text or ""
        match = re.search(r"- id: ([0-9a-f-]{36})", text)
        assert match is not None, "the stored memory was not a candidate"
        operation = {"action": case.action, "fact_numbers": [1], "target_id": match.group(1)}
        if case.action == "UPDATE":
            operation["fact"] = NEW
        return json.dumps({"operations": [operation]})


async def contradict(
    service: PostgresMemoryService, case: Case, user: str, session_id: str, turn: int
) -> None:
    """One contradicting generation, run to completion."""
    scope = {"app_name": APP, "user_id": user}
    if case.new == "bootstrapped":  # the application's own data arrives as direct facts
        operation = await service.generate_memories(
            facts=[NEW], scope=scope, source_type=SourceType.BOOTSTRAPPED
        )
    else:
        events = [
            Event(
                author="user",
                invocation_id=f"i{n}",
                timestamp=1000.0 + n,
                content=types.Content(role="user", parts=[types.Part(text=f"turn {n}")]),
            )
            for n in range(turn + 1)
        ]
        session = Session(id=session_id, app_name=APP, user_id=user, events=events)
        operation = await service.generate_memories(session=session)
    await service.worker.run_until_idle()
    done = await service.get_operation(operation.id, operation.scope)
    common.expect(done is not None and done.done and done.error is None, f"{case.name}: {done}")


async def run_case(
    service: PostgresMemoryService, model: NewestWins, case: Case, user: str
) -> tuple[str | None, float, float | None]:
    """(the memory's fact afterwards or None, its confidence before, after)."""
    scope = {"app_name": APP, "user_id": user}
    stored = await service.create_memory(OLD, scope, source_type=KINDS[case.stored], confidence=0.8)
    model.case = case
    if case.prior is not None:
        await contradict(service, case, user, "first", 0)
    before = await service.get_memory(stored.id, scope)
    assert before is not None and before.confidence is not None
    session, turn = ("first", 1) if case.prior == "same" else ("second", 0)
    await contradict(service, case, user, session, turn)
    after = await service.get_memory(stored.id, scope)
    return (
        None if after is None else after.fact,
        before.confidence,
        None if after is None else after.confidence,
    )


async def run_all(url: str, strategy: str) -> list[tuple[Case, str | None, float, float | None]]:
    model = NewestWins()
    config = MemoryBankConfig(trust=TrustConfig(conflict_strategy=strategy))  # type: ignore[arg-type]
    results = []
    async with PostgresMemoryService(
        url, llm=ScriptedLlm(responder=model), config=config, run_worker=False, schema=strategy
    ) as service:
        for n, case in enumerate(cases()):
            results.append((case, *await run_case(service, model, case, f"{strategy}-{n}")))
    return results


def shown(fact: str | None) -> str:
    return "(deleted)" if fact is None else fact.removeprefix("The user lives in ").rstrip(".")


async def bench(database_url: str | None) -> int:
    with common.postgres_server(database_url) as server:
        url = await common.fresh_database(server, DATABASE)
        try:
            start = time.perf_counter()
            trusted = await run_all(url, "trust")
            elapsed = time.perf_counter() - start
            baseline = await run_all(url, "recency")
        finally:
            await common.drop_database(server, DATABASE)
    rows = []
    right = baseline_right = 0
    for (case, fact, before, after), (_, newest, *_) in zip(trusted, baseline, strict=True):
        expected = case.expected()
        ok = fact == expected
        right += ok
        baseline_right += newest == expected
        moved = "" if after is None else f"{before:.2f} -> {after:.2f}"
        rows.append(
            [case.name, shown(expected), shown(fact), moved, "ok" if ok else "WRONG", shown(newest)]
        )
    print(f"Trust conflicts: {len(rows)} cases through real generation (load {load_average()})\n")
    table(["case", "expected", "trust rule", "confidence", "", "model alone"], rows)
    print(
        f"\ntrust rule: {right}/{len(rows)} right; the model alone (recency strategy): "
        f"{baseline_right}/{len(rows)} right; {elapsed / len(rows) * 1000:.0f} ms per case"
    )
    return 0 if right == len(rows) else 1


def main(argv: list[str] | None = None) -> int:
    args = common.argument_parser(__doc__).parse_args(argv)
    return asyncio.run(bench(args.database_url))


if __name__ == "__main__":
    sys.exit(main())
