"""LangChain v1 (``create_agent``) and LangGraph: doom-loop detection as an
agent middleware, thin glue over ``DoomLoopSession``.

The session's persisted state rides in the graph's state under
``doom_loop`` (the middleware's ``state_schema``), so a LangGraph
checkpointer persists it with the thread and a resumed thread continues its
streaks; ``agent.invoke`` returns it too. Each hook restores a session from
that state and writes the new state back, so nothing lives in the
middleware between hooks: one instance serves every thread, concurrent
ones included, and a thread resumed in another process goes on where it
stopped.

- ``after_model``: the model's tool calls are one round
  (``DoomLoopSession.on_response``; identical calls of a parallel fan-out
  count once, ``invalid_tool_calls`` go in as their raw text). Each refused
  call is answered right there by an error ``ToolMessage`` carrying the
  verdict's text, so the tool node never runs it (LangChain routes only the
  calls still unanswered to the tools). A stop ends the run
  (``jump_to: "end"``): every call of the response is answered with the
  verdict and an AI message carries it, so the thread stays well formed for
  the next turn.
- ``before_model``: the results of the last round (the ``ToolMessage``\\ s
  after the last AI message: their artifact, else their content, parsed
  when it is JSON; ``status == "error"`` is a failure) feed the
  outcome-aware streaks, and the next request's guidance is taken.
- ``wrap_model_call``: that guidance is appended to the system message of
  that request only; an escalation runs that request on ``models[name]``.
- ``before_agent``: a new human message is a user turn (it lifts a halt).

LangChain is imported here only (the rest of the package never imports it)::

    from langchain.agents import create_agent
    from doom_loop.langchain import DoomLoopMiddleware

    agent = create_agent(model, tools, middleware=[DoomLoopMiddleware()])

Fails open: an error in a hook leaves the run as it is (the hook does
nothing), with one warning on the ``doom_loop`` logger.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Optional

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from typing_extensions import Annotated, NotRequired

from . import RECOMMENDED_DOOM_LOOP_OPTION, DoomLoopSession, resolve_doom_loop_option
from ._outputs import parsed_output

__all__ = ["DoomLoopMiddleware", "DoomLoopState"]

logger = logging.getLogger("doom_loop")


class DoomLoopState(AgentState):
    """The agent state with the middleware's keys."""

    #: The session's persisted state (the reference's ``doomLoop`` blob,
    #: which the JS package and the CLI resume too).
    doom_loop: NotRequired[Any]
    #: The next model request's patch (guidance, escalation), from
    #: ``before_model`` to ``wrap_model_call``; never in the input or output.
    doom_loop_request: NotRequired[Annotated[Optional[dict], PrivateStateAttr]]


class _Known(logging.Filter):
    """Drops the warnings a session's construction already gave once."""

    def __init__(self, known: set) -> None:
        super().__init__()
        self.known = known

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in self.known


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: set = set()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.add(record.getMessage())


class DoomLoopMiddleware(AgentMiddleware):
    """A ``create_agent`` middleware that detects doom loops (the same tool
    call repeated round after round) and answers them with the reference's
    ladder: observe, steer (guidance in the next system message), refuse
    (the call does not run; the model reads the verdict), escalate (one
    request on ``models[name]``), stop (the run ends with the verdict).

    ``doom_loop``: the option (default ``RECOMMENDED_DOOM_LOOP_OPTION``;
    ``True``: the reference's defaults; ``False``: off). ``loop_keys``,
    ``loop_effects``, ``on_detected``: as ``DoomLoopSession``. ``models``:
    chat models by name for the escalate rung (without it the rung is
    dropped, with a warning, when the option has one). ``state``: a
    persisted state to start from when the agent state has none (runs
    without a checkpointer).
    """

    state_schema = DoomLoopState

    def __init__(
        self,
        doom_loop: Any = None,
        *,
        loop_keys: Optional[Mapping[str, Any]] = None,
        loop_effects: Optional[Mapping[str, Any]] = None,
        models: Optional[Mapping[str, Any]] = None,
        state: Any = None,
        on_detected: Optional[Callable[[dict], None]] = None,
    ) -> None:
        super().__init__()
        self._option = RECOMMENDED_DOOM_LOOP_OPTION if doom_loop is None else doom_loop
        self._config = resolve_doom_loop_option(self._option)
        self._models = dict(models or {})
        self._initial = state
        self._options = {
            "loop_keys": loop_keys,
            "loop_effects": loop_effects,
            "capabilities": {"escalate": bool(self._models)},
            "on_detected": on_detected,
        }
        self._warned = False
        # The warnings building a session gives (a rung this host cannot
        # carry out) are given once, here, not at every hook.
        self._known = _Known(set())
        collect = _Collect()
        logger.addHandler(collect)
        try:
            self._session(None)
        finally:
            logger.removeHandler(collect)
        self._known.known = collect.messages

    # --- sessions ---------------------------------------------------------

    def _session(self, state: Any, *, halted: bool = True) -> Optional[DoomLoopSession]:
        """The thread's session, restored from the agent state (``None``
        when detection is off). ``halted``: a persisted halt stays armed
        (every hook but a new user turn's)."""
        if self._config is None:
            return None
        blob = state.get("doom_loop") if isinstance(state, Mapping) else None
        blob = self._initial if blob is None else blob
        if self._known.known:
            logger.addFilter(self._known)
        try:
            session = DoomLoopSession(self._option, state=blob, **self._options)
        finally:
            logger.removeFilter(self._known)
        if halted:
            session.resume_halt()
        return session if session.enabled else None

    def _fail(self, error: Exception) -> None:
        if not self._warned:
            self._warned = True
            logger.warning("doom-loop: a LangChain hook failed; the run goes on unchanged: %s", error)

    # --- hooks --------------------------------------------------------------

    def before_agent(self, state: Any, runtime: Any) -> Optional[dict]:
        try:
            messages = state.get("messages") or []
            user_turn = bool(messages) and isinstance(messages[-1], HumanMessage)
            session = self._session(state, halted=not user_turn)
            if session is None:
                return None
            if user_turn:
                session.on_user_turn()
            return {"doom_loop": session.get_state()}
        except Exception as error:  # noqa: BLE001 - detection never fails the agent
            self._fail(error)
            return None

    def before_model(self, state: Any, runtime: Any) -> Optional[dict]:
        try:
            session = self._session(state)
            if session is None:
                return None
            for message in _last_results(state.get("messages") or []):
                _feed(session, message)
            request = session.next_request()  # consumed: the state written after it
            return {"doom_loop": session.get_state(), "doom_loop_request": request}
        except Exception as error:  # noqa: BLE001
            self._fail(error)
            return None

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: Any, runtime: Any) -> Optional[dict]:
        try:
            messages = state.get("messages") or []
            last = messages[-1] if messages else None
            if not isinstance(last, AIMessage):
                return None
            session = self._session(state)
            if session is None:
                return None
            outcome = session.on_response(_text(last) or None, _calls(last))
            update: dict = {"doom_loop": session.get_state()}
            answerable = {c.get("id") for c in last.tool_calls if c.get("id")}
            if outcome["halt"] is not None:
                message = outcome["halt"]["message"]
                update["jump_to"] = "end"
                update["messages"] = [_refusal(c["id"], c["name"], message) for c in last.tool_calls if c.get("id")]
                update["messages"].append(AIMessage(content=message))
                return update
            refused = [
                _refusal(d["id"], d["toolName"], d.get("message") or "")
                for d in outcome["decisions"]
                if d["action"] == "refuse" and d["id"] in answerable
            ]
            if refused:
                update["messages"] = refused
            return update
        except Exception as error:  # noqa: BLE001
            self._fail(error)
            return None

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(self._patched(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await handler(self._patched(request))

    async def abefore_agent(self, state: Any, runtime: Any) -> Optional[dict]:
        return self.before_agent(state, runtime)

    async def abefore_model(self, state: Any, runtime: Any) -> Optional[dict]:
        return self.before_model(state, runtime)

    @hook_config(can_jump_to=["end"])
    async def aafter_model(self, state: Any, runtime: Any) -> Optional[dict]:
        return self.after_model(state, runtime)

    def _patched(self, request: Any) -> Any:
        """The model request with the guidance ``before_model`` took (this
        request only) and, at an escalation, the named model."""
        try:
            state = request.state if isinstance(request.state, Mapping) else {}
            patch = state.get("doom_loop_request") or {}
            overrides: dict = {}
            guidance = patch.get("guidance")
            if guidance:
                overrides["system_message"] = _with_guidance(request.system_message, guidance)
            escalation = (self._config or {}).get("escalation") or {}
            if patch.get("escalate") and escalation.get("model") in self._models:
                overrides["model"] = self._models[escalation["model"]]
            return request.override(**overrides) if overrides else request
        except Exception as error:  # noqa: BLE001
            self._fail(error)
            return request


def _text(message: AIMessage) -> str:
    text = message.text  # a property in langchain-core 1 (a str that is also callable)
    return str(text) if isinstance(text, str) else text()


def _calls(message: AIMessage) -> list:
    """The response's calls: parsed ones by their arguments, invalid ones by
    the text the model sent (a malformed call, identified by it)."""
    calls = [
        {"id": c.get("id") or "", "tool_name": c.get("name") or "", "arguments": c.get("args") or {}}
        for c in message.tool_calls
    ]
    for c in getattr(message, "invalid_tool_calls", None) or []:
        args = c.get("args")
        calls.append({"id": c.get("id") or "", "tool_name": c.get("name") or "", "arguments": "" if args is None else str(args)})
    return calls


def _refusal(call_id: str, tool_name: str, text: str) -> ToolMessage:
    return ToolMessage(content=text, tool_call_id=call_id, name=tool_name, status="error")


def _last_results(messages: list) -> list:
    """The ``ToolMessage``\\ s answering the last AI message's calls, in order."""
    results = []
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            break
        if isinstance(message, ToolMessage):
            results.append(message)
    return results[::-1]


def _feed(session: DoomLoopSession, message: ToolMessage) -> None:
    """One result into the session (a refused call's, which never ran, is
    not awaited and changes nothing)."""
    failed = getattr(message, "status", None) == "error"
    outcome = message.artifact if getattr(message, "artifact", None) is not None else parsed_output(message.content)
    try:
        session.on_result(message.tool_call_id, outcome, failed=failed)
    except ValueError:
        # An outcome JSON cannot hold (an artifact object): its text.
        session.on_result(message.tool_call_id, parsed_output(message.content), failed=failed)


def _with_guidance(system: Optional[SystemMessage], guidance: str) -> SystemMessage:
    if system is None:
        return SystemMessage(content=guidance)
    if isinstance(system.content, str):
        return SystemMessage(content=f"{system.content}\n\n{guidance}" if system.content else guidance)
    return SystemMessage(content=[*system.content, {"type": "text", "text": guidance}])
