"""Procedural memory for ADK agents: the `remember_how` tool the agent calls when a task went
well, and the plugin that learns from a session the user rated positively.

Owns: the tool's declaration and the feedback signal the plugin reads. ADK has no feedback event
of its own, so the signal is a state change: an event whose `actions.state_delta` sets
`feedback_key` (default "feedback") to a positive value (`True`, a rating of at least
`min_rating`, or a word such as "positive" / "thumbs_up"). An app's rating endpoint sends it
with the next run (`runner.run_async(..., state_delta={"feedback": "positive"})`, which ADK
appends as the run's first event) or appends such an event itself; a tool or agent may set it
during a run. Each rating event triggers learning once per process.

Both only enqueue `learn_procedure` (a durable, retried job): a turn never waits for a model
call, and a failure to enqueue is logged, never fails the turn. The session comes from the
invocation, never from the model, so a call learns from the caller's own session only; what
is learned is anonymised, and other users see it only once enough users' sessions support it
(`memory.procedure_rule`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from ..errors import InputTypeError, InputValidationError, OptedOutError
from ..memory.service import PostgresMemoryService
from .callbacks import bound_service
from .tools import _declaration, _error, _text_arg

logger = logging.getLogger(__name__)

POSITIVE_FEEDBACK = frozenset(
    {"positive", "good", "great", "up", "thumbs_up", "thumbsup", "like", "success", "yes"}
)
"""Feedback words (any case) that mark a session as successful."""

_SEEN_EVENTS = 4096
"""Rating events the plugin remembers having acted on (least recent forgotten)."""


class RememberHowTool(BaseTool):
    """Lets the agent say "this went well: remember how". Calling it queues `learn_procedure`
    for the current session and returns at once (`{"status": "queued"}`); the playbook reaches
    the app's procedures in the background, anonymised.

    Args:
      memory_service: a `PostgresMemoryService` with a model; None: the Runner's.
    """

    def __init__(
        self,
        memory_service: PostgresMemoryService | None = None,
        *,
        name: str = "remember_how",
    ) -> None:
        if memory_service is not None and not isinstance(memory_service, PostgresMemoryService):
            raise InputValidationError("memory_service must be a PostgresMemoryService.")
        self.memory_service = memory_service
        super().__init__(
            name=name,
            description=(
                "Remember how you accomplished the user's task, so it goes as well next time, "
                "for any user. Call it once the task is done and the user is satisfied (they "
                "confirmed, thanked you, or the result is clearly right), not for small talk or "
                "a task that failed. Say in `what_went_well` what made it work, without "
                "personal details: the playbook is anonymised and shared."
            ),
        )

    @override
    def _get_declaration(self) -> types.FunctionDeclaration:
        what = {"type": "string", "description": "What made the task succeed, in general terms."}
        return _declaration(self.name, self.description, {"what_went_well": what}, [])

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            outcome = _text_arg(args, "what_went_well")
            service, _ = await bound_service(tool_context, self.memory_service)
            operation = await service.learn_procedure(
                tool_context.session, outcome=outcome, revision_labels={"tool": self.name}
            )
        except InputValidationError as exc:
            return _error(exc)
        return {"status": "queued", "operation_id": operation.id}


class ProcedureFeedbackPlugin(BasePlugin):
    """Learns a procedure from every session the user rates positively (the signal: see the
    module docstring): `Runner(..., plugins=[ProcedureFeedbackPlugin()])`.

    Args:
      memory_service: a `PostgresMemoryService` with a model; None: the Runner's.
      feedback_key: the state key a rating is written to.
      min_rating: the least numeric rating that counts as positive (e.g. 4 of 5 stars).
    """

    def __init__(
        self,
        memory_service: PostgresMemoryService | None = None,
        *,
        feedback_key: str = "feedback",
        min_rating: float = 4,
        name: str = "procedure_feedback",
    ) -> None:
        if memory_service is not None and not isinstance(memory_service, PostgresMemoryService):
            raise InputValidationError("memory_service must be a PostgresMemoryService.")
        if not isinstance(feedback_key, str) or not feedback_key:
            raise InputValidationError("feedback_key must be a non-empty string.")
        super().__init__(name=name)
        self.memory_service = memory_service
        self.feedback_key = feedback_key
        self.min_rating = min_rating
        self._seen: OrderedDict[tuple[str, str, str, str], None] = OrderedDict()

    def is_positive(self, value: Any) -> bool:
        """Whether a feedback value marks the session as successful."""
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return value >= self.min_rating
        return isinstance(value, str) and value.strip().casefold() in POSITIVE_FEEDBACK

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """A rating sent with the run (`state_delta=`) is the run's first event, already in the
        session: the run's events are the last ones, read from the end."""
        for event in reversed(invocation_context.session.events):
            if event.invocation_id != invocation_context.invocation_id:
                break
            await self._learn_if_rated(invocation_context, event)

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> None:
        """A rating set during the run (by a tool or an agent)."""
        await self._learn_if_rated(invocation_context, event)

    async def _learn_if_rated(self, context: InvocationContext, event: Event) -> None:
        delta = event.actions.state_delta if event.actions else {}
        if self.feedback_key not in delta or not self.is_positive(delta[self.feedback_key]):
            return
        session = context.session
        key = (session.app_name, session.user_id, session.id, event.id)
        if key in self._seen:
            return
        self._seen[key] = None
        while len(self._seen) > _SEEN_EVENTS:
            self._seen.popitem(last=False)
        service = self.memory_service or context.memory_service
        if not isinstance(service, PostgresMemoryService):
            raise InputTypeError("ProcedureFeedbackPlugin needs a PostgresMemoryService.")
        try:
            await service.learn_procedure(
                session,
                outcome=f"The user rated the conversation: {delta[self.feedback_key]}.",
                revision_labels={"feedback": str(delta[self.feedback_key])},
            )
        except OptedOutError:
            logger.info("Positive feedback not learned from: the user opted out of memory.")
        except Exception:  # the user's turn goes on; the rating is logged as not learned
            logger.warning("Could not queue a procedure from positive feedback", exc_info=True)
