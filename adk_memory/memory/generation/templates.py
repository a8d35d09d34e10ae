"""Loading of the prompt templates that live next to this module, in `prompts/*.md`.

Owns: finding and parsing the templates (package data, read through importlib.resources so they
work from a wheel or a zip), and the one field two prompts share (`date_guidance`: extraction's
and the profiles'). It never fills a template in: each caller substitutes its own fields.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from importlib.resources import files
from string import Template

_PACKAGE = __name__.rpartition(".")[0]


@cache
def load_template(name: str) -> Template:
    """The `prompts/<name>.md` template, read once per process."""
    resource = files(_PACKAGE).joinpath("prompts").joinpath(f"{name}.md")
    text = resource.read_text(encoding="utf-8")
    return Template(text.strip() + "\n")


def date_guidance(now: datetime | None) -> str:
    """How a prompt tells the model to write dates: as calendar dates when the conversation's
    date is known (`now`), else kept as said."""
    if now is None:
        return 'Keep relative dates ("tomorrow") as said: the conversation\'s date is unknown.'
    return (
        f'The conversation took place on {now:%A %Y-%m-%d}: write relative dates ("tomorrow", '
        '"next week") as calendar dates.'
    )
