"""How commands print: tables and JSON on stdout, progress on stderr.

Owns: the formats (so `--json` output and tables look the same in every command) and the rule
that stdout carries only results, so `adk-memory ... --json | jq` and `> export.jsonl` work while
progress and notes go to stderr. It never decides what to print.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import click
from pydantic import BaseModel

from .._text import plural as plural  # the commands' counts, worded as the worker's are


def to_json(value: Any) -> str:
    """One JSON document on one line (pydantic models as their JSON form)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, list):
        value = [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def echo_json(value: Any) -> None:
    click.echo(to_json(value))


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Columns padded to their widest cell; the last column is never padded."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers) - 1)]
    for row in [headers, *rows]:
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths, strict=False)]
        click.echo("  ".join([*cells, str(row[-1])]).rstrip())


def shorten(text: str, limit: int = 80) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def key_values(mapping: Mapping[str, Any]) -> str:
    """A scope or labels in one table cell, `app_name=shop,user_id=u1`: keys sorted, so a
    mapping reads the same whichever order the database returned it in."""
    return ",".join(f"{key}={mapping[key]}" for key in sorted(mapping))


def note(message: str) -> None:
    """A message for the person at the terminal, not for a pipe."""
    click.echo(message, err=True)


def held_in_quarantine(count: int) -> None:
    """Say how many written memories the guard holds back, and where to review them (nothing
    when none): a quarantined memory is stored but not live, never a silent success."""
    if count:
        note(
            f"{plural(count, 'memory', 'memories')} held in quarantine by the memory guard "
            "(not live until approved): review with `adk-memory memories quarantine list`."
        )


@contextmanager
def running_count(label: str) -> Iterator[Callable[[int], None]]:
    """A progress callback showing a running total on stderr when it is a terminal (silent in
    logs and pipes, where the final count is printed anyway); the line is ended on exit."""
    shown = False

    def show(total: int) -> None:
        nonlocal shown
        if sys.stderr.isatty():
            click.echo(f"\r{label}: {total}", nl=False, err=True)
            shown = True

    try:
        yield show
    finally:
        if shown:
            click.echo(err=True)
