"""A persisted state crosses languages: the npm package's getState()
resumes in Python and Python's resumes in the npm package, each giving the
decisions an uninterrupted run gives (pkg/ must be built: make build)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import doom_loop
from conftest import ROOT

SCRIPT = ROOT / "tests" / "python" / "state_interop.mjs"
ARGS = '{"customer":"cus_1","amount":4200}'

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (ROOT / "pkg" / "node.mjs").exists(),
    reason="needs node and the built npm package (make build)",
)


def node(start: int, end: int, state=None) -> dict:
    stdin = "" if state is None else json.dumps(state)
    out = subprocess.run(
        ["node", str(SCRIPT), str(start), str(end)], input=stdin, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def python(start: int, end: int, state=None) -> dict:
    session = doom_loop.DoomLoopSession(doom_loop.RECOMMENDED_DOOM_LOOP_OPTION, state=state)
    decisions = []
    for round_ in range(start, end):
        outcome = session.on_response(None, [{"id": f"c{round_}", "tool_name": "charge_card", "arguments": ARGS}])
        decisions += [[d["action"], d["streak"], d["fingerprint"]] for d in outcome["decisions"]]
        if outcome["halt"]:
            decisions.append(["halt", outcome["halt"]["action"]])
    return {"state": session.get_state(), "decisions": decisions}


def test_an_uninterrupted_run_decides_the_same_in_python_and_in_the_npm_package():
    assert python(0, 8)["decisions"] == node(0, 8)["decisions"]


def test_a_state_the_npm_package_wrote_resumes_in_python_mid_streak():
    whole = node(0, 8)
    first = node(0, 2)
    rest = python(2, 8, state=first["state"])
    assert first["decisions"] + rest["decisions"] == whole["decisions"]
    assert rest["state"] == whole["state"]


def test_a_state_python_wrote_resumes_in_the_npm_package_mid_streak():
    whole = python(0, 8)
    first = python(0, 2)
    # As JSON text, the way it is stored between processes.
    rest = node(2, 8, state=json.loads(json.dumps(first["state"])))
    assert first["decisions"] + rest["decisions"] == whole["decisions"]
    assert rest["state"] == whole["state"]
