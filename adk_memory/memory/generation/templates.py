"""Loading of the prompt templates that live next to this module, in `prompts/*.md`.

Owns: finding and parsing the templates (package data, read through importlib.resources so they
work from a wheel or a zip). It never fills them in: each caller substitutes its own fields.
"""

from __future__ import annotations

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
