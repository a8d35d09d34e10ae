"""HTML for the memory inspector: escaping, the page frame, tables and forms.

Owns: the one rule that every value reaches a page escaped (`Html` is text that is already
HTML; everything else goes through `html.escape` on its way in, so a fact such as
`<script>...</script>` is shown, never run), the page layout with its inlined stylesheet
(`inspector.css`, shipped in the wheel: no CDN, works offline), and the POST forms, which all
carry the router's form token. It never reads data and never decides what a page shows.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import cache
from importlib.resources import files
from urllib.parse import urlencode

TOKEN_FIELD = "token"
"""The form field every POST carries the router's token in."""


class Html(str):
    """Text that is already HTML (escaped, or built here from constant markup): never escaped
    again. Anything that is not `Html` is escaped wherever it is put into a page."""

    __slots__ = ()


def esc(value: object) -> Html:
    """`value` as HTML: `Html` as it is, anything else as escaped text (None: empty)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape("" if value is None else str(value), quote=True))


def tag(template: str, *values: object) -> Html:
    """`template` (constant markup with `{}` holes) with each value escaped into its hole."""
    return Html(template.format(*(esc(v) for v in values)))


def join(parts: Iterable[object]) -> Html:
    """Values (escaped unless `Html`) one after another."""
    return Html("".join(esc(p) for p in parts))


def url(base: str, path: str, **query: str | None) -> str:
    """A link inside the inspector, its query values URL-encoded (then escaped with the page)."""
    given = {name: value for name, value in query.items() if value is not None}
    return f"{base}{path}" + (f"?{urlencode(given)}" if given else "")


@cache
def _stylesheet() -> str:
    return files(__package__).joinpath("inspector.css").read_text(encoding="utf-8")


def page(title: str, body: Html, *, base: str, writable: bool) -> str:
    """A whole page: the header (home link, whether writes are on) and `body`."""
    mode = "writes enabled" if writable else "read-only"
    return tag(
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        "<title>{} · memory inspector</title><style>{}</style></head><body>"
        "<header><a href='{}'>Memory inspector</a> <a href='{}'>Audit</a>"
        "<span class=mode>{}</span></header>"
        "<main>{}</main></body></html>",
        title,
        Html(_stylesheet()),
        f"{base}/",
        f"{base}/audit",
        mode,
        body,
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, empty: str) -> Html:
    """A table of escaped cells (`Html` cells as they are), or the `empty` note."""
    if not rows:
        return tag("<p class=muted>{}</p>", empty)
    head = join(tag("<th>{}</th>", h) for h in headers)
    body = join(tag("<tr>{}</tr>", join(tag("<td>{}</td>", c) for c in row)) for row in rows)
    return tag("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)


def hidden_fields(fields: Mapping[str, str]) -> Html:
    """Hidden inputs carrying `fields` in a form."""
    return join(
        tag("<input type=hidden name='{}' value='{}'>", name, value)
        for name, value in fields.items()
    )


def post_form(
    action: str, token: str, fields: Mapping[str, str], label: str, *, danger: bool = False
) -> Html:
    """A one-button POST form with hidden `fields` and the form token."""
    hidden = hidden_fields({**fields, TOKEN_FIELD: token})
    button = "<button class=danger>{}</button>" if danger else "<button>{}</button>"
    return tag(
        "<form class=inline method=post action='{}'>{}" + button + "</form>", action, hidden, label
    )


def link(href: str, text: object) -> Html:
    """A link to `href` (a URL built by `url`) showing `text`."""
    return tag("<a href='{}'>{}</a>", href, text)


def ago(then: datetime, now: datetime) -> str:
    """How long before `now` `then` was, coarsely ("3 min", "2 d")."""
    return _span((now - then).total_seconds())


def ttl(expire: datetime | None, now: datetime) -> str:
    """Time left until `expire` ("never" without one, "expired" past it)."""
    if expire is None:
        return "never"
    left = (expire - now).total_seconds()
    return _span(left) if left > 0 else "expired"


def _span(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


def stamp(moment: datetime | None) -> str:
    """A time as the inspector shows it: UTC, to the second."""
    if moment is None:
        return "-"
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def number(value: float | None) -> str:
    """A score, confidence or importance to three decimals ("-": none)."""
    return "-" if value is None else f"{value:.3f}"
