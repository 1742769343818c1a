"""The doom-loop guardrail in the real LiteLLM proxy (pinned, started with
`litellm --config` on 127.0.0.1) in front of a scripted model: the billing
loop is refused from the reference's turn (each refused call's result
replaced before the model reads it), then stopped — answered by the proxy
without calling the model — and the same run without the guardrail burns
every turn."""

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


def agent(proxy: Proxy) -> dict:
    """The billing agent's loop: each tool call runs (the card declines)
    until a response without tool calls ends it, or TURNS responses."""
    messages = [{"role": "user", "content": "Charge customer cus_1 for the invoice of 42.00."}]
    turns = 0
    while turns < TURNS:
        turns += 1
        message = proxy.chat(messages)["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        messages.append({k: v for k, v in message.items() if v is not None})
        if not calls:
            return {"turns": turns, "final": message.get("content") or "", "messages": messages}
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "error: card declined"})
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
          f"{len(guarded['model_requests'])} with the guardrail")


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
