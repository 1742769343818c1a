"""The doom-loop detector for LLM agents, for Python.

A wheel of the Rust core that the npm package ``doom-loop-wasm`` and the
``doomloop`` CLI run: the same canonical form, fingerprints, verdicts,
messages and persisted state as OpenRouter's TypeScript reference, byte for
byte. This module is glue: it turns Python values into the core's text and
the core's JSON answers back into Python values; everything that decides is
the core's (``doom_loop._core``).

The JSON mapping (``docs/python.md``): a ``str``, ``bytes`` or ``bytearray``
passed as *arguments* is their JSON text, read as ``JSON.parse`` reads it;
any other value is written as ``json.dumps`` writes it and read back the
same way — ``dict`` is an object (non-string keys become strings), ``list``
and ``tuple`` arrays, ``int`` a JSON number (beyond 2**53 it rounds to the
nearest double, as ``JSON.parse`` of its digits does), ``float('nan')`` and
the infinities the JavaScript values (which canonicalization rejects, as
the reference does), a container holding itself a circular reference (the
reference's rejection or fallback). Anything else (``bytes`` inside a
value, sets, objects) raises :class:`DoomLoopError` naming its type.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from . import _core
from ._core import DoomLoopError

__all__ = [
    "DoomLoopError",
    "DoomLoopMonitor",
    "DoomLoopSession",
    "Gateway",
    "JsonText",
    "UNDEFINED",
    "RECOMMENDED_DOOM_LOOP_OPTION",
    "canonicalize",
    "canonicalize_value",
    "detect_text_repetition",
    "fingerprint_key_material",
    "fingerprint_key_material_value",
    "fingerprint_tool_call",
    "fingerprint_tool_call_value",
    "gateway_decide",
    "resolve_doom_loop_option",
    "resolve_loop_key_material",
]

logger = logging.getLogger("doom_loop")

#: The option the project recommends (the reference's defaults plus the
#: opt-in detectors it measured), as a fresh ``dict``.
RECOMMENDED_DOOM_LOOP_OPTION: dict = json.loads(_core.recommended_option_json())


class JsonText(str):
    """A ``str`` that is JSON text, wherever a value is expected."""


_Text = Union[str, bytes, bytearray]


class _Word:
    """A JavaScript value JSON has no text for, written as the core's word."""

    def __init__(self, word: str) -> None:
        self.word = word

    def __repr__(self) -> str:
        return f"doom_loop.{self.word.upper()}"


#: JavaScript's ``undefined`` (a key holding it is dropped, as
#: ``JSON.stringify`` and the reference's canonicalization drop it).
UNDEFINED: Any = _Word("undefined")
_CIRCULAR = _Word("circular")


def _marker(word: _Word) -> str:
    return f"\u0000doom-loop:{word.word}\u0000"


def _dumps(value: Any, ascii_only: bool) -> str:
    words: list = []

    def default(o: Any) -> Any:
        if isinstance(o, _Word):
            words.append(o)
            return _marker(o)
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=True, separators=(",", ":"), default=default)
    for word in {w.word: w for w in words}.values():
        text = text.replace(json.dumps(_marker(word)), word.word)
    return text


def _without_cycles(value: Any, open_: set) -> Any:
    """The value with each reference to an enclosing container replaced."""
    if isinstance(value, (dict, list, tuple)):
        if id(value) in open_:
            return _CIRCULAR
        open_.add(id(value))
        try:
            if isinstance(value, dict):
                return {k: _without_cycles(v, open_) for k, v in value.items()}
            return [_without_cycles(v, open_) for v in value]
        finally:
            open_.discard(id(value))
    return value


def _lower(value: Any, ascii_only: bool = False) -> str:
    """The core's lowered text of a Python value (see the module's mapping)."""
    if isinstance(value, JsonText):
        return str(value)
    try:
        try:
            return _dumps(value, ascii_only)
        except ValueError as error:
            if "Circular reference" not in str(error):
                raise DoomLoopError(f"value cannot be read: {error}") from None
        # Cycles: the core's own word for them, where each one starts.
        return _dumps(_without_cycles(value, set()), ascii_only)
    except TypeError as error:
        raise DoomLoopError(f"value cannot be read as JSON: {error}") from None
    except RecursionError:
        raise DoomLoopError("value cannot be read: nested too deeply") from None


def _with_text(function: Callable[..., Any], text: Optional[str], *rest: Any) -> Any:
    """``function(text, *rest)``; a text holding a lone surrogate (which
    UTF-8 cannot carry) crosses as its JSON literal."""
    try:
        return function(text, *rest)
    except UnicodeEncodeError:
        return function(json.dumps(text), *rest, is_json=True)


def _call(function: Callable[..., Any], *args: Any, value: Any, lowered: bool = True) -> Any:
    """``function(*args, text)`` with ``value`` lowered; a string with a lone
    surrogate (which UTF-8 cannot carry) crosses as its JSON escape."""
    try:
        return function(*args, _lower(value) if lowered else value)
    except UnicodeEncodeError:
        if not lowered:
            # JSON text holding a lone surrogate (a Python str can): inside
            # a string literal, as JSON.parse reads it, it is that code unit.
            return function(*args, _SURROGATE.sub(_escape_surrogate, value))
        return function(*args, _lower(value, ascii_only=True))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: "re.Match[str]") -> str:
    return "\\u%04x" % ord(match.group())


def _is_text(value: Any) -> bool:
    return isinstance(value, (str, bytes, bytearray)) and not isinstance(value, JsonText)


# --- Canonical form and fingerprints ----------------------------------------


def canonicalize(key_material: Any) -> str:
    """The reference's ``canonicalizeKeyMaterial`` (RFC 8785). ``str`` /
    ``bytes`` are JSON text; other values follow the JSON mapping."""
    if _is_text(key_material):
        return _call(_core.canonicalize_json, value=key_material, lowered=False)
    return _call(_core.canonicalize_lowered_text, value=key_material)


def canonicalize_value(value: Any) -> str:
    """``canonicalize`` of a Python value, a ``str`` being a JSON string."""
    return _call(_core.canonicalize_lowered_text, value=value)


def fingerprint_tool_call(tool_name: str, arguments: Any) -> str:
    """``sha256(utf8(tool_name + "\\n" + jcs(arguments)))`` as 64 hex digits:
    the reference's ``fingerprintToolCall``. ``arguments`` as JSON text (the
    model's own: the same text gives the same fingerprint in every
    language) or a value."""
    if _is_text(arguments):
        return _call(_core.fingerprint_tool_call_json, tool_name, value=arguments, lowered=False)
    return _call(_core.fingerprint_tool_call_lowered, tool_name, value=arguments)


def fingerprint_tool_call_value(tool_name: str, key_material: Any) -> str:
    """``fingerprint_tool_call`` of a Python value, a ``str`` being a JSON string."""
    return _call(_core.fingerprint_tool_call_lowered, tool_name, value=key_material)


def fingerprint_key_material(key_material: Any) -> str:
    """The reference's ``fingerprintKeyMaterial``: ``sha256(jcs(key_material))``."""
    if _is_text(key_material):
        return _call(_core.fingerprint_key_material_json, value=key_material, lowered=False)
    return _call(_core.fingerprint_key_material_lowered, value=key_material)


def fingerprint_key_material_value(key_material: Any) -> str:
    """``fingerprint_key_material`` of a Python value, a ``str`` being a JSON string."""
    return _call(_core.fingerprint_key_material_lowered, value=key_material)


# --- Options, text, loop keys ------------------------------------------------


def _warn(warnings: Iterable[str]) -> None:
    for warning in warnings:
        logger.warning("%s", warning)


def _resolve(option: Any) -> tuple:
    answer = json.loads(_call(_core.resolve_option, value=option))
    return answer["resolved"], answer["warnings"]


def resolve_doom_loop_option(option: Any = True) -> Optional[dict]:
    """The reference's ``resolveDoomLoopOption``: the resolved configuration,
    or ``None`` when detection is off; warnings go to the ``doom_loop``
    logger, a configuration error raises :class:`DoomLoopError`."""
    resolved, warnings = _resolve(option)
    _warn(warnings)
    return resolved


def detect_text_repetition(text: str, options: Optional[Mapping[str, Any]] = None) -> Optional[dict]:
    """The reference's ``detectTextRepetition``: the repetition found, or ``None``."""
    lowered_options = None if options is None else _lower(options, ascii_only=True)
    return json.loads(_with_text(_core.detect_text_repetition, text, lowered_options))


def resolve_loop_key_material(loop_key: Any, args: Any) -> dict:
    """The reference's ``resolveLoopKeyMaterial`` for a data declaration
    (``UNDEFINED``: absent; ``False``: exempt; a field list; anything else
    falls back to the full arguments, with a warning): ``{kind,
    keyMaterial?, warning?}``. ``args`` is a value (``JsonText`` for text)."""
    return json.loads(_core.resolve_loop_key(_lower(loop_key, ascii_only=True), _lower(args, ascii_only=True)))


# --- The monitor -------------------------------------------------------------


class DoomLoopMonitor:
    """The reference's detector state machine over a resolved configuration
    (``resolve_doom_loop_option``). Warnings go to the ``doom_loop`` logger."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._inner = _core.Monitor(_lower(config, ascii_only=True))

    def declare_round(self, round: float, calls: Sequence[Mapping[str, Any]]) -> None:
        """``declareRound``: ``calls`` as ``[{"toolName", "keyMaterial"}]``."""
        _warn(json.loads(self._inner.declare_round(round, _lower(list(calls), ascii_only=True))))

    def record_tool_call(
        self, tool_name: str, key_material: Any, round: float, options: Optional[Mapping[str, Any]] = None
    ) -> dict:
        """``recordToolCall``: ``{fingerprint, streak, duplicateInRound, verdict}``."""
        lowered_options = None if options is None else _lower(options, ascii_only=True)
        return json.loads(
            self._inner.record_tool_call(tool_name, _lower(key_material, ascii_only=True), round, lowered_options)
        )

    def record_assistant_text(self, text: str) -> Optional[dict]:
        """``recordAssistantText``: the verdict or ``None``."""
        return json.loads(_with_text(self._inner.record_assistant_text, text))

    def record_tool_result(
        self, tool_name: str, input: str, outcome: Any = None, failed: bool = False, round: float = 0
    ) -> Optional[dict]:
        """One call's result for the opt-in outcome detectors: the verdict or ``None``."""
        lowered = None if outcome is None else _lower(outcome, ascii_only=True)
        return json.loads(self._inner.record_tool_result(tool_name, input, lowered, failed, round))

    def record_spend(self, amount: float) -> Optional[dict]:
        """The opt-in budget guard: one turn's spend; the verdict or ``None``."""
        return json.loads(self._inner.record_spend(amount))

    def reset_text_streak(self) -> None:
        self._inner.reset_text_streak()

    def can_escalate(self) -> bool:
        return self._inner.can_escalate()

    def consume_escalation(self) -> None:
        self._inner.consume_escalation()

    def get_state(self) -> dict:
        """``getState()``: the reference's persisted ``doomLoop`` blob."""
        return json.loads(self._inner.get_state())

    def restore(self, state: Any) -> None:
        """``restore``: fails open (a corrupt blob starts over, with a warning)."""
        _warn(json.loads(self._inner.restore(_state_text(state))))


def _state_text(state: Any) -> str:
    if isinstance(state, (bytes, bytearray)):
        state = state.decode("utf-8", "replace")
    if isinstance(state, str):
        try:
            json.loads(state)
        except ValueError:
            # Unreadable: restored as the reference restores garbage.
            return _lower(state, ascii_only=True)
        return state
    return _lower(state, ascii_only=True)


# --- The session engine -------------------------------------------------------

_RUN_DECISION_KEYS = ("id", "toolName")


def _call_input(call: Any) -> tuple:
    """``(id, tool_name, arguments, is_json)`` from a mapping or a tuple."""
    if isinstance(call, Mapping):
        id_ = call.get("id", "")
        name = call.get("tool_name", call.get("toolName", call.get("name")))
        arguments = call.get("arguments", call.get("args", {}))
    else:
        id_, name, arguments = call
    if not isinstance(name, str):
        raise DoomLoopError("a session call needs a string tool name")
    id_ = "" if id_ is None else str(id_)
    if arguments is None:
        arguments = {}
    if isinstance(arguments, (bytes, bytearray)):
        arguments = arguments.decode("utf-8", "replace")
    if isinstance(arguments, str) and not isinstance(arguments, JsonText):
        return (id_, name, arguments, True)
    return (id_, name, _lower(arguments, ascii_only=True), False)


def _run_decision(call: Any) -> dict:
    try:
        id_, name = _call_input(call)[:2]
    except Exception:  # noqa: BLE001 - a neutral decision never fails
        id_, name = "", ""
    return {
        "id": id_,
        "toolName": name,
        "action": "run",
        "message": None,
        "verdict": None,
        "fingerprint": None,
        "streak": 0,
        "duplicateInRound": False,
        "exempt": True,
        "malformed": False,
    }


class DoomLoopSession:
    """One agent run (or conversation) mapped onto the detector: the same
    engine as the JS ``DoomLoopSession`` (docs/session.md).

    ``doom_loop``: the option (``True``: the reference's defaults;
    ``RECOMMENDED_DOOM_LOOP_OPTION``; ``False``: off). ``loop_keys``: per
    tool, a field list or ``False``. ``loop_effects``: per tool, its declared
    effect (docs/detectors.md). ``state``: a persisted ``get_state()``
    (``dict`` or JSON text, from any language). ``capabilities``: what the
    host can do (``refuse``, ``stop``, ``steer``, ``escalate``; each on
    unless ``False``). ``on_detected``: called with each new verdict.

    Detection never fails the agent: an internal error turns the session
    observe-only (every call runs), with one warning.
    """

    def __init__(
        self,
        doom_loop: Any = True,
        *,
        loop_keys: Optional[Mapping[str, Any]] = None,
        loop_effects: Optional[Mapping[str, Any]] = None,
        state: Any = None,
        capabilities: Optional[Mapping[str, bool]] = None,
        on_detected: Optional[Callable[[dict], None]] = None,
    ) -> None:
        config, warnings = _resolve(doom_loop)
        _warn(warnings)
        self._on_detected = on_detected
        self._inner: Any = None
        self._seen = 0
        if config is None:
            return
        options = {
            "loopKeys": dict(loop_keys or {}),
            "loopEffects": dict(loop_effects or {}),
            "capabilities": dict(capabilities or {}),
        }
        self._inner = _core.Session(
            _lower(config, ascii_only=True),
            _lower(options, ascii_only=True),
            None if state is None else _state_text(state),
        )
        _warn(json.loads(self._inner.take_warnings()))
        self._seen = len(json.loads(self._inner.verdicts()))

    @property
    def enabled(self) -> bool:
        """Whether detection is on (not off by option, not observe-only)."""
        return self._inner is not None

    def _answer(self, text: str) -> Any:
        answer = json.loads(text)
        _warn(answer.get("warnings", ()))
        self._notify()
        return answer["value"]

    def _notify(self) -> None:
        if self._on_detected is None or self._inner is None:
            return
        verdicts = json.loads(self._inner.verdicts())
        for verdict in verdicts[self._seen :]:
            try:
                self._on_detected(verdict)
            except Exception as error:  # noqa: BLE001 - a callback never fails the agent
                logger.warning("doom-loop: onDetected threw: %s", error)
        self._seen = len(verdicts)

    def _broken(self, error: Exception) -> None:
        logger.warning("doom-loop: detection turned off for this session: %s", error)
        self._inner = None

    def on_response(self, text: Optional[str] = None, calls: Sequence[Any] = ()) -> dict:
        """A model response (its text and tool calls, each ``{"id",
        "tool_name", "arguments"}`` or ``(id, tool_name, arguments)``): the
        round's outcome ``{round, textVerdict, decisions, halt, verdicts}``."""
        if self._inner is None:
            return {"round": 0, "textVerdict": None, "decisions": [_run_decision(c) for c in calls], "halt": None, "verdicts": []}
        try:
            inputs = [_call_input(c) for c in calls]
            try:
                return self._answer(_with_text(self._inner.on_response, text, inputs))
            except UnicodeEncodeError:
                inputs = [(i, n, _SURROGATE.sub(_escape_surrogate, a), j) for i, n, a, j in inputs]
                return self._answer(_with_text(self._inner.on_response, text, inputs))
        except (DoomLoopError, UnicodeEncodeError) as error:
            self._broken(error)
            return self.on_response(text, calls)

    def on_call(self, call: Any) -> dict:
        """One call seen alone (recorded into the current round): its decision."""
        if self._inner is None:
            return _run_decision(call)
        try:
            return self._answer(self._inner.on_call(_call_input(call)))
        except (DoomLoopError, UnicodeEncodeError) as error:
            self._broken(error)
            return _run_decision(call)

    def on_result(self, id: str, outcome: Any = None, failed: bool = False) -> Optional[dict]:
        """A call's result (``outcome``: its identity for the opt-in outcome
        detectors; ``failed``: it errored): a new verdict or ``None``."""
        if self._inner is None:
            return None
        lowered = None if outcome is None or not self._inner.reads_outcomes() else _lower(outcome, ascii_only=True)
        return self._answer(self._inner.on_result(str(id), lowered, bool(failed)))

    def on_text(self, text: str) -> Optional[dict]:
        """A response's text alone: a verdict or ``None``."""
        if self._inner is None:
            return None
        return self._answer(_with_text(self._inner.on_text, text))

    def on_spend(self, amount: float) -> Optional[dict]:
        """One response's spend (budget guard): a verdict or ``None``."""
        return None if self._inner is None else self._answer(self._inner.on_spend(float(amount)))

    def on_user_turn(self) -> None:
        """A new user turn: lifts a halt."""
        if self._inner is not None:
            self._inner.on_user_turn()

    def begin_round(self) -> None:
        if self._inner is not None:
            self._inner.begin_round()

    def end_round(self) -> None:
        if self._inner is not None:
            self._inner.end_round()

    def seal_round(self) -> None:
        if self._inner is not None:
            self._inner.seal_round()

    def would_halt(self, calls: Sequence[Any]) -> bool:
        """Would these calls, as the next round, halt the run?"""
        return self._inner is not None and self._inner.would_halt([_call_input(c) for c in calls])

    def next_request(self) -> dict:
        """``{guidance, escalate}`` for the next request (consumed)."""
        if self._inner is None:
            return {"guidance": None, "escalate": False}
        return json.loads(self._inner.next_request())

    def halt(self) -> Optional[dict]:
        """The verdict that halted the run, or ``None``."""
        return None if self._inner is None else json.loads(self._inner.halt())

    def halt_text(self) -> Optional[str]:
        """The text a call not executed because of the halt returns, or ``None``."""
        return None if self._inner is None else json.loads(self._inner.halt_text())

    def resume_halt(self) -> None:
        if self._inner is not None:
            self._inner.resume_halt()

    def verdicts(self) -> list:
        """Every verdict so far."""
        return [] if self._inner is None else json.loads(self._inner.verdicts())

    def decision(self, id: str) -> Optional[dict]:
        """The decision for a call of the current round, or ``None``."""
        return None if self._inner is None else json.loads(self._inner.decision(str(id)))

    @property
    def round(self) -> int:
        return 0 if self._inner is None else self._inner.round

    def get_state(self) -> Optional[dict]:
        """The state to persist (the reference's ``doomLoop`` blob, which the
        JS package and the CLI resume too), or ``None`` when detection is off."""
        return None if self._inner is None else json.loads(self._inner.get_state())

    def get_state_json(self) -> Optional[str]:
        """``get_state()`` as the JSON text the core wrote."""
        return None if self._inner is None else self._inner.get_state()

    def resume(self, state: Any) -> None:
        """Resumes a persisted state in place (fails open, with a warning)."""
        if self._inner is not None:
            self._answer(self._inner.resume(_state_text(state)))


# --- The gateway ------------------------------------------------------------------


def gateway_decide(
    api: str,
    body: Union[str, bytes, bytearray],
    option: Any = None,
    loop_keys: Optional[Mapping[str, Any]] = None,
) -> dict:
    """Decides one LLM API request (``api``: ``"chat"``, ``"responses"`` or
    ``"anthropic"``) by replaying its conversation: ``{action: "forward" |
    "rewrite" | "answer", body?, contentType?, headers, log}`` — the engine
    of the JS gateway and ``doomloop proxy``. ``option``: the ``doomLoop``
    option (``None``: ``RECOMMENDED_DOOM_LOOP_OPTION``)."""
    lowered_option = None if option is None else _lower(option, ascii_only=True)
    lowered_keys = None if loop_keys is None else _lower(loop_keys, ascii_only=True)
    if isinstance(body, bytearray):
        body = bytes(body)
    return json.loads(_core.gateway_decide(api, body, lowered_option, lowered_keys))


class Gateway:
    """:func:`gateway_decide` with a cache of conversation prefixes (up to
    ``capacity``): the same decisions, an agent's next request going on from
    its previous one instead of replaying the whole conversation. One per
    process serves every conversation (they are told apart by content)."""

    def __init__(self, option: Any = None, loop_keys: Optional[Mapping[str, Any]] = None, capacity: int = 256) -> None:
        lowered_option = None if option is None else _lower(option, ascii_only=True)
        lowered_keys = None if loop_keys is None else _lower(loop_keys, ascii_only=True)
        self._inner = _core.Gateway(lowered_option, lowered_keys, capacity)

    def decide(self, api: str, body: Union[str, bytes, bytearray]) -> dict:
        """Decides one request (as :func:`gateway_decide`)."""
        if isinstance(body, bytearray):
            body = bytes(body)
        return json.loads(self._inner.decide(api, body))
