"""ADK's constructor spellings: what `DatabaseSessionService(...)` accepts (`db_url=`,
`db_engine=`, SQLAlchemy engine options as keyword arguments), our session and memory services
accept too, with the same meaning, on the test database; giving one thing twice, or an option
that is no engine option, is a clear error before anything is built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import TEST_SCHEMA
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.sessions.database_session_service import DatabaseSessionService
from sqlalchemy.ext.asyncio import AsyncEngine

from adk_memory import PostgresMemoryService, PostgresSessionService

SERVICES = [PostgresSessionService, PostgresMemoryService]
SCOPE = {"app_name": "spellings", "user_id": "u1"}


async def _works(service: Any) -> None:
    """One round trip through the service's database."""
    if isinstance(service, PostgresSessionService):
        created = await service.create_session(app_name="spellings", user_id="u1")
        assert await service.get_session(app_name="spellings", user_id="u1", session_id=created.id)
    else:
        memory = await service.create_memory("Prefers tea.", SCOPE)
        assert await service.get_memory(memory.id, SCOPE)


@pytest.mark.parametrize(
    "spelling",
    [
        pytest.param(lambda url, engine: ((), {"db_url": url}), id="db_url="),
        pytest.param(lambda url, engine: ((url,), {"pool_size": 3}), id="url, pool_size=3"),
        pytest.param(
            lambda url, engine: ((), {"db_url": url, "pool_size": 3, "max_overflow": 1}),
            id="db_url=, pool options",
        ),
        pytest.param(lambda url, engine: ((), {"db_engine": engine}), id="db_engine="),
    ],
)
@pytest.mark.parametrize("service_type", SERVICES, ids=lambda t: t.__name__)
async def test_adks_spellings_work_on_our_services(
    spelling: Callable[[str, AsyncEngine], tuple[tuple[Any, ...], dict[str, Any]]],
    service_type: type,
    database_url: str,
    engine: AsyncEngine,
    make_memory_service: Any,
) -> None:
    args, kwargs = spelling(database_url, engine)
    DatabaseSessionService(*args, **kwargs)  # ADK's own service takes the same call
    service = service_type(*args, schema=TEST_SCHEMA, **kwargs)
    async with service:
        await _works(service)
        built = await service.database.engine()
        if "db_engine" in kwargs:
            assert built is engine
        if "pool_size" in kwargs:
            assert built.pool.size() == 3
    if "db_engine" in kwargs:
        assert not engine.sync_engine.pool.checkedout()  # a shared engine is left open


@pytest.mark.parametrize("service_type", SERVICES, ids=lambda t: t.__name__)
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"database_url": "postgresql://a@h/d", "db_url": "postgresql://a@h/d"},
            InputValidationError,
            "database_url or db_url",
        ),
        ({"engine": "E", "db_engine": "E"}, InputValidationError, "engine or db_engine"),
        ({"db_engine": "E", "pool_size": 5}, InputValidationError, "an engine passed in"),
        (
            {"db_url": "postgresql://a@h/d", "pool_size": 5, "engine_kwargs": {"pool_size": 2}},
            InputValidationError,
            "pool_size given both",
        ),
        ({"db_url": "postgresql://a@h/d", "pool_size": "five"}, InputValidationError, "five"),
        ({"db_url": "postgresql://a@h/d", "pool_sise": 5}, TypeError, "pool_sise"),
    ],
)
def test_a_spelling_given_twice_or_unknown_is_a_clear_error(
    service_type: type, kwargs: dict[str, Any], error: type[Exception], message: str, engine
) -> None:
    kwargs = {k: engine if v == "E" else v for k, v in kwargs.items()}
    with pytest.raises(error, match=message):
        service_type(**kwargs)
