"""OpenRouter's agent SDK for Python (openrouter-agent-sdk, pinned) with
doom_loop.openrouter.with_doom_loop, the model scripted on 127.0.0.1 over
the Responses API the SDK speaks (streamed): the billing loop stopped at the
reference's turn (the JS adapter's counts), paging and edit-then-test
completing under the default option, the state persisted mid-streak and
resumed through the SDK's state accessor, a parallel fan-out counted once."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("openrouter_agent")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openrouter_agent import OpenRouter, serialize_conversation_state, step_count_is, tool  # noqa: E402
from scripted_model import ScriptedModel  # noqa: E402

from doom_loop.openrouter import (  # noqa: E402
    DoomLoopConversationState,
    deserialize_conversation_state,
    with_doom_loop,
)

INVOICE = "INV-2291"
TIMEOUT = f"Billing service timed out after 30000ms while fetching invoice {INVOICE}"
GIVE_UP = f"I could not retrieve invoice {INVOICE}: the billing service keeps timing out."


def function_call(n: int, name: str, arguments: dict, k: int = 0) -> dict:
    return {"id": f"call_{n}_{k}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def calls(*tool_calls: dict) -> dict:
    return {"content": None, "tool_calls": list(tool_calls)}


def billing_agent(fan_out: int = 1):
    """get_invoice always times out; the model asks for the same invoice every
    turn (``fan_out`` identical calls a response), answering in text only
    when the request forbids tools."""
    executions = []

    def get_invoice(args, ctx=None):
        executions.append(args["invoice_id"])
        raise TimeoutError(TIMEOUT)

    get_invoice_tool = tool(
        name="get_invoice",
        description="Fetch an invoice from the billing service by id.",
        input_schema={"type": "object", "properties": {"invoice_id": {"type": "string"}}, "required": ["invoice_id"]},
        execute=get_invoice,
    )

    def model(body: dict, n: int) -> dict:
        if body.get("tool_choice") == "none":
            return {"content": GIVE_UP}
        return calls(*(function_call(n, "get_invoice", {"invoice_id": INVOICE}, k) for k in range(fan_out)))

    return executions, [get_invoice_tool], model


def paging_agent():
    """scroll_down({}) ten times, each page new, then the answer."""
    executions = []

    def scroll_down(args, ctx=None):
        executions.append("scroll_down")
        page = len(executions)
        return {"lines": f"{page * 100 - 99}-{page * 100} of billing.py", "text": f"def part_{page}(): ..."}

    scroll = tool(name="scroll_down", input_schema={"type": "object", "properties": {}}, execute=scroll_down)

    def model(body: dict, n: int) -> dict:
        if body.get("tool_choice") == "none" or n >= 10:
            return {"content": "Found the bug in part 10."}
        return calls(function_call(n, "scroll_down", {}))

    return executions, [scroll], model


def edit_then_test_agent():
    """edit_file then the identical run_tests({}), the failures going down."""
    executions, failing = [], [5, 4, 3, 2, 1, 0]

    def edit_file(args, ctx=None):
        executions.append(args["patch"])
        return {"ok": True}

    def run_tests(args, ctx=None):
        executions.append("run_tests")
        n = failing[executions.count("run_tests") - 1]
        return {"passing": 10 - n, "failing": n}

    schema = {"type": "object", "properties": {"path": {"type": "string"}, "patch": {"type": "string"}}}
    tools = [
        tool(name="edit_file", input_schema=schema, execute=edit_file),
        tool(name="run_tests", input_schema={"type": "object", "properties": {}}, execute=run_tests),
    ]

    def model(body: dict, n: int) -> dict:
        if body.get("tool_choice") == "none" or '\\"failing\\":0' in json.dumps(body.get("input")):
            return {"content": "All tests pass."}
        if n % 2 == 0:
            return calls(function_call(n, "edit_file", {"path": "src/billing.ts", "patch": f"fix {n // 2 + 1}"}))
        return calls(function_call(n, "run_tests", {}))

    return executions, tools, model


class MemoryState:
    """A state accessor storing the serialized state, as a database would."""

    def __init__(self) -> None:
        self.stored = None

    def load(self):
        return None if self.stored is None else deserialize_conversation_state(self.stored)

    def save(self, state) -> None:
        self.stored = serialize_conversation_state(state)

    def get(self) -> dict:
        return json.loads(self.stored)


def run(model: ScriptedModel, tools, input="Customer asks: why was I charged twice?", guard=None, **extra):
    """One call_model run; ``guard``: with_doom_loop's keyword arguments."""
    client = OpenRouter(api_key="sk-scripted", server_url=f"http://127.0.0.1:{model.port}/api/v1")
    request = {"model": "openai/gpt-4o-mini", "input": input, "tools": tools,
               "instructions": "You are a billing support agent.", "stop_when": step_count_is(40), **extra}
    if guard is not None:
        request = with_doom_loop(request, **guard)

    async def main():
        result = client.call_model(request)
        try:
            return await result.get_text()
        except RuntimeError as error:  # 0.8.0's own 20-turn safety limit
            return f"error: {error}"

    return request, asyncio.run(main())


def outputs(body: dict) -> list:
    return [json.loads(item["output"]).get("error") for item in body["input"] if item.get("type") == "function_call_output"]


def actions(request) -> list:
    return [f"{v['action']}@{v['streak']}" for v in request.doom_loop_verdicts()]


def test_without_detection_the_billing_loop_burns_every_turn_to_the_sdk_safety_limit():
    executions, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        _, text = run(model, tools)
    assert text == "error: call_model exceeded the 20-turn safety limit"
    assert len(model.requests) == 20 and len(executions) == 20
    print(f"openrouter-agent-sdk billing loop without detection: {len(model.requests)} model calls, "
          f"{sum(u['total_tokens'] for u in model.usage)} tokens, {len(executions)} tool runs")


# The reference's ladder stops the 6th identical round; the recommended
# option's (which waits longer before a stop) the 12th.
@pytest.mark.parametrize("option, stop", [(True, 6), (None, 12)], ids=["reference", "recommended"])
def test_the_billing_loop_is_stopped_at_the_reference_turn(option, stop):
    executions, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        request, text = run(model, tools, guard={"doom_loop": option})
    requests = model.requests
    # #0 initial, #1..#stop-1 after each round, then the SDK's forced final answer.
    assert len(requests) == stop + 1 and len(executions) == 2
    assert actions(request) == ["observe@2", *(f"block@{n}" for n in range(3, stop)), f"stop@{stop}"]
    assert request.doom_loop_end_reason() == "doom_loop"
    assert request.doom_loop_verdict()["streak"] == stop
    assert text == GIVE_UP
    # Rounds 1-2: the real timeout; then the verdict's text in its place.
    assert outputs(requests[1])[-1] == TIMEOUT and outputs(requests[2])[-1] == TIMEOUT
    verdicts = request.doom_loop_verdicts()
    for k in range(3, stop):
        assert outputs(requests[k])[-1] == verdicts[k - 2]["message"]
    assert outputs(requests[3])[-1].startswith('Doom loop suspected: tool "get_invoice" was invoked in 3 consecutive rounds')
    assert [b.get("tool_choice") for b in requests] == [None] * stop + ["none"]
    # Nothing of the guard reaches the wire: the instructions are the caller's.
    assert all(b["instructions"] == "You are a billing support agent." for b in requests)
    print(f"openrouter-agent-sdk billing loop with detection ({'reference' if option else 'recommended'}): "
          f"{len(requests)} model calls, {sum(u['total_tokens'] for u in model.usage)} tokens, {len(executions)} tool runs")


@pytest.mark.parametrize("agent, runs", [(paging_agent, 10), (edit_then_test_agent, 6 + 6)], ids=["paging", "edit-then-test"])
def test_progress_completes_under_the_default_option_as_without_detection(agent, runs):
    plain_executions, tools, script = agent()
    with ScriptedModel(script) as plain:
        run(plain, tools)
    executions, tools, script = agent()
    with ScriptedModel(script) as model:
        request, _ = run(model, tools, guard={})
    assert [v for v in actions(request) if v.startswith(("block", "stop"))] == []
    assert request.doom_loop_end_reason() == "complete"
    assert executions == plain_executions and len(executions) == runs
    assert model.requests == plain.requests


def test_the_state_persisted_mid_streak_resumes_in_the_next_run():
    store = MemoryState()
    first, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        # Two rounds run, then the caller's own stop condition ends the run.
        request, _ = run(model, tools, guard={"doom_loop": True}, state=store, stop_when=step_count_is(2))
    assert len(first) == 2 and request.doom_loop_end_reason() == "max_turns"
    saved = store.get()
    assert saved["doom_loop"]["tools"]["get_invoice"]["streak"] == 2
    assert isinstance(store.load(), DoomLoopConversationState)

    second, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        request, text = run(model, tools, input="Please try the invoice again.", guard={"doom_loop": True}, state=store)
    # The streak goes on from 2: the run's first call is the 3rd, refused.
    assert second == []
    assert actions(request) == ["block@3", "block@4", "block@5", "stop@6"]
    assert request.doom_loop_end_reason() == "doom_loop" and text == GIVE_UP
    assert store.get()["doom_loop"]["stopVerdict"] == request.doom_loop_verdict()


def test_a_stop_without_the_final_answer_persists_no_call_without_an_output():
    store = MemoryState()
    executions, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        request, _ = run(model, tools, guard={"doom_loop": True}, state=store, allow_final_response=False)
    assert len(model.requests) == 6 and len(executions) == 2
    assert request.doom_loop_end_reason() == "doom_loop"
    saved = store.get()
    last = saved["messages"][-1]
    assert saved["status"] == "complete" and last["type"] == "function_call_output" and last["callId"] == "call_5_0"
    assert json.loads(last["output"])["error"].startswith("Not executed: this run was stopped by doom-loop detection.")
    assert saved["doom_loop"]["tools"]["get_invoice"]["streak"] == 6


def test_a_parallel_fan_out_of_identical_calls_counts_once():
    executions, tools, script = billing_agent(fan_out=3)
    with ScriptedModel(script) as model:
        request, _ = run(model, tools, guard={"doom_loop": True})
    assert len(model.requests) == 7 and len(executions) == 6
    assert actions(request) == ["observe@2", "block@3", "block@4", "block@5", "stop@6"]
    # Every member of a refused round reads the round's one verdict.
    for body in model.requests[3:]:
        texts = outputs(body)[-3:]
        assert len(set(texts)) == 1 and texts[0].startswith("Doom loop suspected")
    assert request.doom_loop_state()["tools"]["get_invoice"]["streak"] == 6


def test_the_callers_hooks_and_turn_callbacks_keep_working():
    from openrouter_agent import HookEntry, HooksManager

    seen, ends = [], []
    hooks = HooksManager()
    hooks.on("PreToolUse", HookEntry(handler=lambda payload, ctx: seen.append(payload["tool_name"])))
    executions, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        request, _ = run(model, tools, guard={"doom_loop": True}, hooks=hooks,
                         on_turn_end=lambda ctx, response: ends.append(ctx["number_of_turns"]))
    # The caller's PreToolUse never sees a refused call; their manager is unchanged.
    assert seen == ["get_invoice", "get_invoice"]
    assert ends == list(range(7))
    assert not hooks.has_handlers("PostToolUse")


def test_steer_guidance_reaches_the_next_request_in_its_instructions():
    executions, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        request, _ = run(model, tools, guard={"doom_loop": {"ladder": {"steer": 2, "block": 3, "stop": 6}}})
    base = "You are a billing support agent."
    steer = next(v for v in request.doom_loop_verdicts() if v["action"] == "steer")
    assert steer["streak"] == 2
    # Round 2 (the steered one) ran its call; the request after it carries the guidance.
    assert [b["instructions"] for b in model.requests[:2]] == [base, base]
    assert model.requests[2]["instructions"] == f"{base}\n\n{steer['message']}"
    assert len(executions) == 2 and request.doom_loop_end_reason() == "doom_loop"


def test_repeated_malformed_arguments_are_identified_by_their_text_and_stopped():
    executions, tools, _ = billing_agent()

    def broken(body: dict, n: int) -> dict:
        if body.get("tool_choice") == "none":
            return {"content": GIVE_UP}
        call = function_call(n, "get_invoice", {})
        call["function"]["arguments"] = '{"invoice_id": "INV-2291"'  # cut off
        return calls(call)

    with ScriptedModel(broken) as model:
        request, text = run(model, tools, guard={"doom_loop": True})
    # 0.8.0 answers each with its parse error (no hook sees them); the stop ends the run.
    assert executions == [] and text == GIVE_UP
    assert request.doom_loop_end_reason() == "doom_loop" and len(model.requests) == 7
    assert request.doom_loop_verdict()["streak"] == 6


def test_a_corrupt_persisted_state_starts_over_with_a_warning(caplog):
    store = MemoryState()
    executions, tools, script = billing_agent()
    with ScriptedModel(script) as model:
        run(model, tools, guard={"doom_loop": True}, state=store, stop_when=step_count_is(1))
    saved = store.get()
    saved["doom_loop"] = ["not", "a", "state"]
    store.stored = json.dumps(saved)
    executions, tools, script = billing_agent()
    with caplog.at_level("WARNING", logger="doom_loop"), ScriptedModel(script) as model:
        request, _ = run(model, tools, input="Again, please.", guard={"doom_loop": True}, state=store)
    assert any("invalid persisted doom-loop state" in r.getMessage() for r in caplog.records)
    # Fail-open: the run is scored from scratch, two calls run, then the ladder as ever.
    assert len(executions) == 2 and request.doom_loop_verdict()["streak"] == 6
