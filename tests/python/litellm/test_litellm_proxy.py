"""The doom-loop guardrail in the real LiteLLM proxy (pinned, started with
`litellm --config` on 127.0.0.1) in front of a scripted model: the billing
loop is refused from the reference's turn (each refused call's result
replaced before the model reads it), then stopped — answered by the proxy
without calling the model — and the same run without the guardrail burns
every turn. Paging and edit-then-test go through unchanged (no call
refused); a parallel fan-out of identical calls counts once; and a
conversation continued through a new proxy process is judged as it was by
the first (the conversation carries the state)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripted_model import ScriptedModel, billing_loop  # noqa: E402

pytest.importorskip("litellm")

HERE = Path(__file__).resolve().parent
TURNS = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(tmp_path: Path, model_port: int, guarded: bool) -> Path:
    lines = [
        "model_list:",
        "  - model_name: scripted",
        "    litellm_params:",
        "      model: openai/scripted",
        f"      api_base: http://127.0.0.1:{model_port}/v1",
        "      api_key: sk-scripted",
    ]
    if guarded:
        lines += [
            "guardrails:",
            "  - guardrail_name: doom-loop",
            "    litellm_params:",
            "      guardrail: doom_loop_guardrail.DoomLoopGuardrail",
            "      mode: pre_call",
            "      default_on: true",
        ]
    (tmp_path / "doom_loop_guardrail.py").write_text((HERE / "doom_loop_guardrail.py").read_text())
    path = tmp_path / "config.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Proxy:
    def __init__(self, config_path: Path) -> None:
        self.port = free_port()
        env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_TELEMETRY="False")
        litellm = Path(sys.executable).with_name("litellm")
        self.log = open(config_path.with_suffix(".log"), "w")
        self.process = subprocess.Popen(
            [str(litellm), "--config", str(config_path), "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=config_path.parent,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"litellm exited: {config_path.with_suffix('.log').read_text()[-3000:]}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health/liveliness", timeout=2)
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("litellm did not start")

    def chat(self, messages: list) -> dict:
        body = json.dumps({"model": "scripted", "messages": messages, "tools": [TOOL]}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/v1/chat/completions",
            data=body,
            headers={"content-type": "application/json", "authorization": "Bearer sk-any"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            raise AssertionError(f"proxy answered {error.code}: {error.read()[:2000]!r}") from None

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


TOOL = {
    "type": "function",
    "function": {
        "name": "charge_card",
        "parameters": {"type": "object", "properties": {"customer": {"type": "string"}, "amount": {"type": "number"}}},
    },
}


def declined(call: dict, messages: list) -> str:
    return "error: card declined"


def agent(proxy: Proxy, user: str = "Charge customer cus_1 for the invoice of 42.00.", execute=declined,
          messages: Optional[list] = None, turns: int = TURNS) -> dict:
    """The agent's loop: each tool call runs (by default the card declines)
    until a response without tool calls ends it, or ``turns`` responses.
    ``messages``: a conversation to go on with."""
    messages = messages if messages is not None else [{"role": "user", "content": user}]
    for turn in range(1, turns + 1):
        message = proxy.chat(messages)["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        messages.append({k: v for k, v in message.items() if v is not None})
        if not calls:
            return {"turns": turn, "final": message.get("content") or "", "messages": messages}
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": execute(call, messages)})
    return {"turns": turns, "final": None, "messages": messages}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = {}
    for guarded in (False, True):
        tmp = tmp_path_factory.mktemp("guarded" if guarded else "bare")
        with ScriptedModel(billing_loop) as model:
            proxy = Proxy(config(tmp, model.port, guarded))
            try:
                run = agent(proxy)
            finally:
                proxy.close()
            run["model_requests"] = list(model.requests)
            run["tokens"] = sum(usage["total_tokens"] for usage in model.usage)
        results[guarded] = run
    return results


def test_without_the_guardrail_the_billing_loop_burns_every_turn(runs):
    bare = runs[False]
    assert bare["final"] is None
    assert len(bare["model_requests"]) == TURNS


def test_the_guardrail_stops_the_billing_loop_without_calling_the_model(runs):
    guarded = runs[True]
    assert guarded["final"], "the run ended with the proxy's stop message"
    assert "oom loop" in guarded["final"]
    # The stop was answered by the proxy: the model saw every request but the last.
    assert len(guarded["model_requests"]) == guarded["turns"] - 1
    assert guarded["turns"] < TURNS
    print(f"litellm proxy: model requests {len(runs[False]['model_requests'])} without, "
          f"{len(guarded['model_requests'])} with the guardrail; "
          f"tokens {runs[False]['tokens']} without, {guarded['tokens']} with")


def test_the_model_reads_the_refusal_in_place_of_a_refused_calls_result(runs):
    requests = runs[True]["model_requests"]
    replaced = [
        m["content"]
        for body in requests
        for m in body["messages"]
        if m.get("role") == "tool" and "card declined" not in str(m.get("content"))
    ]
    assert replaced, "some refused call's result was replaced before the model read it"
    assert all("oom loop" in str(text) for text in replaced)


def tool_results(messages: list) -> list:
    return [m.get("content") for m in messages if m.get("role") == "tool"]


def call(id: str, name: str, arguments: dict) -> dict:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def calls(*tool_calls: dict) -> dict:
    return {"content": None, "tool_calls": list(tool_calls)}


PAGING = "Find the bug in billing.py."
EDIT_THEN_TEST = "Make the test suite pass."
FAN_OUT = "Charge customer cus_1 for the invoice of 42.00, three times at once."
FAILING = [5, 4, 3, 2, 1, 0]


def scripted(body: dict, n: int) -> dict:
    """One model for every scenario of the shared proxy, told apart by the
    conversation's first message; each turn read from the conversation."""
    messages = body["messages"]
    user = messages[0].get("content")
    done = tool_results(messages)
    k = sum(1 for m in messages if m.get("role") == "assistant")
    if user == PAGING:
        return {"content": "Found the bug in part 10."} if k >= 10 else calls(call(f"page_{k}", "scroll_down", {}))
    if user == EDIT_THEN_TEST:
        if any('"failing":0' in str(text) for text in done):
            return {"content": "All tests pass."}
        if k % 2 == 0:
            return calls(call(f"edit_{k}", "edit_file", {"path": "src/billing.py", "patch": f"fix {k // 2 + 1}"}))
        return calls(call(f"test_{k}", "run_tests", {}))
    charge = {"customer": "cus_1", "amount": 4200}
    return calls(*(call(f"charge_{k}_{i}", "charge_card", charge) for i in range(3)))


def paging_tool(call: dict, messages: list) -> str:
    page = len(tool_results(messages)) + 1
    return json.dumps({"lines": f"{page * 100 - 99}-{page * 100} of billing.py", "text": f"def part_{page}(): ..."})


def edit_then_test_tool(call: dict, messages: list) -> str:
    if call["function"]["name"] == "edit_file":
        return json.dumps({"ok": True})
    n = FAILING[sum(1 for m in messages if m.get("role") == "tool" and '"failing"' in str(m.get("content")))]
    return json.dumps({"passing": 10 - n, "failing": n}, separators=(",", ":"))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One guarded proxy (and one scripted model) for the scenarios below."""
    with ScriptedModel(scripted) as model:
        proxy = Proxy(config(tmp_path_factory.mktemp("shared"), model.port, True))
        try:
            yield proxy, model
        finally:
            proxy.close()


def model_saw(model: ScriptedModel, user: str) -> list:
    return [body for body in model.requests if body["messages"][0].get("content") == user]


@pytest.mark.parametrize(
    "user, execute, answer, tool_runs",
    [(PAGING, paging_tool, "Found the bug in part 10.", 10), (EDIT_THEN_TEST, edit_then_test_tool, "All tests pass.", 12)],
    ids=["paging", "edit-then-test"],
)
def test_progress_goes_through_the_guardrail_unchanged_under_the_default(shared, user, execute, answer, tool_runs):
    proxy, model = shared
    run = agent(proxy, user, execute)
    assert run["final"] == answer
    assert len(tool_results(run["messages"])) == tool_runs
    seen = model_saw(model, user)
    # Every request reached the model as the client sent it: no result replaced, no guidance.
    assert len(seen) == run["turns"]
    assert [body["messages"] for body in seen] == [run["messages"][: len(body["messages"])] for body in seen]
    refusals = [t for body in seen for t in tool_results(body["messages"]) if "oom loop" in str(t)]
    assert refusals == []
    print(f"litellm proxy {user!r}: {tool_runs} tool runs, {len(seen)} model requests, {len(refusals)} refusals")


def test_a_parallel_fan_out_of_identical_calls_counts_once(shared, runs):
    proxy, model = shared
    run = agent(proxy, FAN_OUT)
    single = runs[True]
    # Three identical calls a response are one round: stopped at the same
    # turn as the single-call billing loop, the same results replaced.
    assert run["final"] and "oom loop" in run["final"]
    assert run["turns"] == single["turns"]
    seen = model_saw(model, FAN_OUT)
    assert len(seen) == run["turns"] - 1, "the stop was answered by the proxy"

    def replaced(requests: list) -> list:
        return [sum(1 for t in tool_results(b["messages"]) if "oom loop" in str(t)) for b in requests]

    assert replaced(seen) == [3 * r for r in replaced(single["model_requests"])]
    # Every member of a refused round reads the round's one verdict.
    last = tool_results(seen[-1]["messages"])
    for i in range(0, len(last), 3):
        assert len(set(last[i:i + 3])) == 1


def test_a_conversation_continued_through_a_new_proxy_is_judged_the_same(tmp_path, runs):
    uninterrupted = runs[True]
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    with ScriptedModel(billing_loop) as model:
        first = Proxy(config(tmp_path / "first", model.port, True))
        try:
            # Two declined charges, then the first proxy goes away mid-streak.
            started = agent(first, turns=2)
        finally:
            first.close()
        second = Proxy(config(tmp_path / "second", model.port, True))
        try:
            resumed = agent(second, messages=started["messages"], turns=TURNS - 2)
        finally:
            second.close()
    assert resumed["final"] == uninterrupted["final"]
    assert resumed["messages"] == uninterrupted["messages"]
    assert model.requests == uninterrupted["model_requests"]
    print(f"litellm proxy resumed through a new process: stopped after {2 + resumed['turns']} turns "
          f"({uninterrupted['turns']} uninterrupted)")
