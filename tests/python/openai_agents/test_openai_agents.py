"""The OpenAI Agents SDK (openai-agents, pinned) with the doom-loop guard,
the model scripted on 127.0.0.1 over chat completions: the billing loop is
refused from the 3rd call (the model reads the verdict instead of the
result) and the run ends at the stop; without the guard it runs to
max_turns. A paging run whose calls differ completes under the default."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("agents")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool  # noqa: E402
from agents.exceptions import MaxTurnsExceeded, ToolInputGuardrailTripwireTriggered  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from scripted_model import ScriptedModel, billing_loop  # noqa: E402

from doom_loop.openai_agents import DoomLoopGuard  # noqa: E402

MAX_TURNS = 20


def run(model: ScriptedModel, guard=None) -> dict:
    executed = []

    def charge_card(customer: str, amount: int) -> str:
        """Charge a customer's card."""
        executed.append(amount)
        return "error: card declined"

    tool = function_tool(charge_card, tool_input_guardrails=[guard.guardrail] if guard else None)
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{model.port}/v1", api_key="sk-scripted")
    agent = Agent(
        name="billing",
        instructions="Charge the customer.",
        tools=[tool],
        model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
    )
    ended = "final"
    try:
        asyncio.run(Runner.run(agent, "Charge cus_1 42.00", max_turns=MAX_TURNS, hooks=guard.hooks if guard else None))
    except MaxTurnsExceeded:
        ended = "max_turns"
    except ToolInputGuardrailTripwireTriggered:
        ended = "stopped"
    return {"ended": ended, "executed": len(executed), "model_requests": len(model.requests)}


@pytest.fixture(autouse=True)
def no_tracing(monkeypatch):
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")


def test_without_the_guard_the_billing_loop_runs_to_max_turns():
    with ScriptedModel(billing_loop) as model:
        bare = run(model)
    assert bare["ended"] == "max_turns"
    assert bare["executed"] == MAX_TURNS


def test_the_guard_refuses_the_billing_loop_from_the_3rd_call_and_stops_it():
    with ScriptedModel(billing_loop) as model:
        guard = DoomLoopGuard()
        guarded = run(model, guard)
    assert guarded["ended"] == "stopped"
    assert guarded["executed"] == 2, "the 3rd identical charge onwards were refused"
    assert guard.session.halt()["action"] == "stop"
    # The model read each refusal in place of the result.
    refusals = [
        m["content"]
        for m in model.requests[-1]["messages"]
        if m.get("role") == "tool" and "card declined" not in str(m.get("content"))
    ]
    assert refusals and all("oom loop" in str(r) for r in refusals)
    print(f"openai-agents: tool runs {MAX_TURNS} without, {guarded['executed']} with the guard; "
          f"model requests {guarded['model_requests']}")


def paging(body: dict, n: int) -> dict:
    if n >= 8:
        return {"content": "All pages read."}
    return {
        "content": None,
        "tool_calls": [
            {"id": f"call_{n}", "type": "function",
             "function": {"name": "charge_card", "arguments": json.dumps({"customer": f"cus_{n}", "amount": 100})}}
        ],
    }


def test_a_run_whose_calls_differ_completes_under_the_default():
    with ScriptedModel(paging) as model:
        guarded = run(model, DoomLoopGuard())
    assert guarded["ended"] == "final"
    assert guarded["executed"] == 8
