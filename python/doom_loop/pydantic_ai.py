"""Pydantic AI (``pydantic-ai`` / ``pydantic-ai-slim``): doom-loop detection
as an agent *capability*, thin glue over ``DoomLoopSession``.

Pydantic AI 2 runs every model request and every tool call through the
hooks of the agent's capabilities, so one capability sees all the engine
needs, on every model and toolset, without wrapping either:

- ``after_model_request`` hands each model response (its text and tool
  calls, the arguments as the model wrote them) to the session: one
  response is one round, decided as a set;
- ``wrap_tool_execute`` answers each call's decision: a refused call does
  not run and its result is the verdict's text, which the model reads as
  the tool's output (the reference's refusal); a call that runs has its
  result (or its failure) handed back to the session;
- ``before_model_request`` adds the engine's steering guidance to the next
  request's instructions, runs an escalated request on the model that
  ``models`` names for ``escalation.model``, and at a stop answers the
  request itself with the stop verdict's text (``SkipModelRequest``): the
  model is not called and the run ends with that text as its output, its
  messages intact for a later run's ``message_history``. An agent whose
  output is not text cannot end on text: there the run raises
  :class:`DoomLoopStopped`;
- ``before_run``: a run that brings a new prompt is a new user turn, which
  lifts an earlier run's halt (the streaks stay).

The framework is imported here only (the rest of the package never imports
it)::

    from doom_loop.pydantic_ai import DoomLoopGuard

    guard = DoomLoopGuard()  # RECOMMENDED_DOOM_LOOP_OPTION
    result = await agent.run("…", capabilities=[guard])
    saved = guard.get_state()  # JSON-ready: the reference's doomLoop blob
    # later: DoomLoopGuard(state=saved), message_history=result.all_messages()
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Mapping, Optional

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, SkipModelRequest, SkipToolExecution
from pydantic_ai.models import infer_model
from pydantic_ai.messages import InstructionPart, ModelResponse, TextPart, ToolCallPart
from pydantic_core import to_jsonable_python

from . import RECOMMENDED_DOOM_LOOP_OPTION, DoomLoopSession

__all__ = ["DoomLoopGuard", "DoomLoopStopped"]

logger = logging.getLogger("doom_loop.pydantic_ai")

# A tool's way of saying "not now" (approval, deferral, a result supplied by
# another hook): no result yet, not a failure.
_NOT_A_RESULT = (ApprovalRequired, CallDeferred, SkipToolExecution)


class DoomLoopStopped(Exception):
    """A stop verdict ended a run whose output cannot be text. ``verdict``:
    the verdict; ``str(error)``: the text the model would have read."""

    def __init__(self, message: str, verdict: Optional[dict]) -> None:
        super().__init__(message)
        self.verdict = verdict


def _response_round(response: ModelResponse) -> tuple:
    """The text and tool calls of a model response, as the session reads them."""
    text, calls = [], []
    for part in response.parts:
        if isinstance(part, TextPart):
            text.append(part.content)
        elif isinstance(part, ToolCallPart):
            # The model's own JSON text where the provider kept it (the same
            # text gives the same fingerprint in every language).
            args = part.args if isinstance(part.args, (str, dict)) else {}
            calls.append({"id": part.tool_call_id, "tool_name": part.tool_name, "arguments": args or {}})
    return ("".join(text) or None), calls


def _ends_on_text(parameters: Any) -> bool:
    """Whether a text response is the run's output (a ``str`` output type,
    alone or beside output tools), not text to parse as structured output."""
    return bool(parameters.allow_text_output) and parameters.output_mode in ("text", "tool")


def _outcome(result: Any) -> Any:
    """A tool's return value as a JSON value (as the framework sends it on)."""
    try:
        return to_jsonable_python(result, fallback=str)
    except Exception:  # noqa: BLE001 - an unreadable result is identified by its text
        return str(result)


@dataclasses.dataclass(eq=False)
class DoomLoopGuard(AbstractCapability[Any]):
    """The doom-loop guard as a Pydantic AI capability: pass it in
    ``Agent(capabilities=[...])`` or per run (``agent.run(...,
    capabilities=[guard])``). One guard is one conversation's session.

    ``doom_loop``: the option (default ``RECOMMENDED_DOOM_LOOP_OPTION``);
    ``state``: a persisted :meth:`get_state` (from any language);
    ``loop_keys``, ``loop_effects``, ``on_detected``: as ``DoomLoopSession``;
    ``models``: Pydantic AI models (or model names) by the option's
    ``escalation.model`` for the escalate rung (without it the rung is
    skipped, with the reference's warning); ``session``: a session of your
    own instead (escalation off unless ``models`` is given)."""

    doom_loop: Any = None
    state: Any = None
    loop_keys: Optional[dict] = None
    loop_effects: Optional[dict] = None
    on_detected: Any = None
    models: Optional[dict] = None
    session: Optional[DoomLoopSession] = None

    def __post_init__(self) -> None:
        option = RECOMMENDED_DOOM_LOOP_OPTION if self.doom_loop is None else self.doom_loop
        # The model the option escalates to is the user's own name for it.
        escalation = option.get("escalation") if isinstance(option, Mapping) else None
        name = escalation.get("model") if isinstance(escalation, Mapping) else None
        self._escalate_to = (self.models or {}).get(name) if isinstance(name, str) else None
        if self.session is None:
            self.session = DoomLoopSession(
                option,
                loop_keys=self.loop_keys,
                loop_effects=self.loop_effects,
                state=self.state,
                capabilities={"escalate": self._escalate_to is not None},
                on_detected=self.on_detected,
            )

    def get_state(self) -> Optional[dict]:
        """The session's state to persist (``None`` when detection is off)."""
        return self.session.get_state()

    async def before_run(self, ctx: RunContext[Any]) -> None:
        if ctx.prompt is not None:
            self.session.on_user_turn()

    async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        if self.session.halt() is not None:
            text = self.session.halt_text() or ""
            if not _ends_on_text(request_context.model_request_parameters):
                raise DoomLoopStopped(text, self.session.halt())
            raise SkipModelRequest(ModelResponse(parts=[TextPart(text)]))
        patch = self.session.next_request()
        changes: dict = {}
        if patch.get("guidance"):
            parameters = request_context.model_request_parameters
            parts = [*(parameters.instruction_parts or []), InstructionPart(patch["guidance"], dynamic=True)]
            changes["model_request_parameters"] = dataclasses.replace(parameters, instruction_parts=parts)
        if patch.get("escalate") and self._escalate_to is not None:
            try:
                changes["model"] = infer_model(self._escalate_to)
            except Exception as error:  # noqa: BLE001 - fail open: the agent's own model
                logger.warning("doom-loop: the escalation model could not be used: %s", error)
        return dataclasses.replace(request_context, **changes) if changes else request_context

    async def after_model_request(self, ctx: RunContext[Any], *, request_context: Any, response: ModelResponse) -> ModelResponse:
        text, calls = _response_round(response)
        self.session.on_response(text, calls)
        return response

    async def wrap_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any, handler: Any
    ) -> Any:
        decision = self.session.decision(call.tool_call_id)
        if decision is not None and decision.get("action") == "refuse":
            return decision.get("message") or ""
        try:
            result = await handler(args)
        except _NOT_A_RESULT:
            raise
        except Exception:
            self._result(call.tool_call_id, None, failed=True)
            raise
        self._result(call.tool_call_id, _outcome(result), failed=False)
        return result

    def _result(self, id: str, outcome: Any, failed: bool) -> None:
        """A call's result to the session; detection never fails the tool."""
        try:
            self.session.on_result(id, outcome, failed)
        except Exception as error:  # noqa: BLE001 - fail open, one line
            logger.warning("doom-loop: a tool result was not recorded: %s", error)
