"""Procedures benchmark: what the procedures section adds to the memory-context callback's
cache miss, and what learning a playbook costs, on one PostgreSQL.

Why: the `<PROCEDURES>` section is one more search (in the app's scope) on every invocation
that turns it on; it runs concurrently with the user's own retrieval, so it should add little to
the callback's latency. ADK has no procedural memory, so the baseline is our own callback with
procedures off (`procedure_max_tokens=0`, the default); the ratio on/off is printed.

Setup: one user holds `--memories` (1,000) facts; the app holds `--procedures` (300) playbooks,
each learned through `learn_procedure` from the sessions of three users (the default
`procedure_min_users`: only then is a procedure the app's) by the in-process worker (a
`ScriptedLlm` writes one playbook per session, creates it at the first consolidation and
updates it at the next two), so the learning time is the job pipeline's (queue, anonymisation,
guard, candidates masked for the user, two scripted model calls, support recorded, one
transaction), not a model's. The user who asks supports none of them: the callback's
procedure search is `retrieve_procedures` (the app's public procedures and the user's own,
two searches). Vectors come from `HashEmbedder` (`--dims`, 768), computed in
the call (a fraction of a millisecond). Each measured call is a fresh invocation (a cache miss),
built before the clock starts; the two configurations alternate in rounds of 10 after 20
warm-up calls each.

    python benchmarks/procedures.py [--database-url URL] [--memories 1000] [--procedures 300]
        [--dims 768] [--calls 300]
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from dataclasses import dataclass

import _common as common
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.genai import types

from adk_memory import MemoryContextCallback, MemoryFilter, PostgresMemoryService
from adk_memory.testing import HashEmbedder, ScriptedLlm

BENCH_DATABASE = "adk_memory_bench_procedures"
APP, USER = "bench_app", "bench_user"
TASKS = ("rebook", "refund", "upgrade", "cancel", "reschedule", "transfer", "claim", "renew")
OFF, ON = "callback, procedures off", "callback, procedures on (250 tokens)"
SUPPORTERS = 3
"""Users whose sessions support each procedure: the default `procedure_min_users`."""


@dataclass(frozen=True)
class Plan:
    memories: int
    procedures: int
    dims: int
    calls: int


_CANDIDATE = re.compile(r"^- id: (\S+) \|.*\| ([^|]*)$", re.MULTILINE)


def _answer(request: LlmRequest) -> str:
    """The scripted model: one playbook per session (named by its task), and at consolidation
    an UPDATE of the candidate for the same task (another user's session of it) to the new
    playbook, or a CREATE when there is none."""
    instruction = str(request.config.system_instruction or "")
    text = " ".join(p.text or "" for c in request.contents for p in c.parts or ())
    if "playbooks just learned" in instruction:
        new = re.split(r"1\. \(procedure[^)]*\) ", text.split("## New facts", 1)[1], maxsplit=1)
        fact = new[1].split("\n")[0]
        task = fact.split(" a booking", 1)[0].removeprefix("Task: ")
        same = [i for i, shown in _CANDIDATE.findall(text) if f"Task: {task} a" in shown]
        if same:
            update = {"action": "UPDATE", "fact_numbers": [1], "target_id": same[0], "fact": fact}
            return json.dumps({"operations": [update]})
        return json.dumps({"operations": [{"action": "CREATE", "fact_numbers": [1], "fact": fact}]})
    task = next(word for word in text.split() if word.startswith("task-"))
    playbook = {
        "task": f"{task.replace('-', ' ')} a booking",
        "when_to_use": f"The user asks to {task.split('-')[1]} a booking",
        "steps": [f"Ask for the {task} reference", f"Run the {task} tool", "Confirm the result"],
        "pitfalls": [f"Check the {task} fare rules first"],
    }
    return json.dumps({"playbooks": [playbook]})


def _said(author: str, text: str) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id="i",
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


def _reply(task: str) -> str:
    """The agent's answer: the playbook's words are said in the session (a procedure is the
    app's only in words its users' sessions hold)."""
    return (
        f"When the user asks to {task.split('-')[1]} a booking, I ask for the {task} "
        f"reference, run the {task} tool and confirm the result; I check the {task} fare rules "
        "first."
    )


async def learn(service: PostgresMemoryService, count: int) -> float:
    """`count` procedures, each learned from the sessions of `SUPPORTERS` users (so each is the
    app's: README, "Procedural memory"); seconds per session learned."""
    started = time.perf_counter()
    for n in range(count):
        task = f"task-{TASKS[n % len(TASKS)]}-{n}"
        for supporter in range(SUPPORTERS):
            session = Session(
                id=f"s{n}-{supporter}",
                app_name=APP,
                user_id=f"u{n}-{supporter}",
                events=[_said("user", f"Please {task} my booking"), _said("agent", _reply(task))],
            )
            await service.learn_procedure(session)
            await service.worker.run_until_idle()  # each one consolidates into the last
    return (time.perf_counter() - started) / (count * SUPPORTERS)


async def measure(service: PostgresMemoryService, plan: Plan) -> dict[str, list[float]]:
    sessions = InMemorySessionService()  # type: ignore[no-untyped-call]
    session = Session(id="bench", app_name=APP, user_id=USER)
    callbacks = {
        OFF: MemoryContextCallback(service),
        ON: MemoryContextCallback(service, procedure_max_tokens=250),
    }
    samples: dict[str, list[float]] = {name: [] for name in callbacks}

    async def once(name: str, index: int) -> float:
        text = f"I need to {TASKS[index % len(TASKS)]} my booking {index}"
        message = types.Content(role="user", parts=[types.Part(text=text)])
        invocation = InvocationContext(
            session_service=sessions,
            memory_service=service,
            invocation_id=Event.new_id(),
            session=session,
            user_content=message,
        )
        request = LlmRequest(contents=[message], config=types.GenerateContentConfig())
        seconds, _ = await common.timed(callbacks[name](CallbackContext(invocation), request))
        shown = "<PROCEDURES>" in str(request.config.system_instruction or "")
        common.expect(shown == (name == ON), f"{name}: the procedures section as configured")
        return seconds

    for name in callbacks:
        for i in range(20):
            await once(name, i)
    for start in range(0, plan.calls, 10):
        order = list(callbacks) if start % 20 == 0 else list(reversed(callbacks))
        for name in order:
            for i in range(start, min(start + 10, plan.calls)):
                samples[name].append(await once(name, i))
    return samples


async def bench(url: str, embedded: bool, plan: Plan) -> None:
    print(f"Server:     {common.server_label(url, embedded)}")
    print(f"Load:       {common.load_average()} at start")
    bench_url = await common.fresh_database(url, BENCH_DATABASE)
    service = PostgresMemoryService(
        bench_url,
        embedder=HashEmbedder(plan.dims),
        llm=ScriptedLlm(responder=_answer),
        run_worker=False,  # `learn` runs each session's job before the next one's
    )
    try:
        user = {"app_name": APP, "user_id": USER}
        facts = [
            f"The user's note {n} about {TASKS[n % len(TASKS)]}." for n in range(plan.memories)
        ]
        for start in range(0, len(facts), 500):
            await service.create_memories(facts[start : start + 500], user)
        common.progress(f"learning {plan.procedures} procedures")
        per_procedure = await learn(service, plan.procedures)
        procedures = MemoryFilter(memory_type="procedure")
        page = await service.list_memories({"app_name": APP}, filter=procedures, page_size=1000)
        common.expect(len(page.memories) == plan.procedures, "every procedure was learned")
        samples = await measure(service, plan)
    finally:
        await service.close()
        await common.drop_database(url, BENCH_DATABASE)
    learning = f"{per_procedure * 1000:.1f} ms per session"
    print(
        f"\nLearning:   {learning} (queued to committed, scripted model, {SUPPORTERS} users each)"
    )
    rows = [
        [name, common.ms(common.percentile(s, 50)), common.ms(common.percentile(s, 95))]
        for name, s in samples.items()
    ]
    print(
        f"\nCallback cache miss ({plan.calls} calls each, {plan.memories} facts, "
        f"{plan.procedures} procedures, {plan.dims} dims):"
    )
    common.table(["configuration", "p50 ms", "p95 ms"], rows)
    off, on = (common.percentile(samples[n], 50) for n in (OFF, ON))
    print(f"\nRatio on/off (p50): {on / off:.2f}")
    print(f"Load:       {common.load_average()} at end")


def main(argv: list[str] | None = None) -> int:
    parser = common.argument_parser(__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--procedures", type=int, default=300)
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args(argv)
    plan = Plan(args.memories, args.procedures, args.dims, args.calls)
    with common.postgres_server(args.database_url) as url:
        asyncio.run(bench(url, args.database_url is None, plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
