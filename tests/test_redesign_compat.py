"""What the memory redesign (issue 24) must not have changed for users, checked from outside.

Each test is one way a user, a deployment or ADK reached the package before the redesign:
the old worker entry's options (`-h` included), the module paths users imported, and the
samples and deployment code importing without a deprecation warning of ours.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
