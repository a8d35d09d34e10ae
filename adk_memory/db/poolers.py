"""What says a connection pooler sits in front of the server when the URL did not.

Owns: recognising, from the errors a pooler gives a client that talks to it as to a server,
that one is there: PgBouncer refusing the server settings sent when connecting ("unsupported
startup parameter", in either pooling mode), or a transaction-mode pooler losing a named
prepared statement between two transactions (`InvalidSQLStatementNameError` on
`__asyncpg_stmt_...`, or a name another client already prepared on that server connection).
The engine then rebuilds its pool as for `?pooler=transaction` (right for both modes). It never
connects and never changes a URL's other parameters.
"""

from __future__ import annotations

import asyncpg
from sqlalchemy.engine import make_url

_STARTUP = "unsupported startup parameter"
_STATEMENTS = (
    asyncpg.exceptions.InvalidSQLStatementNameError,
    asyncpg.exceptions.DuplicatePreparedStatementError,
)


def pooler_symptom(exc: BaseException) -> str | None:
    """What in `exc` (or what it was raised from) shows a pooler, in a phrase; None if nothing."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, _STATEMENTS) and "__asyncpg_" in str(seen):
            return f"a prepared statement was lost between transactions ({seen})"
        if _STARTUP in str(seen):
            return f"the server refused the settings sent when connecting ({seen})"
        seen = seen.__cause__
    return None


def with_pooler(url: str, mode: str) -> str:
    """`url` (a normalised one) with `?pooler=mode`."""
    parsed = make_url(url).update_query_dict({"pooler": mode})
    return parsed.render_as_string(hide_password=False)
