"""The wheel beside what a Python user would write instead — `jcs` or
`canonicaljson` (PyPI) + hashlib.sha256 — on the JS peers' four shapes,
in one process (median of repeated runs), and a session response with one
call. Run by `make bench` (scripts/bench-python.sh builds a release wheel);
`--json FILE` writes the times (seconds) for the scoreboard
(benches/js/targets.mjs)."""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import time

import canonicaljson
import jcs

import doom_loop


def shapes():
    small = {"path": "src/main.rs", "query": "fn main", "limit": 20, "flags": ["a", "b"], "deep": {"x": 1.5}}
    rows = {"rows": [{"id": i, "name": f"row {i}", "score": i * 0.25, "tags": ["a", "b"]} for i in range(20000)]}
    string = {"content": "x = 1\n" * ((1 << 20) // 6)}
    nested: object = 1
    for _ in range(60):
        nested = {"a": nested}
    return {"150 B": small, "1.4 MB rows": rows, "1 MB string": string, "60 levels": nested}


def timed(fn, budget=0.5):
    samples = []
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline or len(samples) < 5:
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def fmt(seconds):
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def main():
    rows = []
    print(f"{'shape':<12} {'size':>9} {'wheel (text)':>13} {'wheel (value)':>14} {'jcs+sha256':>12} {'canonicaljson+sha256':>21} {'× jcs':>6} {'× canonicaljson':>16}")
    for name, value in shapes().items():
        text = json.dumps(value)
        wheel_text = timed(lambda: doom_loop.fingerprint_tool_call("t", text))
        wheel_value = timed(lambda: doom_loop.fingerprint_tool_call("t", value))
        peer_jcs = timed(lambda: hashlib.sha256(b"t\n" + jcs.canonicalize(value)).hexdigest())
        peer_cj = timed(lambda: hashlib.sha256(b"t\n" + canonicaljson.encode_canonical_json(value)).hexdigest())
        # The floor of a value's fingerprint in Python: its JSON text by the
        # C encoder and one SHA-256, no canonicalization at all.
        floor = timed(lambda: hashlib.sha256(b"t\n" + json.dumps(value).encode()).hexdigest())
        rows.append({"shape": name, "bytes": len(text), "wheelText": wheel_text, "wheelValue": wheel_value, "jcs": peer_jcs, "canonicaljson": peer_cj, "floor": floor})
        print(
            f"{name:<12} {len(text):>9,} {fmt(wheel_text):>13} {fmt(wheel_value):>14} {fmt(peer_jcs):>12} {fmt(peer_cj):>21}"
            f" {peer_jcs / wheel_text:>5.1f}× {peer_cj / wheel_text:>15.1f}×"
        )
    session = doom_loop.DoomLoopSession(doom_loop.RECOMMENDED_DOOM_LOOP_OPTION)
    counter = iter(range(10**9))

    def respond():
        n = next(counter)
        session.on_response(None, [{"id": f"c{n}", "tool_name": "read", "arguments": f'{{"path":"src/{n % 50}.rs"}}'}])

    response = timed(respond, 1.0)
    print(f"session response with one call: {fmt(response)}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w", encoding="utf-8") as out:
            json.dump({"python": sys.version.split()[0], "rows": rows, "sessionResponse": response}, out, indent=1)


if __name__ == "__main__":
    main()
