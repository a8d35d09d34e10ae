"""The memory inspector's pages, as HTML built from what the router read.

Owns: what each page shows and how: the scope list, a user's memories (fact, topics,
confidence, source, age, TTL), search results with their scores, structured profiles, the
quarantine with approve / reject, generation operations with retry, a memory's revision
timeline (what each change did, which session produced it) and the erasure's confirmation.
Every value goes through `markup` (escaped); write forms appear only when writes are enabled.
It never reads or writes data (the router does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ...memory.models import (
    GenerateMemoriesOperation,
    GenerationJob,
    Memory,
    MemoryPage,
    MemoryRevision,
    QuarantinedMemory,
    RetrievedMemory,
    ScopePage,
)
from ...memory.scope import scope_key, user_scope
from ...memory.service.profiles import MemoryProfile
from .markup import (
    TOKEN_FIELD,
    Html,
    ago,
    esc,
    hidden_fields,
    join,
    link,
    number,
    page,
    post_form,
    stamp,
    table,
    tag,
    ttl,
    url,
)

NOTES = {
    "approved": "Approved: the memory is live.",
    "rejected": "Rejected: the memory is deleted.",
    "retried": "Retried: the generation is queued again.",
    "retried-no-model": (
        "Queued again, but this server's memory service has no generation model: the "
        "generation waits for a worker that has one (`adk-memory worker --model ...`), or "
        "restart with --memory-model / $ADK_MEMORY_MODEL."
    ),
    "not-found": "Nothing to do: it is no longer there (already handled, or not this user's).",
}
"""The outcomes a write redirects back with (a fixed set: a link cannot make a page say
anything else)."""


@dataclass(frozen=True)
class View:
    """What every page needs: where the inspector is mounted, the form token, whether writes
    are on, and the time pages measure ages against."""

    base: str
    token: str
    writable: bool
    now: datetime
    dev_ui: str | None = None
    """Where ADK's dev UI is served on this server (e.g. `/dev-ui/`), so a session id links to
    the conversation there; None: no dev UI, ids are shown as text."""

    def render(self, title: str, body: Html) -> str:
        return page(title, body, base=self.base, writable=self.writable)

    def user_url(self, scope: Mapping[str, str], **query: str | None) -> str:
        return url(self.base, "/user", **scope_fields(scope), **query)

    def session_link(self, scope: Mapping[str, str], session_id: str) -> Html:
        """A session id, linked to the conversation in ADK's dev UI when there is one (its
        own query parameters: `app`, `userId`, `session`)."""
        code = tag("<code>{}</code>", session_id)
        if self.dev_ui is None or "app_name" not in scope or "user_id" not in scope:
            return code
        where = url(
            self.dev_ui, "", app=scope["app_name"], userId=scope["user_id"], session=session_id
        )
        return tag("<a href='{}'>{}</a>", where, code)

    def form(
        self, path: str, fields: Mapping[str, str], label: str, *, danger: bool = False
    ) -> Html:
        return post_form(self.base + path, self.token, fields, label, danger=danger)


def scope_fields(scope: Mapping[str, str]) -> dict[str, str]:
    """How a page names a scope in its links and forms: `app` and `user`, and the whole `scope`
    (its canonical text) when it is narrower than the user's (e.g. one agent's memories)."""
    fields = {"app": scope["app_name"], "user": scope["user_id"]}
    if set(scope) != {"app_name", "user_id"}:
        fields["scope"] = scope_key(dict(scope))
    return fields


def _scope_text(scope: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(scope.items()))


def _user_link(view: View, scope: Mapping[str, str], text: object) -> Html:
    """A link to the user's page when the scope names an app and a user; else plain text."""
    if "app_name" in scope and "user_id" in scope:
        return link(view.user_url(scope), text)
    return esc(text)


def home(
    view: View,
    app: str | None,
    scopes: ScopePage,
    quarantined: Sequence[QuarantinedMemory],
    dead: Sequence[GenerateMemoriesOperation],
) -> str:
    """Pick an app and a user: the scopes with memories (of one app, when filtered), the
    quarantine queue and the dead letters of every scope."""
    pick = tag(
        "<form class=bar method=get action='{}'>"
        "<label>App <input type=text name=app value='{}'></label>"
        "<label>User <input type=text name=user></label><button>Open user</button>"
        "<span class=muted>(app alone: list its users)</span></form>",
        f"{view.base}/",
        app or "",
    )
    rows = [
        [
            _user_link(view, s, s.get("app_name", "-")),
            _user_link(view, s, s.get("user_id", "-")),
            _scope_text(s),
        ]
        for s in scopes.scopes
    ]
    more = (
        link(url(view.base, "/", app=app, after=scopes.next_page_token), "next page")
        if scopes.next_page_token
        else Html("")
    )
    held = [
        [_user_link(view, q.memory.scope, _scope_text(q.memory.scope)), q.rule or "-", q.reason,
         q.memory.fact]
        for q in quarantined
    ]  # fmt: skip
    failed = [
        [_user_link(view, d.scope, _scope_text(d.scope)), tag("<code>{}</code>", d.id), d.error]
        for d in dead
    ]
    body = join(
        [
            tag("<h1>{}</h1>", f"Users of {app}" if app else "Apps and users with memories"),
            pick,
            table(["App", "User", "Scope"], rows, empty="No memories yet."),
            more,
            Html("<h2>Quarantine queue (every user)</h2>"),
            table(["Scope", "Rule", "Reason", "Fact"], held, empty="Nothing quarantined."),
            Html("<h2>Dead letters (every user)</h2>"),
            table(["Scope", "Operation", "Error"], failed, empty="No failed generations."),
        ]
    )
    return view.render("Memory inspector", body)


def _source(view: View, scope: Mapping[str, str], memory: Memory | MemoryRevision) -> Html:
    kind = memory.source_type.value if memory.source_type else "-"
    if memory.source_session_id:
        session = view.session_link(scope, memory.source_session_id)
        return tag("{}<br><span class=muted>session {}</span>", kind, session)
    return esc(kind)


def _memory_rows(
    view: View, scope: Mapping[str, str], memories: Sequence[Memory], *, history: bool = True
) -> list[list[object]]:
    """One row per memory; with `history`, a link to its revision timeline last."""
    return [
        [
            m.fact,
            ", ".join(m.topics) or "-",
            number(m.confidence),
            number(m.importance),
            _source(view, scope, m),
            ago(m.create_time, view.now),
            ago(m.update_time, view.now),
            ttl(m.expire_time, view.now),
            *([link(url(view.base, "/memory", **scope_fields(scope), id=m.id), "history")]
              if history else []),
        ]
        for m in memories
    ]  # fmt: skip


_MEMORY_HEADERS = ["Fact", "Topics", "Confidence", "Importance", "Source", "Age", "Updated",
                   "TTL", "Revisions"]  # fmt: skip


def _profiles(profiles: Sequence[MemoryProfile]) -> Html:
    """Structured profiles (one per schema with a field set), each as its fields; nothing when
    the user has none."""
    if not profiles:
        return Html("")
    parts: list[Html] = [Html("<h2>Structured profiles</h2>")]
    for profile in profiles:
        rows = [[name, json.dumps(value, ensure_ascii=False, default=str)]
                for name, value in sorted(profile.profile.items())]  # fmt: skip
        parts.append(tag("<h3>{}</h3>", profile.schema_id))
        parts.append(table(["Field", "Value"], rows, empty="Empty."))
    return join(parts)


def user_page(
    view: View,
    scope: Mapping[str, str],
    *,
    memories: MemoryPage,
    query: str | None,
    results: Sequence[RetrievedMemory] | None,
    profiles: Sequence[MemoryProfile],
    quarantined: Sequence[QuarantinedMemory],
    operations: Sequence[GenerationJob],
    note: str | None,
    erasable: bool,
) -> str:
    """One user of one app (or a narrower scope of theirs): everything the inspector shows."""
    ids = scope_fields(scope)
    app, user = ids["app"], ids["user"]
    parts: list[Html] = [tag("<h1>{} <span class=muted>in</span> {}</h1>", user, app)]
    if "scope" in ids:
        parts.append(tag("<p class=muted>Scope {}</p>", _scope_text(scope)))
    if note in NOTES:
        parts.append(tag("<p class=note>{}</p>", NOTES[note]))
    parts.append(
        tag(
            "<form class=bar method=get action='{}'>{}"
            "<input type=search name=q value='{}' placeholder='Search as the agent does'>"
            "<button>Search</button></form>",
            f"{view.base}/user",
            hidden_fields(ids),
            query or "",
        )
    )
    if results is not None:
        rows = [[number(r.score), number(r.distance), r.memory.fact, ", ".join(r.memory.topics)]
                for r in results]  # fmt: skip
        parts.append(tag("<h2>Search results for “{}”</h2>", query))
        parts.append(table(["Score", "Distance", "Fact", "Topics"], rows, empty="No match."))
    parts.append(_profiles(profiles))
    parts.append(Html("<h2>Memories</h2>"))
    parts.append(
        table(_MEMORY_HEADERS, _memory_rows(view, scope, memories.memories), empty="None.")
    )
    if memories.next_page_token:
        parts.append(link(view.user_url(scope, page=memories.next_page_token), "next page"))
    parts.append(Html("<h2>Quarantined</h2>"))
    held = [
        [q.memory.fact, q.rule or "-", q.reason, ago(q.memory.create_time, view.now),
         _quarantine_actions(view, ids, q.memory.id)]
        for q in quarantined
    ]  # fmt: skip
    parts.append(table(["Fact", "Rule", "Reason", "Age", ""], held, empty="Nothing quarantined."))
    parts.append(Html("<h2>Generation operations</h2>"))
    ops = [
        [tag("<code>{}</code>", o.id), o.status, f"{o.attempts}/{o.max_attempts}", o.changes,
         o.quarantined, o.rejected, o.error or "", stamp(o.create_time),
         _retry_action(view, ids, o)]
        for o in operations
    ]  # fmt: skip
    headers = ["Operation", "Status", "Tries", "Changes", "Quarantined", "Refused", "Error",
               "Queued", ""]  # fmt: skip
    parts.append(table(headers, ops, empty="No generations."))
    if view.writable and erasable:
        parts.append(
            tag(
                "<h2>Erase</h2><div class=danger>Forget this user everywhere: sessions, "
                "memories, revisions, generation jobs. <a href='{}'>Erase this user…</a></div>",
                url(view.base, "/erase", app=app, user=user),
            )
        )
    return view.render(f"{user} in {app}", join(parts))


def _quarantine_actions(view: View, ids: Mapping[str, str], memory_id: str) -> Html:
    if not view.writable:
        return Html("")
    fields = {**ids, "id": memory_id}
    return join(
        [
            view.form("/quarantine/approve", fields, "Approve"),
            view.form("/quarantine/reject", fields, "Reject", danger=True),
        ]
    )


def _retry_action(view: View, ids: Mapping[str, str], operation: GenerationJob) -> Html:
    if not view.writable or operation.status != "dead":
        return Html("")
    return view.form("/operations/retry", {**ids, "id": operation.id}, "Retry")


def memory_page(
    view: View,
    scope: Mapping[str, str],
    memory: Memory | None,
    revisions: Sequence[MemoryRevision],
) -> str:
    """One memory and its revision timeline, oldest first: each change, what it did to the
    fact, its labels and the session that produced it."""
    parts: list[Html] = [
        tag("<h1>Memory <code>{}</code></h1>", revisions[0].memory_id if revisions else "?"),
        tag("<p>{}</p>", link(view.user_url(scope), f"← {_scope_text(scope)}")),
    ]
    if memory is not None:
        current = _memory_rows(view, scope, [memory], history=False)
        parts.append(table(_MEMORY_HEADERS[:-1], current, empty=""))
    else:
        parts.append(Html("<p class=muted>Not live (deleted, expired or quarantined).</p>"))
    rows: list[list[object]] = []
    previous: str | None = None
    for revision in revisions:
        rows.append(
            [
                stamp(revision.create_time),
                revision.action.value,
                _change(previous, revision),
                ", ".join(f"{k}={v}" for k, v in sorted(revision.labels.items())) or "-",
                _source(view, scope, revision),
                join(tag("<div>{}</div>", f) for f in revision.extracted_facts) or "-",
            ]
        )
        previous = revision.fact if revision.fact is not None else previous
    parts.append(Html("<h2>Revision timeline</h2>"))
    headers = ["When", "Action", "Fact", "Labels", "Source", "Extracted facts"]
    parts.append(table(headers, rows, empty="No revisions (expired, or no such memory)."))
    return view.render("Memory history", join(parts))


def _change(previous: str | None, revision: MemoryRevision) -> Html:
    """What a revision did to the fact: the new fact, with the old one struck when it changed."""
    if previous is not None and revision.fact is not None and revision.fact != previous:
        return tag("<del>{}</del><br><ins>{}</ins>", previous, revision.fact)
    if previous is not None and revision.fact == previous and revision.action.value == "UPDATED":
        return tag("{} <span class=muted>(fact unchanged)</span>", revision.fact)
    return esc(revision.fact)


def erase_confirm(view: View, app: str, user: str, error: str | None = None) -> str:
    """The confirmation step: the erasure runs only when the user id is typed again."""
    body = join(
        [
            tag("<h1>Erase {} <span class=muted>in</span> {}?</h1>", user, app),
            tag("<p class=error>{}</p>", error) if error else Html(""),
            Html(
                "<div class=danger><p>This forgets the user everywhere: their sessions with "
                "their events and state, their memories (quarantined ones too) with their "
                "revisions, and their generation jobs. It cannot be undone; the record kept "
                "holds counts only.</p>"
            ),
            tag(
                "<form method=post action='{}'>{}<label>Type the user id to confirm: "
                "<input type=text name=confirm autocomplete=off></label> "
                "<button class=danger>Erase</button></form></div>",
                f"{view.base}/erase",
                hidden_fields({"app": app, "user": user, TOKEN_FIELD: view.token}),
            ),
            tag("<p>{}</p>", link(view.user_url(user_scope(app, user)), "Cancel")),
        ]
    )
    return view.render(f"Erase {user}", body)


def erased(view: View, app: str, user: str, counts: Mapping[str, int]) -> str:
    rows = [[kind, count] for kind, count in sorted(counts.items())]
    body = join(
        [
            tag("<h1>Erased {} <span class=muted>in</span> {}</h1>", user, app),
            table(["Kind", "Deleted"], rows, empty="Nothing was stored."),
            tag("<p>{}</p>", link(f"{view.base}/", "Back to the inspector")),
        ]
    )
    return view.render(f"Erased {user}", body)


def problem(view: View, message: str) -> str:
    """A page for a request the inspector refuses (bad input, missing token, read-only)."""
    return view.render("Refused", tag("<p class=error>{}</p>", message))
