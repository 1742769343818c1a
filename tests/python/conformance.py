"""The conformance loop through the wheel: every case of a corpus document
(format: vectors/FORMAT.md) through the Python package's public API, as a
user calls it — the same checks as js/conformance.mjs runs through the npm
package and `doomloop conformance` natively."""

from __future__ import annotations

import json
import logging
import math
from typing import Any, Callable, List

import doom_loop as api


def deep_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (NaN equal to NaN), booleans apart
    from numbers, objects regardless of key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def check(label: str, actual: Any, expected: Any) -> None:
    if not deep_equal(actual, expected):
        raise AssertionError(f"{label}: got {json.dumps(actual)[:300]} want {json.dumps(expected)[:300]}")


def decode_stand_ins(value: Any) -> Any:
    if isinstance(value, list):
        return [decode_stand_ins(v) for v in value]
    if isinstance(value, dict):
        if list(value) == ["$nan"] and value["$nan"] is True:
            return math.nan
        if list(value) == ["$undefined"] and value["$undefined"] is True:
            return api.UNDEFINED
        return {k: decode_stand_ins(v) for k, v in value.items()}
    return value


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def capture_warnings(fn: Callable[[], Any]) -> tuple:
    handler = _Capture()
    api.logger.addHandler(handler)
    propagate, api.logger.propagate = api.logger.propagate, False
    try:
        return fn(), handler.lines
    finally:
        api.logger.removeHandler(handler)
        api.logger.propagate = propagate


def raises(fn: Callable[[], Any]) -> bool:
    try:
        fn()
    except api.DoomLoopError:
        return True
    return False


def key_material(args_json: str) -> Any:
    """``JSON.parse(args)`` as the value the reference fingerprints (the
    text itself, marked as JSON, so nothing of Python's reading intervenes)."""
    return api.JsonText(args_json)


def run_fingerprint(c: dict) -> None:
    if c.get("error"):
        if not raises(lambda: api.canonicalize(c["args"])):
            raise AssertionError("expected canonicalization to fail")
        return
    if "jcs" in c:
        check("jcs", api.canonicalize(c["args"]), c["jcs"])
    if "fingerprint" in c:
        check("fingerprint", api.fingerprint_tool_call(c["toolName"], c["args"]), c["fingerprint"])
    if "keyFingerprint" in c:
        check("keyFingerprint", api.fingerprint_key_material(c["args"]), c["keyFingerprint"])


def run_text(c: dict) -> None:
    result = api.detect_text_repetition(c["text"], c.get("options"))
    check("result", result, c["result"])
    if result and "sampleFingerprint" in c:
        check("sampleFingerprint", api.fingerprint_key_material_value(result["sample"]), c["sampleFingerprint"])


def run_config(c: dict) -> None:
    value, warnings = capture_warnings(lambda: api.resolve_doom_loop_option(decode_stand_ins(c["option"])))
    check("resolved", value, c["resolved"])
    check("warnings", warnings, c["warnings"])


def run_loop_keys(c: dict) -> None:
    loop_key = decode_stand_ins(c["loopKey"])
    resolution = api.resolve_loop_key_material(loop_key, key_material(c["args"]))
    check("resolution", resolution, c["resolution"])
    if "keyMaterialJcs" in c:
        check("keyMaterialJcs", api.canonicalize_value(resolution["keyMaterial"]), c["keyMaterialJcs"])


def run_step(monitor: api.DoomLoopMonitor, s: dict) -> None:
    op = s["op"]
    if op == "declare":
        # Nested in a list, so parsed (a JsonText is text only as a whole value).
        calls = [{"toolName": c["toolName"], "keyMaterial": json.loads(c["args"])} for c in s["calls"]]
        _, warnings = capture_warnings(lambda: monitor.declare_round(s["round"], calls))
        check("warnings", warnings, s["warnings"])
    elif op == "record":
        record = monitor.record_tool_call(s["toolName"], key_material(s["args"]), s["round"], s.get("options"))
        check("record", record, s["expect"])
    elif op == "text":
        check("text", monitor.record_assistant_text(s["text"]), s["expect"])
    elif op == "resetText":
        monitor.reset_text_streak()
    elif op == "canEscalate":
        check("canEscalate", monitor.can_escalate(), s["expect"])
    elif op == "consumeEscalation":
        monitor.consume_escalation()
    elif op == "getState":
        check("state", monitor.get_state(), s["expect"])
    elif op == "restore":
        _, warnings = capture_warnings(lambda: monitor.restore(s["state"]))
        check("warnings", warnings, s["warnings"])
    else:
        raise AssertionError(f"unknown op {op}")


def run_trace(t: dict) -> None:
    config, _ = capture_warnings(lambda: api.resolve_doom_loop_option(decode_stand_ins(t["option"])))
    monitor = api.DoomLoopMonitor(config)
    for i, step in enumerate(t["steps"]):
        try:
            run_step(monitor, step)
        except AssertionError as error:
            raise AssertionError(f"step {i} ({step['op']}): {error}") from None


def upstream(doc: dict) -> List[Callable[[], None]]:
    out: List[Callable[[], None]] = []
    for v in doc.get("toolCallVectors", []):
        def tool_call(v: dict = v) -> None:
            check("jcs", api.canonicalize_value(v["keyMaterial"]), v["jcs"])
            check("fingerprint", api.fingerprint_tool_call_value(v["toolName"], v["keyMaterial"]), v["fingerprint"])
        out.append(tool_call)
    for v in doc.get("keyMaterialVectors", []):
        def key(v: dict = v) -> None:
            check("jcs", api.canonicalize_value(v["keyMaterial"]), v["jcs"])
            check("fingerprint", api.fingerprint_key_material_value(v["keyMaterial"]), v["fingerprint"])
        out.append(key)
    circular: dict = {}
    circular["self"] = circular
    deep: Any = 0
    for _ in range(65):
        deep = [deep]
    rejected = {
        # A Python int is a JSON number, not a bigint: the nearest stand-in
        # the reference rejects is the value no JSON number holds.
        "bigint": [[math.inf]],
        "NaN / Infinity": [[math.nan], {"x": math.inf}, -math.inf],
        "circular reference": [circular],
        "nesting > 64 levels": [deep],
    }
    for r in doc.get("rejected", []):
        def reject(r: dict = r) -> None:
            inputs = rejected.get(r["name"])
            if inputs is None:
                raise AssertionError(f"no construction for rejected vector {r['name']}")
            for value in inputs:
                if not raises(lambda: api.canonicalize_value(value)):
                    raise AssertionError(f"{r['name']}: accepted")
        out.append(reject)
    return out


def cases_of(doc: Any) -> List[Callable[[], None]]:
    if not isinstance(doc, dict):
        raise AssertionError("corpus file is not a JSON object")
    if "toolCallVectors" in doc:
        return upstream(doc)
    if isinstance(doc.get("traces"), list):
        return [lambda t=t: run_trace(t) for t in doc["traces"]]
    if not isinstance(doc.get("cases"), list):
        raise AssertionError("corpus file has neither `cases` nor `traces`")
    first = doc["cases"][0] if doc["cases"] else {}
    if "option" in first:
        run = run_config
    elif "loopKey" in first:
        run = run_loop_keys
    elif "text" in first:
        run = run_text
    elif "toolName" in first or not doc["cases"]:
        run = run_fingerprint
    else:
        raise AssertionError("corpus cases match no known kind")
    return [lambda c=c: run(c) for c in doc["cases"]]


def run_document(doc: Any, name: str) -> tuple:
    """Runs every case: ``(passed, [failure])``."""
    passed, failures = 0, []
    for i, case in enumerate(cases_of(doc)):
        try:
            case()
            passed += 1
        except (AssertionError, api.DoomLoopError) as error:
            failures.append(f"{name} case {i}: {error}")
    return passed, failures
