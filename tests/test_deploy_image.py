"""What can be checked of the deployment's image without building it (Docker does not run in
the test environment): the Dockerfile builds from a user's repository holding a copy of
`deploy/` (with a wheel of adk-memory: it is not on the package index yet), `.dockerignore`,
`.gcloudignore` and their own agents (and from this repository, for development); the packages
are pinned; `.dockerignore` and `.gcloudignore` keep the virtualenv, the embedded database, git
and caches out of the build and let the wheel through; and what the package ships for users
(LICENSE, py.typed)."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
DOCKERFILE = REPO / "deploy" / "Dockerfile"
WHEEL = "adk_memory-0.1.0-py3-none-any.whl"
"""What `pip wheel --no-deps -w deploy/wheels PATH/TO/adk-memory` writes."""


def _instructions() -> list[list[str]]:
    """The Dockerfile's instructions, one list of words each (continuations joined)."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    return [line.split() for line in text.splitlines() if line.strip() and line[0] != "#"]


def _sources(arguments: Mapping[str, str]) -> Iterator[str]:
    """Every COPY source (from the build context), with the build arguments filled in."""
    lines = _instructions()
    defaults = dict(word.split("=", 1) for line in lines if line[0] == "ARG" for word in line[1:])
    values = {**defaults, **arguments}
    for line in lines:
        if line[0] == "COPY" and not line[1].startswith("--from"):
            for source in line[1:-1]:
                yield re.sub(r"\$\{(\w+)\}", lambda m: values[m[1]], source)


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: a path is left out when a pattern matches it or one of its directories
    (`**` matches any number of directories; the last matching pattern wins, `!` re-includes)."""
    parts = path.split("/")
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        words = pattern.lstrip("!").strip("/").split("/")
        if any(_match(words, parts[:end]) for end in range(1, len(parts) + 1)):
            ignored = not negate
    return ignored


def _match(words: list[str], parts: list[str]) -> bool:
    if not words:
        return not parts
    if words[0] == "**":
        return any(_match(words[1:], parts[start:]) for start in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], words[0]) and _match(words[1:], parts[1:])


def _dockerignore() -> list[str]:
    lines = (REPO / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@pytest.fixture
def user_repository(tmp_path: Path) -> Path:
    """A user's repository as the deploy README describes it: deploy/, .dockerignore and
    .gcloudignore copied from here, a wheel of adk-memory in deploy/wheels/, their own agents in
    ./agents, nothing of adk-memory's source."""
    shutil.copytree(REPO / "deploy", tmp_path / "deploy", ignore=shutil.ignore_patterns("wheels"))
    (tmp_path / "deploy" / "wheels").mkdir()
    (tmp_path / "deploy" / "wheels" / WHEEL).write_bytes(b"")
    for name in (".dockerignore", ".gcloudignore"):
        shutil.copy(REPO / name, tmp_path / name)
    agent = tmp_path / "agents" / "my_agent"
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text("root_agent = None\n")
    return tmp_path


def test_the_image_builds_from_a_users_repository(user_repository: Path) -> None:
    """With the default build arguments every COPY source is in the user's repository (their
    agents, the copied deploy/ with the wheel), uploaded by `gcloud builds submit` and sent to
    the builder, and pip installs adk-memory from that wheel under the constraints file, as a
    non-root user runs the app."""
    for source in _sources({}):
        assert (user_repository / source).exists(), source
        assert not _ignored(source, _dockerignore()), source
        assert not _gcloud_ignored(source), source
    lines = _instructions()
    [pip] = [line for line in lines if line[0] == "RUN" and "pip" in line]
    assert pip[pip.index("--constraint") + 1] == "deploy/constraints.txt"
    assert pip[-1] == '"$@"' and pip[:4] == ["RUN", "set", "--", "$ADK_MEMORY;"]
    [default] = [line[1] for line in lines if line[:1] == ["ARG"] and "ADK_MEMORY=" in line[1]]
    wheels = default.removeprefix("ADK_MEMORY=")
    assert [p.name for p in user_repository.glob(wheels)] == [WHEEL]
    for ignored in (_ignored(wheels, _dockerignore()), _gcloud_ignored(wheels)):
        assert not ignored
    assert "deploy/wheels" not in (REPO / ".gitignore").read_text()  # a build from git has it
    assert not (user_repository / "pyproject.toml").exists()  # nothing of the source needed
    users = [line[1] for line in lines if line[0] == "USER"]
    assert users and users[-1] not in ("root", "0")
    command = next(line for line in lines if line[0] == "CMD")
    module = re.search(r'"-m", "([\w.]+)"', " ".join(command))
    assert module and (REPO / (module[1].replace(".", "/") + ".py")).exists()
    cloudbuild = (REPO / "deploy" / "cloudbuild.yaml").read_text()
    assert f"_{default.replace('=', ': ', 1)}" in cloudbuild  # Cloud Build's default is the same


def test_the_development_build_uses_this_repositorys_example_agent() -> None:
    for source in _sources({"AGENTS": "deploy/agents"}):
        assert (REPO / source).exists(), source
    cloudbuild = (REPO / "deploy" / "cloudbuild.yaml").read_text()
    assert "AGENTS=${_AGENTS}" in cloudbuild and "ADK_MEMORY=${_ADK_MEMORY}" in cloudbuild
    assert "_AGENTS: agents" in cloudbuild


def test_every_entry_point_the_runbook_names_exists() -> None:
    readme = (REPO / "deploy" / "README.md").read_text()
    modules = set(re.findall(r"-m,?\s?(deploy\.\w+)", readme))
    assert modules >= {"deploy.main", "deploy.worker", "deploy.migrate", "deploy.sweep"}
    for module in modules:
        assert (REPO / (module.replace(".", "/") + ".py")).exists(), module


def test_dockerignore_keeps_out_the_venv_the_embedded_database_git_and_caches() -> None:
    patterns = _dockerignore()
    for path in (
        ".venv/lib/python3.11/site-packages/x.py",
        ".adk/pgdata/PG_VERSION",
        "agents/.adk/pgdata/base/1",
        ".git/HEAD",
        "adk_memory/__pycache__/env.cpython-311.pyc",
        "agents/my_agent/__pycache__/agent.cpython-311.pyc",
        ".pytest_cache/v/cache",
        ".mypy_cache/3.11/x.json",
        ".ruff_cache/content",
        ".hypothesis/examples/x",
        "adk_memory.egg-info/PKG-INFO",
        ".env",
        "agents/my_agent/.env",
    ):
        assert _ignored(path, patterns), path
    for path in (
        "deploy/Dockerfile",
        "deploy/constraints.txt",
        "deploy/main.py",
        "deploy/wheels/adk_memory-0.1.0-py3-none-any.whl",
        "agents/my_agent/agent.py",
        "deploy/agents/assistant/agent.py",
    ):
        assert not _ignored(path, patterns), path


def _gcloud_ignored(path: str) -> bool:
    """Whether `gcloud builds submit` leaves `path` out: .gcloudignore's patterns, read as
    .gitignore's are (no slash but a trailing one: any directory or file of that name, at any
    depth; a leading slash: from the root; a trailing slash: directories only)."""
    lines = (REPO / ".gcloudignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    parts = path.split("/")
    for pattern in patterns:
        directory_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        # What the pattern may match: a directory above the path, or the path itself.
        candidates = range(1, len(parts)) if directory_only else range(1, len(parts) + 1)
        for end in candidates:
            if "/" in pattern:
                if fnmatchcase("/".join(parts[:end]), pattern.lstrip("/")):
                    return True
            elif fnmatchcase(parts[end - 1], pattern):
                return True
    return False


def test_gcloudignore_uploads_what_the_build_needs_and_nothing_local() -> None:
    for path in (
        ".venv/lib/python3.11/site-packages/x.py",
        ".adk/pgdata/PG_VERSION",
        "agents/.adk/pgdata/base/1",
        ".git/HEAD",
        "adk_memory/__pycache__/env.cpython-311.pyc",
        ".pytest_cache/v/cache",
        "adk_memory.egg-info/PKG-INFO",
        "dist/adk_memory-0.1.0-py3-none-any.whl",
        ".env",
        "agents/my_agent/.env",
    ):
        assert _gcloud_ignored(path), path
    for path in (
        ".dockerignore",
        "deploy/Dockerfile",
        "deploy/constraints.txt",
        "deploy/main.py",
        f"deploy/wheels/{WHEEL}",
        "agents/my_agent/agent.py",
        "deploy/agents/assistant/agent.py",
        "adk_memory/db/embedded.py",
        "pyproject.toml",
    ):
        assert not _gcloud_ignored(path), path


def _runtime_requirements() -> dict[str, str]:
    """adk-memory's dependencies, recursively (no extras), as installed here: name -> version."""
    found: dict[str, str] = {}
    pending: list[tuple[str, frozenset[str]]] = [("adk-memory", frozenset())]
    while pending:
        name, extras = pending.pop()
        dist = importlib.metadata.distribution(name)
        key = canonicalize_name(name)
        if key in found and not extras:
            continue
        found[key] = dist.version
        for raw in dist.requires or []:
            requirement = Requirement(raw)
            marker = requirement.marker
            if marker and not any(marker.evaluate({"extra": e}) for e in extras or {""}):
                continue
            pending.append((requirement.name, frozenset(requirement.extras)))
    return found


def test_constraints_pin_every_package_the_image_installs() -> None:
    pins: dict[str, str] = {}
    for line in (REPO / "deploy" / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, f"not pinned: {line!r}"
            pins[canonicalize_name(name)] = version
    missing = sorted(set(_runtime_requirements()) - set(pins))
    assert not missing, f"add to deploy/constraints.txt: {missing}"


def test_the_package_ships_its_license_and_type_information() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert "Apache License" in (REPO / "LICENSE").read_text()
    assert project["project"]["license-files"] == ["LICENSE"]
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["adk_memory"]
    assert (REPO / "adk_memory" / "py.typed").exists()
    # The `vertex` extra is the Vertex AI import's client, and what its error tells users to add.
    [client] = project["project"]["optional-dependencies"]["vertex"]
    assert client.startswith("google-cloud-aiplatform")
    assert (
        'pip install "adk-memory[vertex]"'
        in (REPO / "adk_memory" / "adk" / "vertex_source.py").read_text()
    )
    assert (REPO / "CHANGELOG.md").read_text().startswith("# Changelog")
