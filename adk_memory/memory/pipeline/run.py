"""Runs one memory-generation job end to end, in three phases: read, decide, write.

Owns: the orchestration, in one place (`Generator.__call__`): the job's kind handler
(`kinds.handler_for`) and its material (after the session's watermark: `read`), extraction
(one model call), the guard's judgement (`decide`), the candidates (`read`), consolidation (one
model call), the profiles (one more, only with profile schemas: `read` then the model), the
trust rule on the targeted memories' history (`read`, then `trust.enforce`, pure), the
embeddings of what is written (one call), the plan (`decide`), and its write with the job's
completion in one transaction (`write`). At most two model calls per job (extraction,
consolidation) whatever the size of the store, and one more for the scope's structured
profiles (natural-language memories turned off: that one only). Reads never hold a connection
across a model call; nothing is committed outside the write phase, so a worker killed at any
point leaves no partial writes and the retried job produces the same memories once.

Privacy: a payload's events are redacted when it is built and again when it is read, so the
model never sees what the redactor removes; every fact the model writes is redacted and judged
before it is consolidated or stored; the job's result names memory ids and actions, never
facts. It never writes SQL: the stores do.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from google.adk.models.base_llm import BaseLlm

from ...config import MemoryBankConfig
from ...telemetry import traced
from ..generation import ExtractedFact, FieldChange, MemoryOperation, plain_creates, update_profiles
from ..jobs import ClaimedJob, JobQueue
from ..models import Memory
from ..policy import trust
from ..policy.screen import FactScreen
from ..store import MemoryStore
from ..store.profiles import ProfileStore
from ..store.support import SupportStore
from . import decide
from .kinds import Learner, Material, handler_for
from .payload import JobPayload
from .read import Embed, Reader
from .write import Writer


class Generator:
    """The job handler: one generation job of any kind, from payload to committed memories.

    Args:
      store, profiles, queue: the memory and profile stores and the job queue.
      llm: the generation model; embed: the embedder; config: the configuration the jobs run
        with; revision_ttl: how long revisions are kept (seconds, None: forever); screen: the
        service's redactor and guard.
      support: who supports which procedure (`procedure_support`); needed for procedure jobs.
    """

    def __init__(
        self,
        *,
        store: MemoryStore,
        profiles: ProfileStore,
        queue: JobQueue[Any],
        llm: BaseLlm,
        embed: Embed,
        config: MemoryBankConfig,
        revision_ttl: float | None,
        screen: FactScreen,
        support: SupportStore | None = None,
    ) -> None:
        self._llm = llm
        self._embed = embed
        self._config = config
        self._screen = screen
        self._read = Reader(
            store=store, profiles=profiles, support=support, embed=embed, config=config
        )
        self._writer = Writer(
            store=store,
            profiles=profiles,
            support=support,
            queue=queue,
            revision_ttl=revision_ttl,
            procedure_min_users=config.generation.procedure_min_users,
        )

    async def __call__(self, job: ClaimedJob[JobPayload]) -> None:
        """Run `job` (module docstring): its reads, its decisions, then its one write."""
        payload: JobPayload = job.payload  # validated when claimed (`JOB_PAYLOADS`)
        learner = handler_for(payload, job.scope, job.scope_key, self._screen, self._config)
        target = learner.target
        # READ what the job learns from, then DECIDE what it writes (model calls, the guard).
        material = learner.material(await self._read.watermark(target.key, learner.follows))
        judged = decide.Judged()
        extracted = (
            []
            if material.customization.disable_natural_language_memories
            else await self._extract(learner, material)
        )
        facts = await self._judged(learner, extracted, judged)
        exact = (
            dict(payload.metadata or {})
            if payload.metadata_merge_strategy == "REQUIRE_EXACT_MATCH"
            else None
        )
        operations, candidates = await self._operations(learner, facts, material, exact)
        operations = await decide.judge_operations(learner.screen, operations, target.scope, judged)
        profile = await self._profiles(learner, material, judged)
        targeted = set(trust.targets(operations))
        targets = {m.id: m for m in candidates if m.id in targeted}
        decisions = trust.enforce(
            operations,
            targets,
            await self._read.history(target.key, list(targets)),
            source_id=learner.source_id,
            trust=self._config.trust,
            now=datetime.now(timezone.utc),
        )
        creates = decide.to_create(decisions, judged.held)
        written = decide.to_embed(decisions, creates)
        draft = decide.Draft(
            learner=learner,
            material=material,
            decisions=decisions,
            creates=creates,
            judged=judged,
            profile=profile,
            labels=payload.labels,
            metadata=dict(payload.metadata or {}),
            updated_metadata=decide.updated_metadata(
                decisions, targets, dict(payload.metadata or {}), payload.metadata_merge_strategy
            ),
        )
        vectors = await self._embed([op.fact or "" for op in written], "document")
        # WRITE it all, with the job's completion, in one transaction.
        await self._writer.write(job, target, decide.plan(draft, vectors, self._config))

    @traced("generation.extract", database=False)
    async def _extract(self, learner: Learner, material: Material) -> list[ExtractedFact]:
        return await learner.extract(self._llm, material)

    @traced("generation.guard", database=False)
    async def _judged(
        self, learner: Learner, facts: list[ExtractedFact], judged: decide.Judged
    ) -> list[ExtractedFact]:
        return await decide.judge_facts(learner.screen, facts, learner.target.scope, judged)

    @traced("generation.consolidate", database=False)
    async def _operations(
        self,
        learner: Learner,
        facts: list[ExtractedFact],
        material: Material,
        exact: dict[str, Any] | None = None,
    ) -> tuple[list[MemoryOperation], list[Memory]]:
        """The facts' operations (those the kind keeps apart created as given, the others
        consolidated in one model call against their candidates), and the candidates read;
        `exact`: only candidates whose metadata is this one."""
        if not facts:
            return [], []
        apart, merged = learner.split(facts, material)
        operations = plain_creates(apart)
        candidates: list[Memory] = []
        if merged:
            candidates = await self._candidates(learner, merged)
            if exact is not None:  # REQUIRE_EXACT_MATCH: only memories with the same metadata
                candidates = [m for m in candidates if m.metadata == exact]
            support = (
                await self._read.support(learner.target.key, candidates)
                if learner.reads_support
                else {}
            )
            shown = learner.shown(candidates, support, material)
            count = material.customization.consolidation_config.revisions_per_candidate_count
            earlier = await self._read.earlier_facts(learner.target.key, shown, count)
            operations += await learner.consolidate(self._llm, merged, shown, material, earlier)
        return operations, candidates

    @traced("generation.candidates")
    async def _candidates(self, learner: Learner, facts: list[ExtractedFact]) -> list[Memory]:
        return await self._read.candidates(learner.target.key, facts)

    @traced("generation.profiles", database=False)
    async def _profiles(
        self, learner: Learner, material: Material, judged: decide.Judged
    ) -> list[FieldChange]:
        """The scope's profile changes from the same material (one model call; none without
        profile schemas or material), judged (`decide.judge_profile`)."""
        if not learner.learns_profiles:
            return []
        scope = learner.target.scope
        schemas = self._config.structured_for(frozenset(scope))
        facts = learner.profile_facts()
        if not schemas or not (material.conversation or facts):
            return []
        changes = await update_profiles(
            self._llm,
            schemas,
            await self._read.profiles(learner.target.key),
            conversation=material.conversation,
            facts=facts,
            instructions=material.customization.consolidation_config.instructions,
            now=material.time,
        )
        return await decide.judge_profile(learner.screen, schemas, changes, scope, judged)


ProcedureGenerator = Generator
"""The name the service built the generator under when procedure jobs had a generator of
their own: one generator runs every kind now (pass `support=` for procedure jobs)."""
