"""OpenRouter's agent SDK for Python (``openrouter-agent-sdk``, the port of
``@openrouter/agent``): doom-loop detection through ``call_model``'s own
hook points, thin glue over ``DoomLoopSession`` (every decision is the
core's session engine's, as in the JS ``withDoomLoop``).

How a run maps onto the session:

- ``on_turn_end`` receives every model response (the first one too, unlike
  the JS SDK): its text and function calls are one round, decided as a set;
- ``stop_when`` gains a condition that is met once the session halted, so
  the SDK makes no further normal request (it then runs the pending calls
  through ``PreToolUse`` and, unless ``allow_final_response=False``, makes
  its one ``tool_choice: "none"`` final request);
- the ``PreToolUse`` hook answers each call's decision: a refused call is
  blocked, and the model reads the verdict's text as the call's error;
- ``PostToolUse`` / ``PostToolUseFailure`` hand each result to the session
  (outcome-aware streaks of ``RECOMMENDED_DOOM_LOOP_OPTION``);
- steer guidance rides in the next request's ``instructions`` through each
  tool's ``next_turn_params`` (the only per-turn request change 0.8.0 offers:
  its request functions resolve once, at turn 0);
- the ``state`` accessor saves a :class:`DoomLoopConversationState`: the
  SDK's ``ConversationState`` plus ``doom_loop``, the reference's
  ``ConversationState.doomLoop`` blob, which a later run resumes.

The SDK is imported here only (the rest of the package never imports it)::

    from doom_loop.openrouter import with_doom_loop

    request = with_doom_loop({"model": ..., "input": ..., "tools": [...]})
    text = await client.call_model(request).get_text()
    request.doom_loop_end_reason()  # "doom_loop" when detection stopped it
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional

from openrouter_agent import HookEntry, HooksManager
from openrouter_agent import deserialize_conversation_state as _sdk_deserialize
from openrouter_agent._utils import get_field, maybe_await
from openrouter_agent.hooks_resolve import resolve_hooks
from openrouter_agent.tool_types import ConversationState

from . import RECOMMENDED_DOOM_LOOP_OPTION, DoomLoopSession, logger

__all__ = [
    "DoomLoopConversationState",
    "DoomLoopRequest",
    "deserialize_conversation_state",
    "with_doom_loop",
]


@dataclasses.dataclass(frozen=True)
class DoomLoopConversationState(ConversationState):
    """The SDK's ``ConversationState`` with the detector's state: ``doom_loop``
    is the reference's ``ConversationState.doomLoop`` blob (the JS package and
    the CLI resume it too). The SDK's ``update_state`` keeps the field, and its
    ``serialize_conversation_state`` writes it."""

    doom_loop: Optional[dict] = None


def deserialize_conversation_state(raw_json: str) -> ConversationState:
    """The SDK's ``deserialize_conversation_state`` keeping ``doom_loop``."""
    state = _sdk_deserialize(raw_json)
    blob = json.loads(raw_json).get("doom_loop")
    return _with_blob(state, blob) if blob is not None else state


def _with_blob(state: Any, blob: Optional[dict]) -> DoomLoopConversationState:
    fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(ConversationState)}
    return DoomLoopConversationState(**fields, doom_loop=blob)


class DoomLoopRequest(dict):
    """The ``call_model`` request with detection wired in (a ``dict``: the
    SDK reads it as the request you gave). Use one per ``call_model`` run;
    detector memory crosses runs through the ``state`` accessor."""

    guard: "_CallModelGuard"

    def doom_loop_verdict(self) -> Optional[dict]:
        """The ``stop`` verdict that halted the run, or ``None``."""
        return self.guard.session.halt()

    def doom_loop_end_reason(self) -> Optional[str]:
        """How the run ended: the SDK's ``SessionEnd`` reason, except
        ``"doom_loop"`` when detection stopped it (0.8.0 says ``max_turns``
        for any stop condition). ``None`` until it ended."""
        return self.guard.end_reason

    def doom_loop_verdicts(self) -> List[dict]:
        """Every verdict so far, in order."""
        return self.guard.session.verdicts()

    def doom_loop_state(self) -> Optional[dict]:
        """The state persisted as ``doom_loop`` (``None``: detection off)."""
        return self.guard.session.get_state()


def with_doom_loop(
    request: Mapping[str, Any],
    doom_loop: Any = None,
    *,
    loop_keys: Optional[Mapping[str, Any]] = None,
    loop_effects: Optional[Mapping[str, Any]] = None,
    on_detected: Optional[Callable[[dict], None]] = None,
) -> DoomLoopRequest:
    """A copy of a ``call_model`` request (the input is not modified) whose
    ``on_turn_end``, ``stop_when``, ``hooks``, ``tools`` (``next_turn_params``)
    and ``state`` are wrapped; the caller's own values keep working.
    ``doom_loop``: the option (default ``RECOMMENDED_DOOM_LOOP_OPTION``;
    ``True``: the reference's defaults; ``False``: off). ``loop_keys``,
    ``loop_effects``, ``on_detected``: as ``DoomLoopSession``."""
    guard = _CallModelGuard(
        dict(request),
        RECOMMENDED_DOOM_LOOP_OPTION if doom_loop is None else doom_loop,
        loop_keys=loop_keys,
        loop_effects=loop_effects,
        on_detected=on_detected,
    )
    wrapped = DoomLoopRequest(guard.augment() if guard.session.enabled else request)
    wrapped.guard = guard
    return wrapped


def _signature(name: str, arguments: Any) -> Optional[str]:
    """One call's identity between the response and the hooks' payloads."""
    try:
        return name + "\n" + json.dumps(arguments, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def _parsed(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    text = arguments.strip()
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return None  # malformed: 0.8.0 answers it without any hook


def _response_round(response: Any) -> tuple:
    """The text and function calls of a Responses API result."""
    text, calls = [], []
    for item in get_field(response, "output", None) or []:
        kind = get_field(item, "type")
        if kind == "function_call":
            call_id = get_field(item, "call_id", None) or get_field(item, "callId", None) or get_field(item, "id", "")
            calls.append({"id": str(call_id), "tool_name": str(get_field(item, "name", "")),
                          "arguments": get_field(item, "arguments", None) or "{}"})
        elif kind == "message":
            for part in get_field(item, "content", None) or []:
                if get_field(part, "type") in ("output_text", "text"):
                    text.append(str(get_field(part, "text", "")))
    return ("".join(text) or None), calls


def _is_tool_error(result: Any) -> bool:
    """A result that reports a failure (``{"error": ...}``), as the JS session reads it."""
    return isinstance(result, Mapping) and result.get("error") not in (None, False, "")


class _Hooks(HooksManager):
    """The guard's handlers first (a refused call never reaches the caller's
    ``PreToolUse``), then the caller's hooks, whose manager is not modified."""

    def __init__(self, entries: Dict[str, Callable[..., Any]], user: Optional[HooksManager]) -> None:
        super().__init__()
        self._user = user
        for name, handler in entries.items():
            self.on(name, HookEntry(handler=handler))

    def set_session_id(self, session_id: str) -> None:
        super().set_session_id(session_id)
        if self._user is not None:
            self._user.set_session_id(session_id)

    async def emit(self, hook_name: str, payload: Dict[str, Any], **options: Any) -> Any:
        mine = await super().emit(hook_name, payload, **options)
        if mine.blocked or self._user is None:
            return mine
        return await self._user.emit(hook_name, payload, **options)

    async def drain(self) -> None:
        await super().drain()
        if self._user is not None:
            await self._user.drain()

    def has_handlers(self, hook_name: str) -> bool:
        return super().has_handlers(hook_name) or (self._user is not None and self._user.has_handlers(hook_name))


class _StateAccessor:
    """The caller's accessor, the detector's state riding on each save."""

    def __init__(self, guard: "_CallModelGuard", inner: Any) -> None:
        self._guard = guard
        self._inner = inner

    async def load(self) -> Any:
        loaded = await maybe_await(self._inner.load())
        self._guard.restore(loaded)
        return loaded

    async def save(self, state: Any) -> None:
        await maybe_await(self._inner.save(self._guard.before_save(state)))


class _CallModelGuard:
    """Maps 0.8.0's hook points onto one ``DoomLoopSession``; every decision
    is the session's."""

    def __init__(self, request: Dict[str, Any], option: Any, **options: Any) -> None:
        self.request = request
        self.session = DoomLoopSession(
            option,
            # 0.8.0 cannot switch the model for one turn only: next_turn_params
            # changes stick until a later round runs a tool.
            capabilities={"escalate": False},
            **options,
        )
        self.end_reason: Optional[str] = None
        self._planned: Dict[str, Deque[dict]] = {}
        self._inflight: Dict[str, Deque[str]] = {}
        self._stopped_by_doom = False
        self._lazy_ids = 0
        self._base_instructions = request.get("instructions")
        self._instructions_round = -1
        self._instructions: Any = None

    # ------------------------------------------------------------- wiring

    def augment(self) -> Dict[str, Any]:
        request = dict(self.request)
        user_end = request.get("on_turn_end")

        async def on_turn_end(ctx: Any, response: Any) -> None:
            if user_end is not None:
                await maybe_await(user_end(ctx, response))
            self._guarded(lambda: self._on_response(response))

        request["on_turn_end"] = on_turn_end
        stop_when = request.get("stop_when")
        user_stops = list(stop_when) if isinstance(stop_when, (list, tuple)) else ([stop_when] if stop_when else [])
        request["stop_when"] = [self._stop_when, *user_stops]
        request["hooks"] = _Hooks(
            {
                "PreToolUse": self._pre_tool_use,
                "PostToolUse": lambda payload, _ctx: self._tool_result(payload, threw=False),
                "PostToolUseFailure": lambda payload, _ctx: self._tool_result(payload, threw=True),
                "SessionEnd": self._session_end,
            },
            resolve_hooks(request.get("hooks")),
        )
        if request.get("tools"):
            request["tools"] = [self._with_next_turn(tool) for tool in request["tools"]]
        if callable(request.get("instructions")):
            # Resolved once, at turn 0: the base the guidance is added to.
            user_instructions = request["instructions"]

            async def instructions(ctx: Any) -> Any:
                self._base_instructions = await maybe_await(user_instructions(ctx))
                return self._base_instructions

            request["instructions"] = instructions
        if request.get("state") is not None:
            request["state"] = _StateAccessor(self, request["state"])
        return request

    def _guarded(self, action: Callable[[], Any], fallback: Any = None) -> Any:
        """Detection never fails the agent: an unexpected error is one warning."""
        try:
            return action()
        except Exception as error:  # noqa: BLE001 - the agent's run goes on
            logger.warning("doom-loop: the openrouter adapter ignored an error: %s", error)
            return fallback

    def _halted(self) -> bool:
        return self.session.halt() is not None

    # -------------------------------------------------------- hook points

    def _on_response(self, response: Any) -> None:
        # The SDK's forced final answer (or a resumed halt) is no round.
        if self._halted():
            return
        text, calls = _response_round(response)
        outcome = self.session.on_response(text, calls)
        self._planned = {}
        for call, decision in zip(calls, outcome.get("decisions") or []):
            signature = _signature(call["tool_name"], _parsed(call["arguments"]))
            if signature is not None:
                self._planned.setdefault(signature, deque()).append(decision)

    def _stop_when(self, _options: Any) -> bool:
        halted = bool(self._guarded(self._halted, False))
        self._stopped_by_doom = self._stopped_by_doom or halted
        return halted

    def _take_planned(self, name: str, tool_input: Any) -> Optional[dict]:
        queue = self._planned.get(_signature(name, tool_input) or "")
        if not queue:
            # Arguments rewritten by an earlier handler: the oldest of that tool.
            queue = next((q for key, q in self._planned.items() if q and key.split("\n", 1)[0] == name), None)
        return queue.popleft() if queue else None

    def _pre_tool_use(self, payload: Dict[str, Any], _ctx: Any) -> Optional[Dict[str, Any]]:
        name = str(payload.get("tool_name"))
        tool_input = payload.get("tool_input") or {}

        def decide() -> Optional[Dict[str, Any]]:
            decision = self._take_planned(name, tool_input)
            if decision is None:
                # Not in a response the guard saw (an approval resume): alone.
                self._lazy_ids += 1
                decision = self.session.on_call({"id": f"pre-{self._lazy_ids}", "tool_name": name, "arguments": tool_input})
            if decision.get("action") == "refuse":
                return {"block": decision.get("message") or f'Doom loop suspected: this "{name}" call was refused.'}
            if self._halted() and self._may_need_approval(name):
                # 0.8.0 runs the calls pending at a stop without its approval gate.
                return {"block": self.session.halt_text() or "Not executed: this run was stopped."}
            if decision.get("fingerprint") is not None:
                signature = _signature(name, tool_input) or name
                self._inflight.setdefault(signature, deque()).append(decision["id"])
            return None

        return self._guarded(decide)

    def _tool_result(self, payload: Dict[str, Any], threw: bool) -> None:
        name = str(payload.get("tool_name"))

        def record() -> None:
            queue = self._inflight.get(_signature(name, payload.get("tool_input") or {}) or name)
            if not queue:
                queue = next((q for key, q in self._inflight.items() if q and key.split("\n", 1)[0] == name), None)
            if not queue:
                return  # exempt, or never seen: no evidence
            call_id = queue.popleft()
            if threw:
                self.session.on_result(call_id, {"error": str(payload.get("error"))}, failed=True)
            else:
                output = payload.get("tool_output")
                self.session.on_result(call_id, output, failed=_is_tool_error(output))

        self._guarded(record)

    def _session_end(self, payload: Dict[str, Any], _ctx: Any) -> None:
        reason = payload.get("reason")
        doom = (reason == "max_turns" and self._stopped_by_doom) or (reason == "complete" and self._halted())
        self.end_reason = "doom_loop" if doom else reason

    def _may_need_approval(self, name: str) -> bool:
        if self.request.get("require_approval"):
            return True
        for tool in self.request.get("tools") or []:
            fn = tool.get("function") if isinstance(tool, Mapping) else None
            if isinstance(fn, Mapping) and fn.get("name") == name:
                return bool(fn.get("require_approval"))
        return False

    # --------------------------------------------------- the next request

    def _with_next_turn(self, tool: Any) -> Any:
        """The tool with an ``instructions`` next-turn parameter carrying the
        session's guidance (the caller's own parameters kept)."""
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(fn, Mapping) or "name" not in fn:
            return tool  # a server tool
        params = dict(fn.get("next_turn_params") or {})
        users = params.get("instructions")

        async def instructions(arguments: Any, context: Dict[str, Any]) -> Any:
            if users is not None:
                self._base_instructions = await maybe_await(
                    users(arguments, {**context, "instructions": self._base_instructions})
                )
            return self._next_instructions()

        params["instructions"] = instructions
        return {**tool, "function": {**fn, "next_turn_params": params}}

    def _next_instructions(self) -> Any:
        """The base instructions, with the guidance queued since the last
        request; computed once a round (every executed call asks)."""
        if self._instructions_round != self.session.round:
            self._instructions_round = self.session.round
            guidance = self._guarded(lambda: self.session.next_request().get("guidance"))
            base = self._base_instructions
            if not guidance:
                self._instructions = base
            else:
                self._instructions = f"{base}\n\n{guidance}" if isinstance(base, str) and base else guidance
        return self._instructions

    # ------------------------------------------------------------- state

    def restore(self, loaded: Any) -> None:
        blob = getattr(loaded, "doom_loop", None)
        if blob is None:
            return
        self.session.resume(blob)
        # A resume that only answers approvals keeps the stop; a new turn lifts it.
        if self.request.get("approve_tool_calls") or self.request.get("reject_tool_calls"):
            self.session.resume_halt()

    def before_save(self, state: Any) -> Any:
        if not isinstance(state, ConversationState):
            return state
        if state.status == "complete" and self._stopped_by_doom:
            state = self._sealed(state)
        return _with_blob(state, self.session.get_state())

    def _sealed(self, state: ConversationState) -> ConversationState:
        """A halted run persists no call without an output (a resume would be
        rejected): each gets the halt's text (``allow_final_response=False``)."""
        messages = list(state.messages or [])
        answered = {get_field(m, "callId", None) or get_field(m, "call_id", None)
                    for m in messages if get_field(m, "type") == "function_call_output"}
        text = self.session.halt_text() or "Not executed: this run was stopped by doom-loop detection."
        for message in list(messages):
            call_id = get_field(message, "call_id", None) or get_field(message, "callId", None)
            if get_field(message, "type") == "function_call" and call_id not in answered:
                messages.append({"type": "function_call_output", "id": f"output_{call_id}", "callId": call_id,
                                 "output": json.dumps({"error": text})})
        return dataclasses.replace(state, messages=messages)
