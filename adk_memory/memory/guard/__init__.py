"""The memory guard: the check every fact passes before the memory service writes it.

Owns: the public names, re-exported from one module each:
- `verdict.py`: the `MemoryGuard` protocol (one async `check`), its verdict (`GuardVerdict`:
  allow, reject or quarantine, with a rule id and a reason), `SOURCES`, `NoGuard` (allows
  everything: the guard switched off);
- `default.py`: `DefaultMemoryGuard`, deterministic rules against memory poisoning (text that
  tries to act on the model once it is recalled into a prompt); its class docstring lists every
  rule. It puts together `normalise.py` (the views that undo obfuscation), `rules.py` (the form
  of a rule), `rules_structure.py` (delimiters, role markers, tool calls), `rules_language.py`
  (overrides, persona changes, exfiltration, rules addressed to the assistant), `rules_intent.py`
  (what a fact asks the model to do: authority claims, voided instructions, leaks, commands,
  text addressed to the model), `rules_concepts.py` with `lexicon.py` (intent towards the
  model as co-occurring concepts in 27 languages) and `encoded.py` (instructions hidden in an
  encoding), with
  `cues.py` (the pre-filter: a rule module whose cues a fact lacks is skipped);
- `model_armor.py`: `ModelArmorGuard`, the same question asked of Google Cloud Model Armor;
- `model.py`: `ModelMemoryGuard`, the same question asked of any ADK `BaseLlm`, one call per
  batch of facts, with structured verdicts;
- `chain.py`: `ChainedGuard` (the rules first, another guard for what they let through or were
  unsure of) and `check_all` (the verdicts on facts written together: a guard's own
  `check_batch` when it has one, as `DefaultMemoryGuard`'s, which also reads neighbours as one
  text; else fact by fact).

It never stores, reads or deletes memories, never raises on hostile text (every string gets a
verdict), never puts the fact's text in a verdict (reasons are safe to log and to keep in a
revision label), never calls a model or the network in `DefaultMemoryGuard` (only
`ModelMemoryGuard` and `ModelArmorGuard` do, when built), and never imports
`google-cloud-modelarmor` unless a `ModelArmorGuard` is built.
"""

from .chain import ChainedGuard, check_all
from .default import DEFAULT_DELIMITERS, DEFAULT_MAX_CHARS, DefaultMemoryGuard
from .model import ModelMemoryGuard
from .model_armor import ModelArmorGuard
from .verdict import SOURCES, GuardAction, GuardVerdict, MemoryGuard, NoGuard

__all__ = [
    "DEFAULT_DELIMITERS",
    "DEFAULT_MAX_CHARS",
    "SOURCES",
    "ChainedGuard",
    "DefaultMemoryGuard",
    "GuardAction",
    "GuardVerdict",
    "MemoryGuard",
    "ModelArmorGuard",
    "ModelMemoryGuard",
    "NoGuard",
    "check_all",
]
