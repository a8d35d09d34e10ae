"""The inspector's Audit page: the audit of operator access, newest first, one page at a time.

Owns: how the audit records show (when, who, what kind, the scope's key, the memory a page
showed, counts), the filter form (kind, principal) and the link to the next page. Records hold
no content, so the page shows none. Every value goes through `markup` (escaped). It never
reads or writes data (the router does).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...memory.service.audit import KINDS
from ...memory.store.audit import AuditRecord
from .markup import Html, join, link, stamp, table, tag, url
from .views import View


def _options(chosen: str | None) -> Html:
    """The kind filter's choices, the chosen one selected."""
    choices = [tag("<option value=''>{}</option>", "any kind")]
    for kind in KINDS:
        selected = " selected" if kind == chosen else ""
        choices.append(tag("<option value='{}'" + selected + ">{}</option>", kind, kind))
    return join(choices)


def audit_page(
    view: View,
    records: Sequence[AuditRecord],
    *,
    kind: str | None,
    principal: str | None,
    next_page: str | None,
) -> str:
    """The records of this page, the filters, and the next page's link when there is one."""
    form = tag(
        "<form class=bar method=get action='{}'>"
        "<label>Kind <select name=kind>{}</select></label>"
        "<label>Principal <input type=text name=principal value='{}'></label>"
        "<button>Filter</button></form>",
        f"{view.base}/audit",
        _options(kind),
        principal or "",
    )
    rows = [
        [
            stamp(r.time),
            r.principal,
            r.kind,
            tag("<code>{}</code>", r.scope_key) if r.scope_key else "-",
            tag("<code>{}</code>", r.memory_id) if r.memory_id else "-",
            ", ".join(f"{name}: {count}" for name, count in sorted(r.counts.items())) or "-",
        ]
        for r in records
    ]
    more = (
        link(url(view.base, "/audit", kind=kind, principal=principal, page=next_page), "next page")
        if next_page
        else Html("")
    )
    body = join(
        [
            Html("<h1>Audit of operator access</h1>"),
            tag(
                "<p class=muted>{}</p>",
                "Who read, exported, erased, approved, rejected, retried or opted out what, "
                "newest first. Never content; an erased user's records keep their counts.",
            ),
            form,
            table(
                ["When", "Principal", "Kind", "Scope", "Memory", "Counts"],
                rows,
                empty="No audit records.",
            ),
            more,
        ]
    )
    return view.render("Audit", body)
