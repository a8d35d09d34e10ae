"""`adk-memory import vertex` / `import vertex-jsonl` / `export vertex-jsonl` against a recorded
Agent Engine (tests/vertex_fake.py: the REST list responses, paged), on the real test database:
what is copied, that running again adds nothing, resuming after a stop, --since, sessions equal
to what the API served, scopes, bad arguments, isolation, and the JSON-lines round trip. The
real API is called only by the last test, when credentials and an engine are configured."""

from __future__ import annotations

import copy
import json
import os
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from conftest import TEST_SCHEMA
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from test_cli import Cli, arun, assert_user_error, cli, fresh_schema, services
from vertex_fake import ENGINE, RecordedAgentEngine, memory_record

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.adk import vertex_import
from adk_memory.adk.vertex_records import parse_time
from adk_memory.adk.vertex_source import Listing, VertexClientPages, items
from adk_memory.cli.options import Overrides
from adk_memory.errors import InputValidationError
from adk_memory.memory.models import Memory, MemoryAction, PastRevision
from adk_memory.redaction import PiiRedactor

__all__ = ["cli", "fresh_schema"]  # fixtures, used by name

ALICE = {"app_name": "travel", "user_id": "alice"}
BOB = {"app_name": "travel", "user_id": "bob"}
CAROL = {"app_name": "travel", "user_id": "carol", "team": "blue"}
ENGINE_ARGS = ("--project", "test-project", "--location", "us-central1", "--agent-engine", "4242")
RECORDED = json.loads(
    (Path(__file__).parent / "data" / "vertex" / "agent_engine.json").read_text()
)["responses"]


def import_vertex(cli: Cli, *args: str, engine: Any = None, code: int = 0) -> Any:
    return cli(
        "import",
        "vertex",
        *ENGINE_ARGS,
        *args,
        obj=Overrides(vertex=engine or RecordedAgentEngine()),
        code=code,
    )


def counts(stdout: str) -> dict[str, list[int]]:
    """The final table: kind -> [read, imported, updated, already here, skipped]."""
    rows = {}
    for line in stdout.splitlines()[1:]:
        kind, *numbers = line.split()
        rows[kind] = [int(n) for n in numbers]
    return rows


async def read_all(database_url: str, schema: str = TEST_SCHEMA) -> dict[str, Any]:
    """Every memory of the recording's scopes (with revisions) and every session here."""
    async with (
        PostgresSessionService(database_url, schema=schema) as sessions,
        PostgresMemoryService(database_url, schema=schema, run_worker=False) as memory,
    ):
        found: dict[str, Any] = {"memories": {}, "revisions": {}, "sessions": {}}
        for scope in (ALICE, BOB, CAROL):
            for m in (await memory.list_memories(scope)).memories:
                found["memories"][m.fact] = m
                found["revisions"][m.fact] = await memory.list_revisions(m.id, m.scope)
        for listed in (await sessions.list_sessions(app_name="travel")).sessions:
            full = await sessions.get_session(
                app_name="travel", user_id=listed.user_id, session_id=listed.id
            )
            assert full is not None
            found["sessions"][full.id] = full
        return found


# ----------------------------------------------------------------------------- memories


def test_first_import_copies_memories_with_their_fields(cli: Cli, database_url: str) -> None:
    engine = RecordedAgentEngine()
    done = import_vertex(cli, engine=engine)
    # 7 read: 5 imported, one expired and one structured profile (no fact) skipped as a
    # memory, and imported as a profile.
    assert counts(done.stdout) == {
        "memories": [7, 5, 0, 0, 2],
        "revisions": [2, 2, 0, 0, 0],
        "profiles": [1, 1, 0, 0, 0],
    }
    # Both pages were read, the second with the first's nextPageToken.
    assert (f"{ENGINE}/memories", "page-2-token") in engine.calls

    found = arun(lambda: read_all(database_url))["memories"]
    assert sorted(found) == [
        "Alice is allergic to peanuts.",
        "Alice prefers window seats.",
        "Alice's daughter is called Mia.",
        "Bob works night shifts.",
        "Carol's team books through the blue desk.",
    ]
    seats: Memory = found["Alice prefers window seats."]
    assert seats.scope == ALICE and seats.topics == ["USER_PREFERENCES"]
    assert seats.metadata == {"channel": "chat", "weight": 0.5, "verified": True}
    assert seats.create_time == datetime(2025, 3, 1, 10, 0, 0, 123456, timezone.utc)
    assert seats.update_time == datetime(2025, 5, 2, 8, 30, 0, 500000, timezone.utc)
    assert seats.expire_time is None
    peanuts: Memory = found["Alice is allergic to peanuts."]
    assert peanuts.topics == ["health", "USER_PERSONAL_INFO"]
    assert peanuts.expire_time is not None  # the TTL it had left
    assert (
        abs((peanuts.expire_time - datetime(2099, 1, 1, tzinfo=timezone.utc)).total_seconds()) < 60
    )
    assert found["Bob works night shifts."].scope == BOB


def test_memory_bank_revisions_join_the_history_at_their_own_times(
    cli: Cli, database_url: str
) -> None:
    import_vertex(cli)
    history = arun(lambda: read_all(database_url))["revisions"]["Alice prefers window seats."]
    first, second, created = history
    assert (first.action.value, first.fact) == ("CREATED", "Alice prefers aisle seats.")
    assert first.create_time == datetime(2025, 3, 1, 10, 0, 0, 123456, timezone.utc)
    assert (second.action.value, second.fact) == ("UPDATED", "Alice prefers window seats.")
    assert second.extracted_facts == ["Alice now wants a window seat."]
    assert second.labels == {
        "source": "generate",
        "imported_from": "vertex",
        "vertex_revision": f"{ENGINE}/memories/1001/revisions/2",
    }
    assert created.action.value == "CREATED" and created.create_time > second.create_time
    # --no-revisions: memories only, one request fewer per memory.
    engine = RecordedAgentEngine()
    cli("migrate")
    done = import_vertex(cli, "--no-revisions", engine=engine)
    assert not [path for path, _ in engine.calls if path.endswith("/revisions")]
    assert "revisions" not in counts(done.stdout)


async def test_past_revisions_stay_in_their_memory_and_scope(make_memory_service: Any) -> None:
    """`import_revisions` adds history to a live memory of the scope named, once per key,
    redacted; another user's scope (or a bad revision) adds nothing."""
    memory: PostgresMemoryService = make_memory_service(redactor=PiiRedactor(), run_worker=False)
    async with memory:
        tea = await memory.create_memory("Alice likes tea.", ALICE)
        past = [
            PastRevision(
                key="rev/1",
                fact="Alice liked coffee (alice@example.com).",
                create_time=datetime(2024, 1, 1, tzinfo=timezone.utc),
                action=MemoryAction.CREATED,
                labels={"by": "alice@example.com"},
            )
        ]
        assert await memory.import_revisions(BOB, {tea.id: past}) == 0
        assert await memory.list_revisions(tea.id, BOB) == []
        with pytest.raises(InputValidationError):
            await memory.import_revisions(ALICE, {tea.id: [*past, "not a revision"]})  # type: ignore[list-item]
        assert len(await memory.list_revisions(tea.id, ALICE)) == 1
        assert await memory.import_revisions(ALICE, {tea.id: past}) == 1
        assert await memory.import_revisions(ALICE, {tea.id: past}) == 0
        old, _ = await memory.list_revisions(tea.id, ALICE)
        assert old.create_time == datetime(2024, 1, 1, tzinfo=timezone.utc)
        assert "alice@example.com" not in f"{old.fact} {old.labels}"
        assert (await memory.get_memory(tea.id, ALICE)) == tea  # the memory itself unchanged


def test_memory_bank_scopes_are_kept_exactly(cli: Cli, database_url: str) -> None:
    """A scope is copied as it is (any keys): Carol's team memory is in {app, user, team},
    not in Carol's own {app, user} scope, and nobody else's."""
    import_vertex(cli)

    async def check() -> None:
        async with services(database_url) as (_, memory):
            team = (await memory.list_memories(CAROL)).memories
            assert [m.fact for m in team] == ["Carol's team books through the blue desk."]
            carol_alone = {"app_name": "travel", "user_id": "carol"}
            assert (await memory.list_memories(carol_alone)).memories == []
            bob = [m.fact for m in (await memory.list_memories(BOB)).memories]
            assert bob == ["Bob works night shifts."]

    arun(check)


def test_an_opted_out_users_memories_are_skipped_and_counted(cli: Cli, database_url: str) -> None:
    """Bob opted out of memory: his memory is not imported (counted as skipped, logged), the
    other users' are."""

    async def opt_out() -> None:
        async with services(database_url) as (_, memory):
            await memory.set_opt_out("travel", "bob")

    arun(opt_out)
    done = import_vertex(cli)
    assert counts(done.stdout)["memories"] == [7, 4, 0, 0, 3]
    found = arun(lambda: read_all(database_url))["memories"]
    assert "Bob works night shifts." not in found and "Alice prefers window seats." in found


def test_running_again_adds_nothing(cli: Cli, database_url: str) -> None:
    import_vertex(cli, "--sessions", "--app", "travel")
    before = arun(lambda: read_all(database_url))
    again = import_vertex(cli, "--sessions", "--app", "travel")
    assert counts(again.stdout) == {
        "memories": [7, 0, 0, 5, 2],  # no revision read again: each memory has its history
        "profiles": [1, 0, 0, 1, 0],
        "sessions": [3, 0, 0, 3, 0],
        "events": [7, 0, 0, 6, 1],
    }
    after = arun(lambda: read_all(database_url))
    assert after["memories"] == before["memories"]
    assert after["revisions"] == before["revisions"]  # not one revision more
    assert {k: s.events for k, s in after["sessions"].items()} == {
        k: s.events for k, s in before["sessions"].items()
    }


def test_a_memory_changed_in_memory_bank_since_is_updated(cli: Cli, database_url: str) -> None:
    import_vertex(cli)

    def edit(responses: dict[str, Any]) -> None:
        record = memory_record(responses, "1001")
        record["fact"] = "Alice prefers aisle seats now."
        record["updateTime"] = "2025-11-01T00:00:00Z"

    again = import_vertex(cli, engine=RecordedAgentEngine(edit=edit))
    assert counts(again.stdout)["memories"] == [7, 0, 1, 4, 2]
    found = arun(lambda: read_all(database_url))
    history = found["revisions"]["Alice prefers aisle seats now."]
    # Memory Bank's two revisions (at their own times), the import's creation, the update.
    assert [r.action.value for r in history] == ["CREATED", "UPDATED", "CREATED", "UPDATED"]
    assert history[-1].labels == {"imported_from": "vertex"}
    # And that is the end of it: a third run finds it up to date.
    third = import_vertex(cli, engine=RecordedAgentEngine(edit=edit))
    assert counts(third.stdout)["memories"] == [7, 0, 0, 5, 2]


def test_an_interrupted_import_resumes_where_it_stopped(
    cli: Cli, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One quick retry instead of five slow ones: the outage outlasts it.
    monkeypatch.setattr(
        vertex_import,
        "RETRY",
        vertex_import.RetryPolicy(vertex_import.Backoff(base=0.0, cap=0.0), max_attempts=2),
    )
    # The connection drops after the first page (3 memories): Alice's two are written, then
    # the listing of the first one's revisions fails; Bob's and the second page never come.
    broken = RecordedAgentEngine(fail_after=3)
    stopped = import_vertex(cli, engine=broken, code=1)
    assert_user_error(stopped, "Reading from Vertex AI failed", "ConnectionResetError")
    assert "Run the same command again to resume" in stopped.stderr
    assert counts(stopped.stdout) == {"memories": [3, 2, 0, 0, 0]}
    assert len(arun(lambda: read_all(database_url))["memories"]) == 2

    resumed = import_vertex(cli)
    # The rest written, and the history the first run did not get to: nothing twice.
    assert counts(resumed.stdout) == {
        "memories": [7, 3, 0, 2, 2],
        "revisions": [2, 2, 0, 0, 0],
        "profiles": [1, 1, 0, 0, 0],
    }
    found = arun(lambda: read_all(database_url))
    assert len(found["memories"]) == 5
    assert len(found["revisions"]["Alice prefers window seats."]) == 3
    assert counts(import_vertex(cli).stdout) == {
        "memories": [7, 0, 0, 5, 2],
        "profiles": [1, 0, 0, 1, 0],
    }


def test_since_imports_only_what_changed_since(cli: Cli, database_url: str) -> None:
    done = import_vertex(cli, "--since", "2025-06-01", "--sessions", "--app", "travel")
    table = counts(done.stdout)
    assert table["memories"] == [7, 2, 0, 0, 5]  # Mia (September) and Carol's team (July)
    assert table["sessions"] == [3, 2, 0, 0, 1]  # last year's session skipped
    found = arun(lambda: read_all(database_url))
    assert sorted(found["memories"]) == [
        "Alice's daughter is called Mia.",
        "Carol's team books through the blue desk.",
    ]
    assert sorted(found["sessions"]) == ["s-alice-1", "s-bob-1"]


# ----------------------------------------------------------------------------- sessions


def served_events(session: str) -> list[dict[str, Any]]:
    return [
        e for page in RECORDED[f"{ENGINE}/sessions/{session}/events"] for e in page["sessionEvents"]
    ]


def test_sessions_arrive_with_the_events_the_api_served(cli: Cli, database_url: str) -> None:
    done = import_vertex(cli, "--sessions", "--app", "travel")
    assert counts(done.stdout)["sessions"] == [3, 3, 0, 0, 0]
    assert counts(done.stdout)["events"] == [7, 6, 0, 0, 1]  # the partial event is never stored
    sessions: dict[str, Session] = arun(lambda: read_all(database_url))["sessions"]

    # Alice's session: events from their rawEvent (the whole ADK event), in the served order.
    alice = sessions["s-alice-1"]
    assert alice.user_id == "alice" and alice.app_name == "travel"
    expected = []
    for record in served_events("s-alice-1"):
        raw = dict(record["rawEvent"])
        raw["timestamp"] = parse_time(record["timestamp"], "t").timestamp()
        expected.append(Event.model_validate(raw))
    assert alice.events == expected
    assert alice.state == {"destination": "Lisbon", "user:tier": "gold"}
    assert alice.last_update_time == expected[-1].timestamp

    # Bob's: written field by field (no rawEvent), read as ADK's Vertex service reads them.
    bob = sessions["s-bob-1"]
    assert [e.id for e in bob.events] == ["b1", "b2"]
    first, handoff = bob.events
    assert first.author == "user" and first.content is not None
    assert first.content.parts is not None and first.content.parts[0].text == "Change my hotel."
    assert handoff.actions.state_delta == {"step": 2}
    assert handoff.actions.transfer_to_agent == "hotel_agent"
    assert handoff.custom_metadata == {"channel": "web"}
    assert handoff.usage_metadata is not None and handoff.usage_metadata.total_token_count == 19
    assert handoff.turn_complete is True and handoff.branch == "root_agent"
    assert handoff.timestamp == datetime(2025, 10, 2, 10, 0, 30, tzinfo=timezone.utc).timestamp()
    assert bob.state == {"step": 2}


def test_a_session_left_half_imported_is_finished(cli: Cli, database_url: str) -> None:
    """An earlier run that stopped inside Alice's session (its first event stored): the import
    appends the rest, once."""

    async def half() -> None:
        async with services(database_url) as (sessions, _):
            session = await sessions.create_session(
                app_name="travel", user_id="alice", session_id="s-alice-1"
            )
            record = served_events("s-alice-1")[0]
            raw = dict(
                record["rawEvent"], timestamp=parse_time(record["timestamp"], "t").timestamp()
            )
            await sessions.append_event(session, Event.model_validate(raw))

    arun(half)
    done = import_vertex(cli, "--sessions", "--app", "travel")
    assert counts(done.stdout)["sessions"] == [3, 2, 1, 0, 0]
    assert counts(done.stdout)["events"] == [7, 5, 0, 1, 1]
    alice = arun(lambda: read_all(database_url))["sessions"]["s-alice-1"]
    assert [e.id for e in alice.events] == ["e1", "e2", "e3"]


# ------------------------------------------------------------ configuration and profiles

ENGINE_CONFIG = {
    "name": ENGINE,
    "contextSpec": {
        "memoryBankConfig": {
            "customizationConfigs": [
                {"memoryTopics": [{"managedMemoryTopic": {"managedTopicEnum": "USER_PREFERENCES"}}]}
            ],
            "ttlConfig": {"defaultTtl": "31536000s"},
            "structuredMemoryConfigs": [
                {
                    "schemaConfigs": [
                        {
                            "id": "traveller",
                            "memorySchema": {
                                "type": "OBJECT",
                                "properties": {"home_airport": {"type": "STRING"}},
                            },
                            "memoryType": "STRUCTURED_PROFILE",
                        }
                    ]
                }
            ],
        }
    },
}


def test_the_engines_configuration_and_profiles_are_imported(cli: Cli, database_url: str) -> None:
    def edit(responses: dict[str, Any]) -> None:
        responses[ENGINE] = [ENGINE_CONFIG]

    done = import_vertex(cli, "--app", "travel", engine=RecordedAgentEngine(edit=edit))
    assert "Memory Bank configuration: travel version 1." in done.stderr
    assert counts(done.stdout)["profiles"] == [1, 1, 0, 0, 0]

    async def check() -> None:
        async with PostgresMemoryService(database_url, schema=TEST_SCHEMA, run_worker=False) as m:
            stored = await m.app_config("travel")
            assert stored is not None
            assert [t.value for t in stored.config.customization_configs[0].memory_topics] == [
                "USER_PREFERENCES"
            ]
            assert stored.config.ttl.default_ttl is not None
            assert stored.config.ttl.default_ttl.days == 365
            [profile] = await m.retrieve_profiles(app_name="travel", user_id="alice")
            assert (profile.schema_id, profile.profile) == ("traveller", {"home_airport": "LYS"})
            [revision] = await m.list_profile_revisions(ALICE, "traveller", "home_airport")
            assert revision.labels == {"imported_from": "vertex"}

    arun(check)
    again = import_vertex(cli, "--app", "travel", engine=RecordedAgentEngine(edit=edit))
    assert "travel version 1 (unchanged)." in again.stderr
    assert counts(again.stdout)["profiles"] == [1, 0, 0, 1, 0]

    # A configuration field adk-memory does not implement stops the import, named, first.
    def unsupported(responses: dict[str, Any]) -> None:
        config = copy.deepcopy(ENGINE_CONFIG)
        config["contextSpec"]["memoryBankConfig"]["customizationConfigs"] = [
            {"enableThirdPersonMemories": True}
        ]
        responses[ENGINE] = [config]

    refused = import_vertex(
        cli, "--app", "other", engine=RecordedAgentEngine(edit=unsupported), code=1
    )
    assert_user_error(refused, "enable_third_person_memories=True is not supported")


# ------------------------------------------------------------------- bad input, isolation


def test_bad_arguments_are_one_clear_line(cli: Cli, database_url: str) -> None:
    full_name = cli(
        "import", "vertex", "--project", "p", "--location", "l",
        "--agent-engine", "projects/p/locations/l/reasoningEngines/1",
        obj=Overrides(vertex=RecordedAgentEngine()), code=2,
    )  # fmt: skip
    assert "--agent-engine must be a bare id" in full_name.stderr
    no_app = import_vertex(cli, "--sessions", code=2)
    assert "--sessions needs --app" in no_app.stderr
    for since in ("last tuesday", "2025"):
        assert "neither a time" in import_vertex(cli, "--since", since, code=2).stderr
    missing = cli("import", "vertex", "--project", "p", "--location", "l", code=2)
    assert "--agent-engine" in missing.stderr
    assert arun(lambda: read_all(database_url))["memories"] == {}


def test_a_bad_record_stops_the_import_before_its_page_is_written(
    cli: Cli, database_url: str
) -> None:
    def edit(responses: dict[str, Any]) -> None:
        memory_record(responses, "1003")["scope"] = {"app_name": "travel", "user_id": "*"}

    stopped = import_vertex(cli, engine=RecordedAgentEngine(edit=edit), code=1)
    assert_user_error(stopped, "memories/1003", "'*'")
    assert arun(lambda: read_all(database_url))["memories"] == {}


def test_without_the_vertex_extra_the_error_names_it(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without google-cloud-aiplatform (`import vertexai` fails: the dev extra installs it, so
    its absence is simulated) the error says which extra to install."""
    monkeypatch.setitem(sys.modules, "vertexai", None)
    result = cli("import", "vertex", *ENGINE_ARGS, code=1)
    assert_user_error(result, 'pip install "adk-memory[vertex]"')


def test_an_import_and_an_export_never_cross_users(
    cli: Cli, database_url: str, tmp_path: Path
) -> None:
    """Importing writes each record into its own scope and user only (another user's data is
    left as it was), and an export for one user holds that user's memories and sessions only."""

    async def dave() -> None:
        async with services(database_url) as (sessions, memory):
            dave_scope = {"app_name": "travel", "user_id": "dave"}
            await memory.create_memory("Alice prefers window seats.", dave_scope)
            await sessions.create_session(app_name="travel", user_id="dave", session_id="s-alice-1")

    arun(dave)
    import_vertex(cli, "--sessions", "--app", "travel")

    async def check() -> None:
        async with services(database_url) as (sessions, memory):
            dave_scope = {"app_name": "travel", "user_id": "dave"}
            [kept] = (await memory.list_memories(dave_scope)).memories
            assert kept.fact == "Alice prefers window seats." and kept.topics == []
            own = await sessions.get_session(
                app_name="travel", user_id="dave", session_id="s-alice-1"
            )
            assert own is not None and own.events == []  # the same id, another user: untouched
            alice = await sessions.get_session(
                app_name="travel", user_id="alice", session_id="s-alice-1"
            )
            assert alice is not None and len(alice.events) == 3

    arun(check)
    out = tmp_path / "alice.jsonl"
    cli(
        "export", "vertex-jsonl", "--app", "travel", "--user", "alice", "--sessions", "-o", str(out)
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    users = {line["memory"]["scope"]["user_id"] for line in lines if "memory" in line}
    users |= {line["session"]["userId"] for line in lines if "session" in line}
    assert users == {"alice"}
    assert sum("session" in line for line in lines) == 1


# ------------------------------------------------------------------------- round trip


def test_export_then_import_into_another_app_gives_the_same_memories(
    cli: Cli, database_url: str, fresh_schema: str, tmp_path: Path
) -> None:
    import_vertex(cli, "--sessions", "--app", "travel")
    out = tmp_path / "travel.jsonl"
    done = cli(
        "export", "vertex-jsonl", "--app", "travel", "--all-users", "--sessions", "-o", str(out)
    )
    assert "Exported 5 memories and 3 sessions." in done.stderr
    cli("migrate", "--schema", fresh_schema)
    loaded = cli(
        "import",
        "vertex-jsonl",
        str(out),
        "--schema",
        fresh_schema,
        "--sessions",
        "--app",
        "travel",
    )
    assert counts(loaded.stdout)["memories"] == [5, 5, 0, 0, 0]
    again = cli(
        "import",
        "vertex-jsonl",
        str(out),
        "--schema",
        fresh_schema,
        "--sessions",
        "--app",
        "travel",
    )
    assert counts(again.stdout)["memories"] == [5, 0, 0, 5, 0]

    source = arun(lambda: read_all(database_url))
    copy = arun(lambda: read_all(database_url, fresh_schema))

    def same(memory: Memory) -> tuple[Any, ...]:
        # An expiry is carried as the time left (a TTL), so it moves by the import's duration.
        expires = (
            memory.expire_time.replace(second=0, microsecond=0) if memory.expire_time else None
        )
        return (
            memory.scope,
            memory.topics,
            memory.metadata,
            memory.create_time,
            memory.update_time,
            expires,
        )

    assert {f: same(m) for f, m in copy["memories"].items()} == {
        f: same(m) for f, m in source["memories"].items()
    }
    assert {k: (s.state, s.events) for k, s in copy["sessions"].items()} == {
        k: (s.state, s.events) for k, s in source["sessions"].items()
    }


def test_a_bad_jsonl_line_writes_nothing(cli: Cli, database_url: str, tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    good = {"memory": {"name": "memories/1", "fact": "Fine.", "scope": ALICE}}
    source.write_text(json.dumps(good) + "\n" + json.dumps({"memory": "nope"}) + "\n")
    result = cli("import", "vertex-jsonl", str(source), code=1)
    assert_user_error(result, "Line 2")
    assert arun(lambda: read_all(database_url))["memories"] == {}


# ------------------------------------------------------------------- the client adapter


class _RecordedApi(BaseHTTPRequestHandler):
    """The recording served over HTTP on localhost as the REST API serves it: `GET
    /v1beta1/{parent}/{collection}?pageSize=..&pageToken=..`."""

    def do_GET(self) -> None:
        url = urlparse(self.path)
        path = url.path.split("/v1beta1/", 1)[1]
        pages = RECORDED.get(path, [{}])
        token = parse_qs(url.query).get("pageToken", [None])[0]
        tokens = [page.get("nextPageToken") for page in pages]
        body = json.dumps(pages[0 if token is None else tokens.index(token) + 1]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _times(value: Any) -> Any:
    """`value` with RFC 3339 times as datetimes (the client writes fractions its own way)."""
    if isinstance(value, dict):
        return {k: _times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_times(v) for v in value]
    if isinstance(value, str) and len(value) > 19 and value[4] == "-" and value[10] == "T":
        return parse_time(value, "time")
    return value


def test_the_client_adapter_reads_the_recording_through_the_real_sdk() -> None:
    """With google-cloud-aiplatform installed: the `vertexai` client, pointed at the recording
    served on localhost, pages through every listing, and the adapter hands the importer the
    very records recorded (so the recording is in the API's shape: the client's models forbid
    unknown fields)."""
    vertexai = pytest.importorskip("vertexai")
    from google.oauth2.credentials import Credentials

    server = HTTPServer(("127.0.0.1", 0), _RecordedApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = vertexai.Client(
            project="test-project",
            location="us-central1",
            credentials=Credentials(token="test-token"),
            http_options={"base_url": f"http://127.0.0.1:{server.server_port}/"},
        )
        pages = VertexClientPages("test-project", "us-central1", client=client)
        for path, recorded in RECORDED.items():
            parent, collection = path.rsplit("/", 1)
            listing = {
                "memories": Listing.MEMORIES,
                "revisions": Listing.REVISIONS,
                "sessions": Listing.SESSIONS,
                "events": Listing.EVENTS,
            }[collection]

            async def read(listing: Listing = listing, parent: str = parent) -> list[Any]:
                return [r async for page in items(pages, listing, parent) for r in page]

            served = [r for page in recorded for r in page.get(listing.value, [])]
            assert _times(arun(read)) == _times(served), path
    finally:
        server.shutdown()


# ----------------------------------------------------------------------------- real API


REAL_ENGINE_ENV = "ADK_MEMORY_TEST_VERTEX_ENGINE"


@pytest.mark.skipif(
    not os.environ.get(REAL_ENGINE_ENV), reason=f"set {REAL_ENGINE_ENV}=P/L/ID to call Vertex AI"
)
def test_the_real_client_reads_an_agent_engine(cli: Cli) -> None:
    """Reads (never writes) a real Agent Engine: `ADK_MEMORY_TEST_VERTEX_ENGINE=P/L/ID` with
    Application Default Credentials and google-cloud-aiplatform installed."""
    pytest.importorskip("vertexai")
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        google.auth.default()
    except DefaultCredentialsError:
        pytest.skip("no Application Default Credentials")
    project, location, engine_id = os.environ[REAL_ENGINE_ENV].split("/")
    pages = VertexClientPages(project, location)
    name = f"projects/{project}/locations/{location}/reasoningEngines/{engine_id}"
    body = arun(lambda: pages.page(Listing.MEMORIES, name, None))
    assert isinstance(body.get("memories", []), list)
    done = cli(
        "import", "vertex", "--project", project, "--location", location,
        "--agent-engine", engine_id,
    )  # fmt: skip
    assert counts(done.stdout)["memories"][0] >= len(body.get("memories", []))
