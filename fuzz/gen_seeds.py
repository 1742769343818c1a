#!/usr/bin/env python3
"""Regenerates fuzz/seeds/<target>/ from the conformance vectors.

    python3 fuzz/gen_seeds.py

Deterministic (no randomness; cases are taken in file order), and small: the
seed folders are committed, so each file is capped and the total stays well
under 200 KB. The byte layouts mirror the targets in fuzz/fuzz_targets/.
"""
import hashlib
import json
import os
import shutil
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = os.path.join(ROOT, "vectors", "reference")
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
MAX_SEED = 4096  # bytes per seed file


def load(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        return json.load(f)


def utf8(text):
    """UTF-8 bytes, or None for a str holding a lone surrogate (not UTF-8)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


def write(target, items):
    folder = os.path.join(SEEDS, target)
    os.makedirs(folder, exist_ok=True)
    seen = set()
    for data in items:
        if data is None or len(data) > MAX_SEED:
            continue
        name = hashlib.sha1(data).hexdigest()[:16]
        if name in seen:
            continue
        seen.add(name)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return len(seen)


def args_strings(limit):
    """Diverse `args` texts: the first cases, plus every error case early on."""
    cases = load("fingerprints.json")["cases"]
    picked, errors = [], []
    for case in cases:
        data = utf8(case["args"])
        if data is None or len(data) > 600:
            continue
        if case.get("error"):
            if len(errors) < limit // 4:
                errors.append(data)
        elif len(picked) < limit:
            picked.append(data)
    return picked + errors


LOWERED = [
    b"[undefined,NaN,-Infinity,Infinity,hole,bigint,circular]",
    b'{"a":undefined,"b":[1,hole,3],"__proto__":{"1":2,"0":1}}',
    b'{"b":1,"a":2,"b":3,"10":4,"2":5}',
    b'"\\ud83c\\udf89\\ud800x\\uDC00"',
    b"[" * 65 + b"1" + b"]" * 65,
    b"-0e0",
    b"1e400",
    b"9007199254740993",
]


def parse_seeds():
    return args_strings(24) + LOWERED


def canonicalize_seeds():
    return [bytes([i % 4]) + a for i, a in enumerate(args_strings(24) + LOWERED)]


def restore_seeds():
    traces = load("monitor-traces.json")["traces"]
    states = []
    for trace in traces:
        for step in trace["steps"]:
            if step["op"] == "restore" and len(states) < 10:
                states.append(step["state"])
            if step["op"] == "getState" and step["expect"].get("text") and len(states) < 16:
                states.append(step["expect"])
    out = [json.dumps(s, separators=(",", ":")).encode() for s in states]
    # A state that resumes a real call: `list_tasks` with `{}` (the
    # fingerprint from the crate docs), so the target's records continue it.
    fp = "b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92"
    out.append(json.dumps({"tools": {"list_tasks": {"fingerprint": fp, "streak": 4}}}).encode())
    out += [
        b'{"tools":{"__proto__":{"fingerprint":"x","streak":999},"constructor":{"fingerprint":"y","streak":-5}}}',
        b'{"tools":[{"fingerprint":"a","streak":1e9,"roundFingerprints":["b","a","b"],"callStreaks":{"a":2,"z":0.5}}],"text":{"fingerprint":"t","streak":-2.5},"escalationsUsed":1.7}',
        b'{"tools":{"t":{"fingerprint":"\\ud800","streak":NaN}},"text":{"fingerprint":1,"streak":1},"escalationsUsed":-0}',
        b"[]",
        b'{"tools":{"0":{"fingerprint":"f","streak":2,"callStreaks":[3,hole,5]}}}',
        # State of the opt-in detectors (read only when they are configured).
        b'{"tools":{"fresh_tool":{"fingerprint":"x","streak":2}},"beyond":{"cycles":{"fresh_tool":{"history":["a","b","a","b","a","b"],"runs":[3,-1,2e6]}},'
        b'"ledger":{"fresh_tool":{"outcome":"o","input":"i","streak":2.5,"inputsVaried":1}},"failures":{"fresh_tool":4,"u":"x"},"spent":10,"spentWhileLooping":20}}',
    ]
    return out


# Mirrors PALETTE in fuzz_targets/text.rs.
TEXT_PALETTE = [
    float("nan"), 0.0, -0.0, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0, 2.9, 3.0, 4.0, 5.0, 12.0,
    16.0, 20.0, 400.0, 1e300, float("inf"), float("-inf"), -3.0, -1e300, 0.01,
    1.7976931348623157e308,
]


def threshold_byte(value):
    if value is None or value not in TEXT_PALETTE:
        return 0  # even: the reference default
    return (TEXT_PALETTE.index(value) << 1) | 1


def text_seed(text, options, split=7):
    options = options or {}
    head = bytes(
        threshold_byte(options.get(name))
        for name in ("maxPeriodTokens", "minRepeats", "minCoveredTokens", "maxWindowTokens")
    )
    body = text.encode("utf-16-le", "surrogatepass")[: MAX_SEED - 5]
    return head + bytes([split]) + body


def text_seeds():
    cases = load("text.json")["cases"]
    out = []
    for case in cases[:40]:
        if len(case["text"]) <= 1500:
            out.append(text_seed(case["text"], case["options"]))
        if len(out) >= 18:
            break
    # Odd thresholds on a repeating text, a split surrogate pair, whitespace only.
    stuck = "I am stuck. " * 8
    out.append(bytes([1, 3, 5, 37]) + bytes([5]) + stuck.encode("utf-16-le"))  # NaN, 0, -0, +inf
    out.append(bytes([35, 23, 41, 11]) + bytes([1]) + ("\U0001F389 x " * 20).encode("utf-16-le"))
    out.append(bytes([0, 0, 0, 0, 3]) + struct.pack("<6H", 0xD83C, 0x20, 0xDF89, 0xD800, 0xDC00, 0xFEFF))
    out.append(bytes([0, 0, 0, 0, 0]) + " \t\u2028\u3000\ufeff\u00a0".encode("utf-16-le"))
    return out


# ---- monitor programs (mirrors the Cursor layout in fuzz_targets/monitor.rs) ----
OPT_TRUE = [1]
DECLARE, RECORD, TEXT, RESET, ESCALATE, NEXT, RESTORE_SELF, RESTORE_BLOB, GET, RESULT, SPEND = 0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11
READ, SEARCH, PROTO = 0, 1, 2
EMPTY_ARGS, A1, A1_FLOAT = 0, 1, 2


def record(tool=READ, args=EMPTY_ARGS, round_sel=0, options=0):
    return [RECORD, tool, args, round_sel, options]


def monitor_seeds():
    out = []
    # 1. The same call round after round: observe, block, stop.
    out.append(OPT_TRUE + (record() + [NEXT]) * 7 + [GET])
    # 2. Escalation configured (ladder observe 2, escalate 3, block 4, stop 6, model "m", cap 1).
    escalation = [5, 0b011, 5, 0, 7, 8, 9, 4, 6]
    out.append(escalation + (record(SEARCH, A1) + [ESCALATE, 1, NEXT]) * 7 + [GET])
    # 3. Declared parallel rounds, in-round duplicates, a non-member.
    round_ = [DECLARE, 0, 2, READ, EMPTY_ARGS, READ, A1] + record(READ, EMPTY_ARGS) + record(READ, A1) + record(READ, A1_FLOAT)
    out.append(OPT_TRUE + (round_ + [NEXT]) * 4 + record(READ, 5) + [RESTORE_SELF] + record(READ, EMPTY_ARGS, 6))
    # 4. Text: within-response and cross-turn repetition, reset, whitespace only.
    out.append(OPT_TRUE + [TEXT, 0, TEXT, 0, TEXT, 0, RESET, TEXT, 3, TEXT, 2, TEXT, 4, 9, TEXT, 4, 9])
    # 5. Restore blobs, then keep recording.
    out.append(OPT_TRUE + [RESTORE_BLOB, 2] + record(READ) + [RESTORE_BLOB, 3, NEXT] + record(READ) + [RESTORE_BLOB, 0, GET])
    # 6. Unhashable key material (NaN, bigint, circular, too deep) and odd rounds.
    out.append(OPT_TRUE + [DECLARE, 0, 4, READ, 10, READ, 12, SEARCH, 13, SEARCH, 14]
               + record(READ, 10) + record(READ, 11, 8) + record(PROTO, 9, 9) + record(6, 0, 11, 2))
    # 7. Text section off / odd thresholds, with a raw UTF-16 chunk.
    out.append([5, 0b100, 4, 2, 13, 10, 11, 14] + [TEXT, 5, 8] + list("a a a a".encode("utf-16-le")[:8]) + [TEXT, 1, TEXT, 1, TEXT, 1])
    # 8. A raw state blob and raw key material.
    blob = b'{"tools":{"read":{"fingerprint":"x","streak":3}}}'
    out.append(OPT_TRUE + [RESTORE_BLOB, 4, len(blob)] + list(blob) + [RECORD, READ, 15, 11] + list(b'{"k":[1,2]}') + [0, 0])
    # 9. A declared round whose first recorded call is a non-member (the
    #    state shape restore does not keep as is; see fuzz_targets/common.rs).
    out.append(OPT_TRUE + [DECLARE, 0, 1, READ, A1] + record(READ, EMPTY_ARGS)
               + [NEXT, DECLARE, 0, 1, READ, A1] + record(READ, A1) + [GET])
    # 10. The opt-in detectors beyond the reference: an A,B,A,B cycle, results
    #     with unchanged outcomes under changing inputs, failures, spend.
    beyond = [5, 0b10000, 0b01111, 0, 0, 0, 19, 15]
    result_same = [RESULT, READ, 0, 1, EMPTY_ARGS, 0]
    result_fail = [RESULT, SEARCH, 1, 2, 0]
    out.append(beyond + (record(READ, EMPTY_ARGS) + result_same + result_fail + [SPEND, 3, NEXT]
                         + record(READ, A1) + result_same + result_fail + [SPEND, 8, NEXT]) * 3
               + [RESTORE_BLOB, 5] + record(READ) + [GET])
    return [bytes(p) for p in out]


# ---- session programs (mirrors the Cursor layout in fuzz_targets/session.rs) ----
ALL_CAPS = 0  # the session-options byte: every capability, no declared loopKey
RESPONSE, LONE_CALL, BEGIN, SEAL_OR_END, S_TEXT, SERVER_TOOL, S_RESULT, S_SPEND, USER_TURN, PERSIST, REQUESTS = 0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
DECLARED, EXEMPT, MATERIAL = 0x60, 0x00, 0x20  # a call's first byte: how its identity is found


def call(call_id=0, tool=READ, args=EMPTY_ARGS, how=DECLARED, material=None):
    return [how, call_id, tool, args] + ([] if material is None else [material])


def response(*calls, text=None):
    head = [RESPONSE, 1] if text is None else [RESPONSE, 0, text]
    return head + [len(calls)] + [b for c in calls for b in c]


def session_seeds():
    out = []
    # 1. The same call response after response: observe, block, stop, then refused.
    out.append(OPT_TRUE + [ALL_CAPS] + response(call()) * 8)
    # 2. A parallel fan-out with in-round duplicates, results for some, a lone call.
    fan = response(call(0, READ, A1), call(1, READ, A1), call(2, SEARCH))
    out.append(OPT_TRUE + [ALL_CAPS] + (fan + [S_RESULT, 0, 1, EMPTY_ARGS, S_RESULT, 5, 2]) * 4
               + [LONE_CALL] + call(3, SEARCH) + [SEAL_OR_END, 1])
    # 3. Persist and resume mid-run (the resumed session scores the next response), then keep going.
    out.append(OPT_TRUE + [ALL_CAPS] + response(call()) * 2 + [PERSIST, 0, 1] + call(1) + response(call(2)) * 3)
    # 4. A text `stop` halts before the response's calls; a user turn lifts it.
    out.append(OPT_TRUE + [ALL_CAPS] + response(call(), text=0) * 6 + [USER_TURN] + response(call(1)))
    # 5. A host that can do no rung, and a declared loopKey ["a"] for `read`.
    out.append(OPT_TRUE + [0x9F] + response(call(0, READ, A1), call(1, READ, 3)) * 6 + [REQUESTS, 1])
    # 6. Odd blobs resumed in place (a state-shaped one, an array), host-resolved and exempt identities.
    out.append(OPT_TRUE + [ALL_CAPS] + response(call()) * 2 + [PERSIST, 1, 2, PERSIST, 1, 0]
               + response(call(0, READ, A1, MATERIAL, A1), call(1, SEARCH, 10, EXEMPT)) * 3)
    # 7. Escalation configured (as the monitor seed): guidance and the next request taken.
    escalation = [5, 0b011, 5, 0, 7, 8, 9, 4, 6]
    out.append(escalation + [ALL_CAPS] + (response(call(0, SEARCH, A1)) + [REQUESTS, 1]) * 7)
    # 8. The opt-in detectors: results with unchanged outcomes, failures, spend, server tools.
    beyond = [5, 0b10000, 0b01111, 0, 0, 0, 19, 15]
    out.append(beyond + [ALL_CAPS] + (response(call(0, READ, A1)) + [S_RESULT, 0, 1, EMPTY_ARGS, S_SPEND, 3, SERVER_TOOL, 7, 1]) * 5
               + [PERSIST, 0, 1] + call(1, READ, A1))
    # 9. Malformed arguments (their raw text identifies them), round controls.
    malformed = [0x07, 0, SEARCH, 3] + list(b"{x:")
    out.append(OPT_TRUE + [ALL_CAPS] + ([BEGIN, LONE_CALL] + malformed + [SEAL_OR_END, 1]) * 5)
    return [bytes(p) for p in out]


# Targets whose seeds are generated here (the others' seeds are kept as they are).
GENERATED = ["parse", "canonicalize", "raw_strings", "restore", "text", "monitor", "session"]


def main():
    for target in GENERATED:
        shutil.rmtree(os.path.join(SEEDS, target), ignore_errors=True)
    for target, seeds in [
        ("parse", parse_seeds()),
        ("canonicalize", canonicalize_seeds()),
        # The same input: a selector byte, then lowered text.
        ("raw_strings", canonicalize_seeds()),
        ("restore", restore_seeds()),
        ("text", text_seeds()),
        ("monitor", monitor_seeds()),
        ("session", session_seeds()),
    ]:
        print(f"{target}: {write(target, seeds)} seeds")
    total = sum(
        os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(SEEDS) for f in files
    )
    print(f"total {total} bytes")
    assert total < 200_000, "seed folders must stay small"


if __name__ == "__main__":
    main()
