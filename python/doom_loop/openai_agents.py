"""The OpenAI Agents SDK for Python (``openai-agents``): doom-loop
detection as the SDK's own hooks, thin glue over ``DoomLoopSession``.

- ``RunHooks.on_llm_end`` hands each model response (its text and function
  calls) to the session: one response is one round, decided as a set;
- a *tool input guardrail* on each tool answers the call's decision: a
  refused call's result is the verdict's text (``reject_content``), so the
  model reads the refusal; at a stop it raises the SDK's tripwire
  (``ToolInputGuardrailTripwireTriggered``), ending the run;
- ``RunHooks.on_tool_end`` hands each executed call's result to the session
  (the outcome-aware streaks: a page that is new is progress);
- ``RunHooks.on_agent_start``: a new run is a new user turn, as in the JS
  adapter, so it lifts an earlier stop (the streaks go on).

The SDK is imported here only (the rest of the package never imports it)::

    from doom_loop.openai_agents import DoomLoopGuard

    guard = DoomLoopGuard()
    tool = function_tool(charge_card, tool_input_guardrails=[guard.guardrail])
    await Runner.run(agent, "…", hooks=guard.hooks)

``guard.get_state()`` is the state to persist; ``DoomLoopGuard(state=saved)``
resumes it in a later ``Runner.run`` (from any language).
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from agents import RunHooks, ToolGuardrailFunctionOutput, ToolInputGuardrailData, tool_input_guardrail

from . import DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION
from ._outputs import parsed_output

logger = logging.getLogger("doom_loop.openai_agents")


def _response_calls(response: Any) -> tuple:
    """The text and function calls of a ``ModelResponse``."""
    text, calls = [], []
    for item in getattr(response, "output", None) or []:
        kind = getattr(item, "type", None)
        if kind == "function_call":
            calls.append({"id": item.call_id, "tool_name": item.name, "arguments": item.arguments or "{}"})
        elif kind == "message":
            for part in getattr(item, "content", None) or []:
                if getattr(part, "type", None) == "output_text":
                    text.append(part.text)
    return ("".join(text) or None), calls


class _Hooks(RunHooks):
    def __init__(self, guard: "DoomLoopGuard") -> None:
        self._guard = guard

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        # The JS adapter's `agent_start`: a run (or a handoff) begins with
        # the user's input, so a stop of an earlier run no longer holds.
        self._guard.session.on_user_turn()

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        text, calls = _response_calls(response)
        self._guard.session.on_response(text, calls)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        # Only executed calls get here (a guardrail's refusal returns early).
        id = getattr(context, "tool_call_id", None)
        if id is None:
            return
        try:
            self._guard.session.on_result(id, parsed_output(result))
        except Exception as error:  # noqa: BLE001 - detection never fails the tool
            logger.warning("doom-loop: a tool result was not recorded: %s", error)


class DoomLoopGuard:
    """One run's guard: ``hooks`` for ``Runner.run``, ``guardrail`` for each
    tool. Options as ``DoomLoopSession`` (default option:
    ``RECOMMENDED_DOOM_LOOP_OPTION``)."""

    def __init__(self, doom_loop: Any = None, session: Optional[DoomLoopSession] = None, **options: Any) -> None:
        self.session = session or DoomLoopSession(
            RECOMMENDED_DOOM_LOOP_OPTION if doom_loop is None else doom_loop,
            # The SDK cannot switch the model mid-run from a hook.
            capabilities={"escalate": False},
            **options,
        )
        self.hooks = _Hooks(self)
        self.guardrail = tool_input_guardrail(name="doom_loop")(self._check)

    def get_state(self) -> Optional[dict]:
        """The session's state to persist (``None`` when detection is off)."""
        return self.session.get_state()

    def _check(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        decision = self.session.decision(data.context.tool_call_id)
        if decision is None or decision.get("action") != "refuse":
            return ToolGuardrailFunctionOutput.allow()
        if self.session.halt() is not None:
            return ToolGuardrailFunctionOutput.raise_exception(output_info=self.session.halt())
        return ToolGuardrailFunctionOutput.reject_content(decision.get("message") or "")
