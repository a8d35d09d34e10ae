"""The memory inspector: a small server-rendered web page for operators, as a FastAPI router.

Owns: the routes (pick an app and a user; a user's memories, search with scores, structured
profiles, quarantine, generation operations, a memory's revision timeline, erasure, the audit
of operator access), reading what they show through the memory service's public API (every
read names its scope), and the rules for writes: refused (403) unless the router was built
`writable`, and then only as a POST form from the inspector's own origin carrying the router's
form token (a cross-site page can neither read the token nor send it), each naming the user it
acts on, so an id alone never approves, retries or erases another user's data. Every page that
shows users' data, and every write, is audited (`PostgresMemoryService.record_access`;
approvals, rejections and erasures in their own transactions) as the request's principal
(`principal`; None: this process). It never writes SQL and keeps no state but the token. Pages
are plain HTML (`views`, escaped by `markup`): no JavaScript, no CDN.

    from adk_memory.adk.inspector import inspector_router
    app.include_router(inspector_router(memory_service, writable=False))   # /memory-inspector

`adk-memory web` / `api_server` mount it next to ADK's dev UI (`--memory-inspector`); the
deploy app mounts it when `ADK_MEMORY_INSPECTOR` says so, behind the service's own front.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Literal, cast
from urllib.parse import parse_qsl, urlsplit

from fastapi import APIRouter, Request
from fastapi.params import Depends
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from google.adk.errors.input_validation_error import (
    InputValidationError as AdkInputValidationError,
)

from ...errors import InputValidationError, NotFoundError, _Refused
from ...memory.scope import Scope, parse_scope, user_scope
from ...memory.service import PostgresMemoryService
from ...memory.service.audit import AuditKind, Principal, next_page_token
from ...sessions.service import PostgresSessionService
from ..erasure import erase_user
from . import audit_view, views
from .markup import TOKEN_FIELD

logger = logging.getLogger(__name__)

INSPECTOR_PATH = "/memory-inspector"
"""Where the inspector is served by default (next to ADK's `/dev-ui`)."""

InspectorMode = Literal["off", "read-only", "writable"]
"""How a server offers the inspector: not at all, to look only, or with its write forms."""

INSPECTOR_MODES: tuple[InspectorMode, ...] = ("off", "read-only", "writable")

DEV_UI_PATH = "/dev-ui/"
"""Where `adk web` serves ADK's dev UI; a conversation opens there with `?app=APP&userId=USER
&session=ID` (the query parameters the dev UI reads)."""

_PAGE_SIZE = 100
_LISTED = 50
"""Quarantined memories, operations and dead letters shown per section."""
_MAX_FORM_BYTES = 16_384

_HEADERS = {
    # No script runs, no resource loads, no other site frames the page (its buttons cannot be
    # clickjacked) and forms post only back here.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the
    # forms, which the origin checks (ours, ADK's) must refuse.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",  # users' data: never kept by a browser or a proxy
}


def inspector_router(
    memory_service: PostgresMemoryService,
    *,
    session_service: PostgresSessionService | None = None,
    writable: bool = False,
    token: str | None = None,
    prefix: str = INSPECTOR_PATH,
    dependencies: Sequence[Depends] | None = None,
    dev_ui: str | None = None,
    principal: Callable[[Request], Principal | None] | None = None,
) -> APIRouter:
    """The inspector's routes under `prefix`, for `app.include_router(...)`.

    Args:
      memory_service: what the pages read and the write forms change.
      session_service: with it, the erase button forgets the user's sessions too (ADK's own
        and adk-memory's: `adk_memory.adk.erasure.erase_user`); without it, there is no erase
        button (memory alone would leave the sessions the memories come from).
      writable: show the write forms (approve / reject, retry, erase) and accept them; off,
        every POST is refused with 403.
      token: the form token (any secret string); None: a random one per process. Several
        processes behind one address must share one, or a form rendered by one is refused by
        another.
      dependencies: FastAPI dependencies for every route, e.g. the host app's authentication.
      dev_ui: the path of ADK's dev UI on the same server (`DEV_UI_PATH` under `adk web`):
        the session a memory came from links to that conversation there; None: shown as text.
      principal: who a request is from (the front end's identity resolver), for the audit of
        operator access; None (or it returns None): the records name this process.
    """
    pages = _Pages(
        memory_service,
        session_service,
        writable=writable,
        form_token=token or secrets.token_urlsafe(32),
        base=prefix,
        dev_ui=dev_ui,
        principal=principal or _no_principal,
    )
    router = APIRouter(prefix=prefix, dependencies=list(dependencies or ()))
    for path, page in (
        ("", pages.root),
        ("/", pages.home),
        ("/user", pages.user_page),
        ("/memory", pages.memory_page),
        ("/erase", pages.erase_page),
        ("/audit", pages.audit_page),
    ):
        router.add_api_route(path, page, methods=["GET"], include_in_schema=False)
    for path, act in (
        ("/quarantine/approve", pages.approve),
        ("/quarantine/reject", pages.reject),
        ("/operations/retry", pages.retry),
        ("/erase", pages.erase),
    ):
        router.add_api_route(path, pages.write(act), methods=["POST"], include_in_schema=False)
    return router


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=_HEADERS)


def _back(v: views.View, scope: Scope, note: str) -> Response:
    """To the scope's page, saying what happened (303: the browser GETs it)."""
    return RedirectResponse(v.user_url(scope, note=note), 303)


Act = Callable[[views.View, dict[str, str], "Principal | None"], Awaitable[Response]]
"""A write: what a checked form (`_Pages.checked_form`) does as the request's principal, and
the page it answers with."""


def _no_principal(request: Request) -> Principal | None:
    """No identity resolver: every record names this process."""
    return None


class _Pages:
    """The routes of one inspector router: its GET pages and its writes (`Act`s), over what
    they all share (the services, whether writes are on, the form token, where the router and
    ADK's dev UI are served)."""

    def __init__(
        self,
        memory_service: PostgresMemoryService,
        session_service: PostgresSessionService | None,
        *,
        writable: bool,
        form_token: str,
        base: str,
        dev_ui: str | None,
        principal: Callable[[Request], Principal | None],
    ) -> None:
        self.memory = memory_service
        self.sessions = session_service
        self.writable = writable
        self.form_token = form_token
        self.base = base
        self.dev_ui = dev_ui
        self.principal = principal

    def view(self, request: Request) -> views.View:
        root = request.scope.get("root_path", "")
        where = root + self.dev_ui if self.dev_ui is not None else None
        now = datetime.now(timezone.utc)
        return views.View(root + self.base, self.form_token, self.writable, now, where)

    async def shown(
        self, request: Request, build: Callable[[views.View], Awaitable[str]]
    ) -> Response:
        """A page, or the refusal page for bad input (400)."""
        v = self.view(request)
        try:
            return _html(await build(v))
        except AdkInputValidationError as error:  # ours subclass ADK's
            return _html(views.problem(v, str(error)), 400)

    async def checked_form(self, request: Request) -> dict[str, str]:
        """The fields of a write the inspector accepts: writes on, a same-origin browser
        request (when the browser says where it comes from), and the form token."""
        if not self.writable:
            raise _Refused(403, "The memory inspector is read-only here: writes are not enabled.")
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise _Refused(403, "Refused: the form was not sent from the inspector's own page.")
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
            raise _Refused(403, "Refused: the form was sent from another origin.")
        body = await _bounded_body(request)
        fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        given = fields.get(TOKEN_FIELD, "").encode()  # bytes: any text compares, in constant time
        if not hmac.compare_digest(given, self.form_token.encode()):
            raise _Refused(403, "Refused: the form token is missing or stale; reload the page.")
        for name in ("app", "user"):
            if not fields.get(name):
                raise _Refused(400, f"Refused: the form names no {name}.")
        return fields

    def write(self, act: Act) -> Callable[[Request], Awaitable[Response]]:
        """The POST endpoint of `act`: the form checked first, refusals and bad input shown."""

        async def endpoint(request: Request) -> Response:
            v = self.view(request)
            try:
                return await act(v, await self.checked_form(request), self.principal(request))
            except _Refused as refused:
                return _html(views.problem(v, str(refused)), refused.status)
            except AdkInputValidationError as error:  # ours subclass ADK's
                return _html(views.problem(v, str(error)), 400)

        return endpoint

    # ------------------------------------------------------------------------------ pages

    async def root(self, request: Request) -> Response:
        return RedirectResponse(self.view(request).base + "/", 307)

    async def home(
        self,
        request: Request,
        app: str | None = None,
        user: str | None = None,
        after: str | None = None,
    ) -> Response:
        if app and user:
            scope = {"app_name": app, "user_id": user}
            return RedirectResponse(self.view(request).user_url(scope), 303)

        async def build(v: views.View) -> str:
            scopes = await self.memory.list_scopes(
                {"app_name": app} if app else None, page_size=_PAGE_SIZE, page_token=after
            )
            quarantined = await self.memory.list_quarantined(None, limit=_LISTED)
            dead = await self.memory.dead_letters(_LISTED)
            counts = {
                "scopes": len(scopes.scopes),
                "quarantined": len(quarantined),
                "dead_letters": len(dead),
            }
            await self.viewed(request, {"app_name": app} if app else None, counts)
            return views.home(v, app, scopes, quarantined, dead)

        return await self.shown(request, build)

    async def user_page(
        self,
        request: Request,
        app: str,
        user: str,
        scope: str | None = None,
        q: str | None = None,
        page: str | None = None,
        note: str | None = None,
    ) -> Response:
        async def build(v: views.View) -> str:
            chosen = scope_of(app, user, scope)
            memories = await self.memory.list_memories(
                chosen, page_size=_PAGE_SIZE, page_token=page
            )
            results = None
            if q and q.strip():  # the agent's retrieval: its settings, its top_k
                results = await self.memory.retrieve_memories(
                    chosen, search_query=q, top_k=self.memory.config.retrieval.top_k
                )
            profiles = await self.memory.retrieve_profiles(app_name=app, user_id=user)
            quarantined = await self.memory.list_quarantined(chosen, limit=_LISTED)
            operations = await self.memory.list_operations(chosen, limit=_LISTED)
            counts = {
                "memories": len(memories.memories),
                "results": len(results or ()),
                "profiles": len(profiles),
                "quarantined": len(quarantined),
                "operations": len(operations),
            }
            await self.viewed(request, chosen, counts)  # the query itself is never recorded
            return views.user_page(
                v,
                chosen,
                memories=memories,
                query=q,
                results=results,
                profiles=profiles,
                quarantined=quarantined,
                operations=operations,
                note=note,
                erasable=self.sessions is not None,
            )

        return await self.shown(request, build)

    async def memory_page(
        self, request: Request, app: str, user: str, id: str, scope: str | None = None
    ) -> Response:
        async def build(v: views.View) -> str:
            chosen = scope_of(app, user, scope)
            memory = await self.memory.get_memory(id, chosen)
            revisions = await self.memory.list_revisions(id, chosen)
            counts = {"memories": int(memory is not None), "revisions": len(revisions)}
            await self.viewed(request, chosen, counts, memory_id=id)
            return views.memory_page(v, chosen, memory, revisions)

        return await self.shown(request, build)

    async def erase_page(self, request: Request, app: str, user: str) -> Response:
        if not (self.writable and self.sessions is not None):
            message = "Erasure is not enabled in this inspector."
            return _html(views.problem(self.view(request), message), 403)

        async def build(v: views.View) -> str:
            user_scope(app, user)
            return views.erase_confirm(v, app, user)

        return await self.shown(request, build)

    async def audit_page(
        self,
        request: Request,
        kind: str | None = None,
        principal: str | None = None,
        page: str | None = None,
    ) -> Response:
        async def build(v: views.View) -> str:
            records = await self.memory.list_access(
                kind=cast(AuditKind, kind or None),
                principal=principal or None,
                page_token=page or None,
                limit=_PAGE_SIZE,
            )
            return audit_view.audit_page(
                v,
                records,
                kind=kind or None,
                principal=principal or None,
                next_page=next_page_token(records, _PAGE_SIZE),
            )

        return await self.shown(request, build)

    async def viewed(
        self,
        request: Request,
        scope: Mapping[str, str] | None,
        counts: Mapping[str, int],
        *,
        memory_id: str | None = None,
    ) -> None:
        """Audit a page that showed users' data: who, whose (the scope), how much; never
        what (no fact, no query)."""
        await self.memory.record_access(
            "page_view",
            scope,
            counts=counts,
            principal=self.principal(request),
            memory_id=memory_id,
        )

    # ----------------------------------------------------------------------------- writes

    async def approve(
        self, v: views.View, fields: dict[str, str], who: Principal | None
    ) -> Response:
        scope = scope_of(fields["app"], fields["user"], fields.get("scope"))
        try:
            await self.memory.approve_quarantined(fields.get("id", ""), scope, principal=who)
        except NotFoundError:
            return _back(v, scope, "not-found")
        return _back(v, scope, "approved")

    async def reject(
        self, v: views.View, fields: dict[str, str], who: Principal | None
    ) -> Response:
        scope = scope_of(fields["app"], fields["user"], fields.get("scope"))
        done = await self.memory.reject_quarantined(fields.get("id", ""), scope, principal=who)
        return _back(v, scope, "rejected" if done else "not-found")

    async def retry(self, v: views.View, fields: dict[str, str], who: Principal | None) -> Response:
        scope = scope_of(fields["app"], fields["user"], fields.get("scope"))
        done = await self.memory.retry_operation(fields.get("id", ""), scope)
        if not done:
            return _back(v, scope, "not-found")
        counts = {"operations": 1}
        await self.memory.record_access("dead_letter_retry", scope, counts=counts, principal=who)
        if self.memory.llm is None:
            # Queued for whichever worker has a model (a standalone one may); this process
            # cannot run it, so say so where the operator looks, not only on the page.
            logger.warning(
                "Generation %s of %s queued again, but this memory service has no generation "
                "model: it stays pending until a worker with a model runs it.",
                fields.get("id"),
                scope,
            )
            return _back(v, scope, "retried-no-model")
        return _back(v, scope, "retried")

    async def erase(self, v: views.View, fields: dict[str, str], who: Principal | None) -> Response:
        app, user = fields["app"], fields["user"]
        if self.sessions is None:
            raise _Refused(403, "Erasure is not enabled in this inspector.")
        if fields.get("confirm") != user:
            message = "Not erased: type the user id exactly to confirm."
            return _html(views.erase_confirm(v, app, user, message), 400)
        counts = await erase_user(
            app_name=app,
            user_id=user,
            session_service=self.sessions,
            memory_service=self.memory,
            principal=who,
        )
        return _html(views.erased(v, app, user, counts))


async def _bounded_body(request: Request) -> bytes:
    """The request's body, refused (413) as soon as it is known to pass `_MAX_FORM_BYTES`: by
    its declared length, else by the bytes counted as they arrive (a chunked body declares
    none), so no more than the cap plus one chunk is ever held, whatever is sent."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > _MAX_FORM_BYTES:
        raise _Refused(413, "Refused: the form is too large.")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > _MAX_FORM_BYTES:
            raise _Refused(413, "Refused: the form is too large.")
    return bytes(body)


def scope_of(app: str, user: str, scope: str | None) -> Scope:
    """The scope a page or a form names: the user's (`app`, `user`), or a narrower one of
    theirs given whole (`scope`, its canonical text); one that is not the user's is refused."""
    users = user_scope(app, user)
    if not scope:
        return users
    chosen = parse_scope(scope)
    if any(chosen.get(key) != value for key, value in users.items()):
        raise InputValidationError(f"Scope {scope} is not one of user {user!r} of app {app!r}.")
    return chosen


__all__ = [
    "DEV_UI_PATH",
    "INSPECTOR_MODES",
    "INSPECTOR_PATH",
    "InspectorMode",
    "inspector_router",
]
