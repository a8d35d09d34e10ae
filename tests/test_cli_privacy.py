"""The privacy commands on the real test database: `adk-memory erase` forgets one user and only
that user (and never without a yes: no terminal and no --yes is a refusal, not a wait), the
quarantine review lists, approves and rejects within a scope, and `adk-memory sweep` deletes
finished generation jobs past their retention and nothing else."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import test_cli
from click.testing import CliRunner, Result
from conftest import TEST_SCHEMA
from google.adk.sessions.session import Session
from rls_checks import all_rows
from test_cli import Cli, arun, assert_user_error, said, services, store_session

from adk_memory import GuardAction, GuardVerdict
from adk_memory.cli import main
from adk_memory.cli.options import Overrides
from adk_memory.testing import ScriptedLlm

APP = "shop"
U1 = {"app_name": APP, "user_id": "u1"}
U2 = {"app_name": APP, "user_id": "u2"}
cli = test_cli.cli
"""The `adk-memory` invoker fixture, shared with test_cli.py."""
"""The module (`adk_memory.cli.erase` is the command of the same name)."""


def counts(stdout: str) -> dict[str, int]:
    """`kind: N deleted` lines as a dict."""
    found: dict[str, int] = {}
    for line in stdout.splitlines():
        kind, _, rest = line.partition(": ")
        found[kind] = int(rest.removesuffix(" deleted"))
    return found


# ----------------------------------------------------------------------------------- erase


def seed_users(database_url: str) -> None:
    """u1 with two sessions, user state and memories in ADK's scope and a narrower one; u2 of
    the same app and u1 of another app, each with a session and a memory."""

    async def go() -> None:
        async with services(database_url) as (sessions, memory):
            await store_session(sessions, APP, "u1", "a", ["hi", "there"], state={"user:n": 1})
            await store_session(sessions, APP, "u1", "b", ["again"])
            await store_session(sessions, APP, "u2", "c", ["hello"])
            await store_session(sessions, "other", "u1", "d", ["elsewhere"])
            await memory.create_memory("u1 likes tea", U1)
            await memory.create_memory("u1 likes jazz", {**U1, "agent": "a1"})
            await memory.create_memory("u2 likes coffee", U2)
            await memory.create_memory("u1 elsewhere", {"app_name": "other", "user_id": "u1"})

    arun(go)


def left(database_url: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each (app, user)'s session ids and memory facts (ADK's scope)."""

    async def go() -> dict[str, tuple[list[str], list[str]]]:
        found: dict[str, tuple[list[str], list[str]]] = {}
        async with services(database_url) as (sessions, memory):
            for app, user in ((APP, "u1"), (APP, "u2"), ("other", "u1")):
                listed = await sessions.list_sessions(app_name=app, user_id=user)
                page = await memory.list_memories({"app_name": app, "user_id": user})
                found[f"{app}/{user}"] = (
                    sorted(s.id for s in listed.sessions),
                    [m.fact for m in page.memories],
                )
        return found

    return arun(go)


UNTOUCHED = {
    f"{APP}/u1": (["a", "b"], ["u1 likes tea"]),
    f"{APP}/u2": (["c"], ["u2 likes coffee"]),
    "other/u1": (["d"], ["u1 elsewhere"]),
}
ERASED = {**UNTOUCHED, f"{APP}/u1": ([], [])}


def test_erase_with_yes_forgets_one_user_and_twice_counts_zeros(
    cli: Cli, database_url: str
) -> None:
    seed_users(database_url)
    first = cli("erase", "--app", APP, "--user", "u1", "--yes")
    erased = counts(first.stdout)
    assert erased["sessions"] == 2 and erased["events"] == 3 and erased["user_states"] == 1
    assert erased["memories"] == 2 and erased["revisions"] == 2
    assert "Erased user 'u1' of app 'shop'" in first.stderr
    assert left(database_url) == ERASED

    again = json.loads(cli("erase", "--app", APP, "--user", "u1", "--yes", "--json").stdout)
    assert again.keys() == erased.keys() and set(again.values()) == {0}
    assert left(database_url) == ERASED


def test_erase_without_yes_and_without_an_answer_refuses(cli: Cli, database_url: str) -> None:
    seed_users(database_url)
    refused = cli("erase", "--app", APP, "--user", "u1", code=1)
    question, error = refused.stderr.rstrip("\n").split("\n")
    assert "This cannot be undone" in question
    assert error == "Error: Not erased: answer yes, or pass --yes."
    assert refused.stdout == ""
    assert left(database_url) == UNTOUCHED


def answering(database_url: str, args: list[str], answer: str) -> Result:
    """`adk-memory ARGS` with `answer` typed at the prompt."""
    env = {"ADK_MEMORY_DATABASE_URL": database_url, "ADK_MEMORY_SCHEMA": TEST_SCHEMA}
    return CliRunner(env=env).invoke(main, args, input=answer)


def test_erase_asks_first(cli: Cli, database_url: str) -> None:
    seed_users(database_url)
    args = ["erase", "--app", APP, "--user", "u1"]

    declined = answering(database_url, args, "n\n")
    assert declined.exit_code == 1 and "Not erased" in declined.stderr
    assert "'u1' of app 'shop'" in declined.stderr and "memories" in declined.stderr
    assert left(database_url) == UNTOUCHED

    accepted = answering(database_url, args, "y\n")
    assert accepted.exit_code == 0, accepted.output
    assert counts(accepted.stdout)["sessions"] == 2
    assert left(database_url) == ERASED


@pytest.mark.parametrize(
    ("app", "user", "fragment"),
    [("", "u1", "non-empty"), (APP, "", "non-empty"), ("*", "u1", "'*'")],
)
def test_erase_rejects_bad_ids_before_asking(
    cli: Cli, database_url: str, app: str, user: str, fragment: str
) -> None:
    seed_users(database_url)
    assert_user_error(cli("erase", "--app", app, "--user", user, "--yes", code=1), fragment)
    assert_user_error(cli("erase", "--app", app, "--user", user, code=1), fragment)
    assert left(database_url) == UNTOUCHED


# ------------------------------------------------------------------------------ quarantine


class QuarantineMarked:
    """A guard for tests: quarantines facts that say HOLD, allows the others."""

    async def check(self, fact: str, *, scope: Mapping[str, str], source: str) -> GuardVerdict:
        if "HOLD" in fact:
            return GuardVerdict(GuardAction.QUARANTINE, reason="marked for review", rule="hold")
        return GuardVerdict(GuardAction.ALLOW)


def seed_quarantine(database_url: str) -> dict[str, str]:
    """Two quarantined memories of u1, one of u2, and a live one of u1; their ids by fact."""

    async def go() -> dict[str, str]:
        async with services(database_url, guard=QuarantineMarked()) as (_, memory):
            made = [
                await memory.create_memory(fact, scope)
                for fact, scope in (
                    ("u1 HOLD one", U1),
                    ("u1 HOLD two", U1),
                    ("u2 HOLD three", U2),
                    ("u1 live", U1),
                )
            ]
        return {m.fact: m.id for m in made}

    return arun(go)


def quarantine(cli: Cli, *args: str, code: int = 0) -> Result:
    return cli("memories", "quarantine", *args, code=code)


def live_facts(cli: Cli, user: str) -> list[str]:
    listed = cli("memories", "list", "--app", APP, "--user", user, "--json").stdout
    return sorted(m["fact"] for m in json.loads(listed))


def test_quarantine_list_approve_reject_round_trip(cli: Cli, database_url: str) -> None:
    ids = seed_quarantine(database_url)
    one, two, three = ids["u1 HOLD one"], ids["u1 HOLD two"], ids["u2 HOLD three"]
    u1 = ("--app", APP, "--user", "u1")

    table = quarantine(cli, "list", *u1).stdout.splitlines()
    assert table[0].split() == ["ID", "SCOPE", "RULE", "REASON", "FACT"]
    assert [line.split()[0] for line in table[1:]] == [two, one]  # newest first
    assert "app_name=shop,user_id=u1  hold  marked for review  u1 HOLD two" in table[1]

    everything = json.loads(quarantine(cli, "list", "--all", "--json").stdout)
    assert sorted(q["memory"]["id"] for q in everything) == sorted([one, two, three])
    held = next(q for q in everything if q["memory"]["id"] == three)
    assert held["memory"]["scope"] == U2 and held["memory"]["fact"] == "u2 HOLD three"
    assert (held["rule"], held["reason"]) == ("hold", "marked for review")
    limited = quarantine(cli, "list", "--all", "--limit", "1", "--json")
    assert len(json.loads(limited.stdout)) == 1 and "More than 1" in limited.stderr

    # An id never releases or deletes a memory of another scope.
    assert_user_error(quarantine(cli, "approve", one, "--app", APP, "--user", "u2", code=1), one)
    assert_user_error(quarantine(cli, "reject", three, *u1, code=1), three)
    assert live_facts(cli, "u1") == ["u1 live"]

    assert quarantine(cli, "approve", one, *u1).stdout.strip() == f"approved {one}"
    assert live_facts(cli, "u1") == ["u1 HOLD one", "u1 live"]
    assert quarantine(cli, "reject", two, *u1).stdout.strip() == f"rejected {two}"
    assert live_facts(cli, "u1") == ["u1 HOLD one", "u1 live"]
    emptied = quarantine(cli, "list", *u1)
    assert emptied.stdout.splitlines() == ["ID  SCOPE  RULE  REASON  FACT"]
    assert "No quarantined memories." in emptied.stderr

    # Each decision is taken once; a live memory is not in quarantine.
    assert_user_error(quarantine(cli, "approve", one, *u1, code=1), "No quarantined memory")
    assert_user_error(quarantine(cli, "reject", two, *u1, code=1), "No quarantined memory")
    assert_user_error(quarantine(cli, "reject", one, *u1, code=1), "No quarantined memory")
    assert live_facts(cli, "u1") == ["u1 HOLD one", "u1 live"]
    assert [
        q["memory"]["id"] for q in json.loads(quarantine(cli, "list", "--all", "--json").stdout)
    ] == [three]


def test_quarantine_list_needs_a_scope_or_all(cli: Cli) -> None:
    assert_user_error(quarantine(cli, "list", code=1), "scope")
    assert "--all takes no" in quarantine(cli, "list", "--all", "--app", APP, code=2).stderr


def test_listings_and_exports_leave_quarantined_memories_out_unless_asked(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    """A quarantined memory is not live: `memories list`/`export` (one user or --all-users) and
    `export vertex-jsonl` leave it out; --include-quarantined lists it, marked as such."""
    ids = seed_quarantine(database_url)
    every = ("--app", APP, "--all-users")

    def facts(records: list[dict[str, Any]]) -> list[tuple[str, bool]]:
        return sorted((r["fact"], r["quarantined"]) for r in records)

    listed = json.loads(cli("memories", "list", *every, "--json").stdout)
    assert facts(listed) == [("u1 live", False)]
    exported = cli("memories", "export", *every).stdout.splitlines()
    assert facts([json.loads(line) for line in exported]) == [("u1 live", False)]
    vertex = cli("export", "vertex-jsonl", *every).stdout
    assert "u1 live" in vertex and "HOLD" not in vertex
    assert live_facts(cli, "u1") == ["u1 live"]

    held = [("u1 HOLD one", True), ("u1 HOLD two", True), ("u1 live", False)]
    mine = ("--app", APP, "--user", "u1", "--include-quarantined")
    assert facts(json.loads(cli("memories", "list", *mine, "--json").stdout)) == held
    everyone = json.loads(cli("memories", "list", *every, "--include-quarantined", "--json").stdout)
    assert facts(everyone) == sorted([*held, ("u2 HOLD three", True)])
    exported = cli("memories", "export", *every, "--include-quarantined").stdout.splitlines()
    assert facts([json.loads(line) for line in exported]) == facts(everyone)

    # Imported again (here, or into another database), a held line stays out of the live
    # memories: this import's guard is not the one that held it (the app's own, here).
    held_lines = tmp_path / "held.jsonl"
    held_lines.write_text(
        "".join(f"{line}\n" for line in exported if '"quarantined": true' in line)
    )
    imported = cli("memories", "import", str(held_lines))
    assert "3 lines held in quarantine at the source skipped" in imported.stderr
    assert live_facts(cli, "u1") == ["u1 live"] and live_facts(cli, "u2") == []

    table = cli("memories", "list", *every, "--include-quarantined").stdout.splitlines()
    assert table[0].split()[:3] == ["ID", "USER", "STATUS"]
    status = {line.split()[0]: line.split()[2] for line in table[1:]}
    assert status == {
        ids["u1 HOLD one"]: "quarantined",
        ids["u1 HOLD two"]: "quarantined",
        ids["u2 HOLD three"]: "quarantined",
        ids["u1 live"]: "live",
    }


# ----------------------------------------------------------------------------------- sweep


def test_sweep_deletes_finished_jobs_past_their_retention(cli: Cli, database_url: str) -> None:
    llm = ScriptedLlm(
        responder=lambda request: json.dumps(
            {"facts": [{"fact": "The user is vegetarian.", "topic": "USER_PREFERENCES"}]}
        )
    )

    def enqueue(user: str) -> str:
        async def go() -> str:
            async with services(database_url, llm=llm) as (_, memory):
                session = Session(
                    id="s1", app_name=APP, user_id=user, events=[said("I'm vegetarian", 1.0)]
                )
                return (await memory.generate_memories(session=session)).id

        return arun(go)

    def age(job_id: str) -> None:
        """Make a job look as if it last changed eight days ago."""

        async def go() -> None:
            conn = await all_rows(database_url)
            try:
                await conn.execute(
                    f"UPDATE {TEST_SCHEMA}.memory_jobs SET update_time = now() - interval "
                    "'8 days' WHERE id::text = $1",
                    job_id,
                )
            finally:
                await conn.close()

        arun(go)

    def jobs() -> dict[str, str]:
        async def go() -> dict[str, str]:
            conn = await all_rows(database_url)
            try:
                rows = await conn.fetch(f"SELECT id::text, status FROM {TEST_SCHEMA}.memory_jobs")
            finally:
                await conn.close()
            return {r[0]: r[1] for r in rows}

        return arun(go)

    old = enqueue("u1")
    cli("worker", "--until-idle", obj=Overrides(llm=llm))
    age(old)
    recent = enqueue("u2")
    cli("worker", "--until-idle", obj=Overrides(llm=llm))
    pending = enqueue("u3")  # never run: not finished, however old
    age(pending)
    assert jobs() == {old: "done", recent: "done", pending: "pending"}

    kept = cli("sweep", "--no-memories", "--job-retention", "30d").stdout
    assert "jobs: 0 finished generation jobs deleted" in kept
    assert "jobs:" not in cli("sweep", "--no-memories", "--no-jobs").stdout
    assert len(jobs()) == 3

    swept = cli("sweep", "--batch-size", "1").stdout
    assert "jobs: 1 finished generation job deleted" in swept
    assert jobs() == {recent: "done", pending: "pending"}
    assert "jobs: 0 finished generation jobs deleted" in cli("sweep").stdout
    assert live_facts(cli, "u1") == ["The user is vegetarian."]  # memories outlive their jobs


def test_sweep_job_retention_is_a_duration(cli: Cli) -> None:
    assert "--job-retention" in cli("sweep", "--job-retention", "soon", code=2).stderr
