"""`adk-memory backfill` on the real test database with a scripted model: every stored session
is turned into memories exactly once, across a Ctrl-C and a rerun; dry runs, limits, enqueue-only
runs served by `adk-memory worker`, opted-out users and other apps are left alone."""

from __future__ import annotations

import json
import os
import re
import signal
from typing import Any

import test_cli
from google.adk.models.llm_request import LlmRequest
from test_cli import Cli, arun, services, store_session

from adk_memory.adk.triggers import OPT_OUT_STATE_KEY
from adk_memory.cli.backfill import INTERRUPTED_EXIT
from adk_memory.cli.options import Overrides
from adk_memory.testing import ScriptedLlm

APP = "shop"
cli = test_cli.cli
"""The `adk-memory` invoker fixture, shared with test_cli.py."""

THINGS = {"u1": ["tea", "jazz", "chess"], "u2": ["hiking", "opera"]}
"""Each user's sessions, one per thing the user says they like."""


class Model:
    """A scripted model that extracts "The user likes X." from "I like X", creates it on
    consolidation, records which things reached extraction, and can press Ctrl-C while
    extracting the n-th session (as a person at the terminal would, mid-run)."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.extracted: list[str] = []
        self.interrupt_at = interrupt_at
        self.llm = ScriptedLlm(responder=self.answer)

    def answer(self, request: LlmRequest) -> str:
        text = json.dumps([c.model_dump(mode="json") for c in request.contents])
        if "fact_numbers" in str(request.config.system_instruction) or "fact_numbers" in text:
            fact = re.search(r"1\. \(\w+, source: \w+\) (The user likes \w+\.)", text)
            assert fact is not None, text
            decision = {"action": "CREATE", "fact_numbers": [1], "fact": fact[1]}
            return json.dumps({"operations": [decision]})
        things = re.findall(r"I like (\w+)", text)
        self.extracted.extend(things)
        if len(self.extracted) == self.interrupt_at:
            os.kill(os.getpid(), signal.SIGINT)
        facts = [{"fact": f"The user likes {t}.", "topic": "USER_PREFERENCES"} for t in things]
        return json.dumps({"facts": facts})


def seed(database_url: str, **extra_users: dict[str, Any]) -> None:
    """One session per thing, oldest first; plus another app's session and an empty one."""

    async def go() -> None:
        async with services(database_url) as (sessions, _):
            start = 1000.0
            for user, things in THINGS.items():
                for thing in things:
                    start += 10
                    await store_session(sessions, APP, user, thing, [f"I like {thing}"], start)
            await store_session(sessions, "blog", "u1", "elsewhere", ["I like poetry"], 1.0)
            await store_session(sessions, APP, "u1", "empty", [], 1.0)
            for user, state in extra_users.items():
                await store_session(sessions, APP, user, f"{user}-s", ["I like secrets"], 5, state)

    arun(go)


def facts(database_url: str, user: str) -> list[str]:
    async def go() -> list[str]:
        async with services(database_url) as (_, memory):
            page = await memory.list_memories({"app_name": APP, "user_id": user})
            return sorted(m.fact for m in page.memories)

    return arun(go)


def counts(output: str) -> dict[str, int]:
    """The report's `label: number` lines."""
    found = re.findall(r"^(.+?):\s+(\d+)$", output, flags=re.MULTILINE)
    return {label: int(number) for label, number in found}


def test_an_interrupted_backfill_resumes_and_processes_each_session_once(
    cli: Cli, database_url: str
) -> None:
    seed(database_url)
    model = Model(interrupt_at=2)
    obj = Overrides(llm=model.llm)

    first = cli("backfill", "--app", APP, "--concurrency", "1", obj=obj, code=INTERRUPTED_EXIT)
    assert "Stopping after the sessions in progress" in first.stderr
    assert "run the same command again to resume" in first.stderr
    assert counts(first.stdout)["processed now"] == 2  # the session in progress finished
    assert model.extracted == ["tea", "jazz"]

    second = cli("backfill", "--app", APP, "--concurrency", "1", obj=obj)
    report = counts(second.stdout)
    assert (report["already processed"], report["processed now"]) == (2, 3)
    assert report["without events"] == 1
    assert report["left for a later run"] == 0
    # Every session of the app reached the model exactly once; the other app's never did.
    assert sorted(model.extracted) == sorted(THINGS["u1"] + THINGS["u2"])
    assert facts(database_url, "u1") == [
        "The user likes chess.",
        "The user likes jazz.",
        "The user likes tea.",
    ]
    assert facts(database_url, "u2") == ["The user likes hiking.", "The user likes opera."]

    third = cli("backfill", "--app", APP, "--dry-run", obj=obj)
    assert third.stdout.startswith("0 of 6 sessions have events not processed yet.")
    assert len(model.extracted) == 5


def test_dry_run_limit_and_enqueue_only_served_by_a_worker(cli: Cli, database_url: str) -> None:
    seed(database_url, carol={OPT_OUT_STATE_KEY: True})
    model = Model()
    obj = Overrides(llm=model.llm)

    dry = cli("backfill", "--app", APP, "--user", "u1", "--limit", "2", "--dry-run", obj=obj)
    assert dry.stdout.splitlines() == [
        "3 of 4 sessions have events not processed yet.",
        "would send: user u1 session tea",
        "would send: user u1 session jazz",
    ]

    queued = cli("backfill", "--app", APP, "--no-wait", "--limit", "4", obj=obj)
    report = counts(queued.stdout)
    assert report["enqueued now (a worker generates them)"] == 3
    assert report["opted out"] == 1  # carol said no to memories: nothing of hers is sent
    assert report["left for a later run"] == 3
    assert model.extracted == []  # enqueue only: no model call yet

    assert cli("worker", "--until-idle", obj=obj).stdout.splitlines()[0] == "ran 3 generation jobs"
    assert sorted(model.extracted) == ["chess", "jazz", "tea"]

    rest = counts(cli("backfill", "--app", APP, obj=obj).stdout)
    assert (rest["already processed"], rest["processed now"], rest["opted out"]) == (3, 2, 1)
    assert (rest["without events"], rest["left for a later run"]) == (1, 0)
    assert sorted(model.extracted) == ["chess", "hiking", "jazz", "opera", "tea"]
    assert facts(database_url, "carol") == []
