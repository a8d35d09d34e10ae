"""What the memory redesign (issue 24) must not have changed for users, checked from outside.

Each test is one way a user, a deployment or ADK reached the package before the redesign:
the old worker entry's options (`-h` included), the module paths users imported, and the
samples and deployment code importing without a deprecation warning of ours.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from adk_memory import PostgresMemoryService, PostgresSessionService
from adk_memory.errors import InputTypeError, InputValidationError
from adk_memory.memory import MemoryFact

ROOT = Path(__file__).resolve().parents[1]

OLD_MODULE_PATHS = (
    "adk_memory.memory.service",
    "adk_memory.memory.store",
    "adk_memory.memory.guard",
    "adk_memory.memory.generation",
    "adk_memory.memory.screen",
    "adk_memory.memory.jobs",
    "adk_memory.env",
    "adk_memory.uri",
    "adk_memory.worker",
    "adk_memory.eval.retrieval",
    "adk_memory.eval.generation",
    "adk_memory.db.engine",
)


def _python(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


@pytest.mark.parametrize("option", ["-h", "--help"])
def test_the_old_worker_entry_takes_both_help_options(option: str) -> None:
    """Its argparse parser took `-h`; the click command it became takes it too (as
    `adk-memory worker -h` does), instead of failing with "No such option"."""
    done = _python("-m", "adk_memory.worker", option)
    assert done.returncode == 0, done.stderr
    assert "Usage: python -m adk_memory.worker [OPTIONS]" in done.stdout


def test_old_module_paths_import_without_a_warning() -> None:
    done = _python("-c", "; ".join(f"import {module}" for module in OLD_MODULE_PATHS))
    assert done.returncode == 0, done.stderr


def test_the_public_names_star_import_without_a_warning() -> None:
    done = _python("-c", "from adk_memory import *; import adk_memory; adk_memory.configure")
    assert done.returncode == 0, done.stderr


def test_a_wrong_model_or_session_ttl_type_is_a_typed_type_error() -> None:
    """Raw `TypeError`s before (ADK's registry, a comparison); typed now, still TypeErrors."""
    with pytest.raises(InputTypeError, match="llm must be a model name or an ADK BaseLlm"):
        PostgresMemoryService("postgresql://u:p@localhost/db", llm=5)  # type: ignore[arg-type]
    with pytest.raises(InputTypeError, match="session_ttl must be a datetime\\.timedelta"):
        PostgresSessionService("postgresql://u:p@localhost/db", session_ttl="2h")  # type: ignore[arg-type]


async def test_an_unknown_source_type_is_an_input_error_and_writes_nothing(
    make_memory_service: Callable[..., PostgresMemoryService],
) -> None:
    """A raw `ValueError` of the enum before; `InputValidationError` (a ValueError) now."""
    service = make_memory_service()
    scope = {"app_name": "a", "user_id": "u"}
    with pytest.raises(InputValidationError, match="Unknown source_type 'zz'"):
        await service.create_memory("Likes tea.", scope, source_type="zz")  # type: ignore[arg-type]
    with pytest.raises(InputValidationError, match="Unknown source_type 'zz'"):
        await service.create_memories([MemoryFact("Likes tea.", source_type="zz")], scope)  # type: ignore[arg-type]
    assert (await service.list_memories(scope)).memories == []


async def test_a_call_that_fits_no_signature_names_the_service_method() -> None:
    """The service's methods delegate to components; a wrong call is still Python's
    `TypeError` about `PostgresMemoryService.<method>()`, not about a component's."""
    service = PostgresMemoryService("postgresql://u:p@localhost/db")
    scope = {"app_name": "a", "user_id": "u"}
    with pytest.raises(TypeError, match=r"^PostgresMemoryService\.create_memory\(\): multiple"):
        await service.create_memory(scope, fact="Likes tea.")  # type: ignore[call-arg, arg-type, misc]
    with pytest.raises(TypeError, match=r"^PostgresMemoryService\.search_memory\(\): too many"):
        await service.search_memory("a", "u", "tea")  # type: ignore[call-arg]
