"""`adk-memory db roles`: create the least-privilege roles and apply their grants.

Owns: the command's options, where LOGIN users' passwords come from (the environment or stdin,
never an option: a command line is visible to every user of the machine) and its report. The
roles, the grant table and the SQL are `db.roles`'; this module never writes SQL.
"""

from __future__ import annotations

import sys

import click

from ..db.roles import DEFAULT_PREFIX, ROLES, Login, Plan, apply_roles
from ..errors import InputValidationError
from ..settings.variables import ROLE_PASSWORD_ENV, environment, role_password
from .options import Target, database_options, run, user_errors
from .output import note


def _users(pairs: tuple[str, ...], prefix: str, create: bool) -> dict[str, str]:
    """ROLE -> LOGIN user name: `--user ROLE=NAME`; with `--create-users` and no `--user`,
    every role's `<prefix><role>_user`."""
    users: dict[str, str] = {}
    for pair in pairs:
        role, _, name = pair.partition("=")
        if role not in ROLES or not name:
            raise InputValidationError(
                f"--user takes ROLE=NAME with ROLE one of {', '.join(ROLES)}, not {pair!r}."
            )
        users[role] = name
    if create and not users:
        users = {role: f"{prefix}{role}_user" for role in ROLES}
    return users


def _stdin_passwords() -> dict[str, str]:
    """`ROLE=PASSWORD` lines from stdin (blank lines ignored)."""
    passwords: dict[str, str] = {}
    for line in sys.stdin.read().splitlines():
        if not line.strip():
            continue
        role, sep, password = line.partition("=")
        if not sep or role.strip() not in ROLES or not password:
            raise InputValidationError(
                "--passwords-from-stdin reads ROLE=PASSWORD lines, ROLE one of "
                f"{', '.join(ROLES)}; one line is not."
            )
        passwords[role.strip()] = password
    return passwords


def _logins(users: dict[str, str], create: bool, from_stdin: bool) -> list[Login]:
    """The LOGIN users to make members; with `create`, each with its password (required)."""
    if not create:
        return [Login(role, name) for role, name in users.items()]
    given = _stdin_passwords() if from_stdin else {}
    environ = environment()
    logins = []
    for role, name in users.items():
        password = given.get(role) or role_password(environ, role)
        if password is None:
            raise InputValidationError(
                f"No password for the {role} user {name!r}: set "
                f"{ROLE_PASSWORD_ENV.format(role=role.upper())} or pass --passwords-from-stdin."
            )
        logins.append(Login(role, name, password))
    return logins


async def _apply(target: Target, prefix: str, logins: list[Login], dry_run: bool) -> Plan:
    database = target.database()
    try:
        async with database.connection() as conn:
            return await apply_roles(
                conn, target.schema, prefix=prefix, logins=logins, dry_run=dry_run
            )
    finally:
        await database.close()


@click.command()
@database_options
@click.option(
    "--prefix",
    default=DEFAULT_PREFIX,
    show_default=True,
    help="The group roles' names are PREFIX + agent, worker, maintenance, operator.",
)
@click.option(
    "--user",
    "user_pairs",
    multiple=True,
    metavar="ROLE=NAME",
    help=(
        "Make the LOGIN user NAME (e.g. one made by `gcloud sql users create`) a member of "
        "ROLE's group (repeatable)."
    ),
)
@click.option(
    "--create-users",
    is_flag=True,
    help=(
        "Create (or update the password of) the --user users; without --user, one per role "
        "named PREFIX + ROLE + _user. Passwords from $ADK_MEMORY_<ROLE>_PASSWORD or "
        "--passwords-from-stdin."
    ),
)
@click.option(
    "--passwords-from-stdin",
    is_flag=True,
    help="Read ROLE=PASSWORD lines from stdin (with --create-users).",
)
@click.option("--dry-run", is_flag=True, help="Print the SQL (passwords masked); change nothing.")
def roles(
    target: Target,
    prefix: str,
    user_pairs: tuple[str, ...],
    create_users: bool,
    passwords_from_stdin: bool,
    dry_run: bool,
) -> None:
    """Create the least-privilege roles and grant them what each process needs.

    NOLOGIN group roles: agent (the ADK runtime: its sessions, memories and enqueueing; no
    erasure, purge, sweep, prune, migration or DDL), worker (generation jobs), maintenance
    (owns the schema: migrations, sweeps, erasure) and operator (read-only). Safe to re-run,
    and to be re-run after `adk-memory migrate` adds tables: the grants are applied whole each
    time. Run it as the tables' owner (or an administrator: on Cloud SQL, postgres)."""
    with user_errors():
        users = _users(user_pairs, prefix, create_users)
        logins = _logins(users, create_users, passwords_from_stdin)
    plan = run(_apply(target, prefix, logins, dry_run))
    if dry_run:
        click.echo("\n".join(plan.shown))
    else:
        note(f"{len(plan.statements)} statements applied to schema {target.schema!r}.")
        for role, name in users.items():
            click.echo(f"{role}: {prefix}{role} (login: {name})")
    for table in plan.unknown_tables:
        note(
            f"Table {table!r} has no entry in adk-memory's grants: only maintenance may use "
            "it (upgrade adk-memory, or it is not adk-memory's)."
        )
