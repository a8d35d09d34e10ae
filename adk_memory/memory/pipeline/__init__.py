"""The generation pipeline: a queued job's payload -> memories, in three phases (read, decide,
write) orchestrated by `Generator` (`run`).

Modules: `payload` (the typed job: one variant per kind, and their builders), `kinds` (what
differs by kind: one handler per variant), `read` (the job's reads), `decide` (the guard's
judgement and the plan), `write` (the plan and the job's completion in one transaction), `run`
(the orchestration). Arrows: run -> read, kinds, decide, write; decide -> kinds; kinds, read,
write -> payload and the stores; nothing here imports the service, and the stores never import
this package.
"""

from .payload import (
    JOB_PAYLOADS,
    PROCEDURE_SOURCE,
    ContentsPayload,
    FactsPayload,
    JobPayload,
    ProcedurePayload,
    SessionPayload,
    contents_payload,
    facts_payload,
    procedure_payload,
    session_payload,
)
from .run import Generator, ProcedureGenerator

__all__ = [
    "JOB_PAYLOADS",
    "PROCEDURE_SOURCE",
    "ContentsPayload",
    "FactsPayload",
    "Generator",
    "JobPayload",
    "ProcedureGenerator",
    "ProcedurePayload",
    "SessionPayload",
    "contents_payload",
    "facts_payload",
    "procedure_payload",
    "session_payload",
]
