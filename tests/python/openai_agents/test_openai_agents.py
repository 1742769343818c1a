"""The OpenAI Agents SDK (openai-agents, pinned) with the doom-loop guard,
the model scripted on 127.0.0.1 over chat completions: the billing loop is
refused from the 3rd call (the model reads the verdict instead of the
result) and the run ends at the stop; without the guard it runs to
max_turns. Paging and edit-then-test complete under the default option as
they do without the guard; a state persisted mid-streak resumes in a new
``Runner.run``; a parallel fan-out of identical calls counts once."""

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
from scripted_model import ScriptedModel, billing_loop, call, edit_then_test as edit_then_test_reply  # noqa: E402

from doom_loop.openai_agents import DoomLoopGuard  # noqa: E402

MAX_TURNS = 20


def run(model: ScriptedModel, guard=None, tools=None, input="Charge cus_1 42.00") -> dict:
    """One ``Runner.run`` of an agent with ``tools`` (default: the billing
    tool, whose card always declines) against the scripted model."""
    executed: list = []

    def charge_card(customer: str, amount: int) -> str:
        """Charge a customer's card."""
        executed.append(amount)
        return "error: card declined"

    guardrails = [guard.guardrail] if guard else None
    functions = tools if tools is not None else [charge_card]
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{model.port}/v1", api_key="sk-scripted")
    agent = Agent(
        name="billing",
        instructions="Charge the customer.",
        tools=[function_tool(f, tool_input_guardrails=guardrails) for f in functions],
        model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
    )
    ended, result = "final", None
    try:
        result = asyncio.run(Runner.run(agent, input, max_turns=MAX_TURNS, hooks=guard.hooks if guard else None))
    except MaxTurnsExceeded:
        ended = "max_turns"
    except ToolInputGuardrailTripwireTriggered:
        ended = "stopped"
    return {"ended": ended, "executed": len(executed), "model_requests": len(model.requests), "result": result}


@pytest.fixture(autouse=True)
def no_tracing(monkeypatch):
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")


def test_without_the_guard_the_billing_loop_runs_to_max_turns():
    with ScriptedModel(billing_loop) as model:
        bare = run(model)
    assert bare["ended"] == "max_turns"
    assert bare["executed"] == MAX_TURNS
    print(f"openai-agents without the guard: model requests {bare['model_requests']}, "
          f"tokens {sum(usage['total_tokens'] for usage in model.usage)}")


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
          f"model requests {guarded['model_requests']}, tokens {sum(u['total_tokens'] for u in model.usage)}")


def paging():
    """scroll_down({}) ten times, each page new, then the answer."""
    pages: list = []

    def scroll_down() -> str:
        """Show the next page of the open file."""
        pages.append(len(pages) + 1)
        page = len(pages)
        return json.dumps({"lines": f"{page * 100 - 99}-{page * 100} of billing.py", "text": f"def part_{page}(): ..."})

    def reply(body: dict, n: int) -> dict:
        if n >= 10:
            return {"content": "Found the bug in part 10."}
        return {"content": None, "tool_calls": [call(n, "scroll_down", {})]}

    return pages, [scroll_down], reply


def edit_then_test(failing=(5, 4, 3, 2, 1, 0), show_edit=False):
    """Edits, each different, each followed by the identical run_tests({}),
    the failures following ``failing`` until the suite passes. With
    ``show_edit`` the editor answers with the edited region, as real editors
    do (new after every edit); without, the same "ok" every time."""

    def scenario():
        return _edit_then_test(list(failing), show_edit)

    scenario.__name__ = "edit-then-test" + (" (a failure printed twice)" if show_edit else "")
    return scenario


def _edit_then_test(failing, show_edit):
    runs: list = []

    def edit(path: str, patch: str) -> str:
        """Apply a patch to a file."""
        runs.append(patch)
        return json.dumps({"ok": True, "edited": f"{path}: {patch}"}) if show_edit else "ok"

    def run_tests() -> str:
        """Run the test suite."""
        n = failing[sum(1 for r in runs if r == "run_tests")]
        runs.append("run_tests")
        return json.dumps({"passing": 10 - n, "failing": n}, separators=(",", ":"))

    return runs, [edit, run_tests], edit_then_test_reply


# The same failure printed twice in a row, a new edit between, is progress
# once the editor is declared a write (``loop_effects``, as for the JS
# package); the recommended option alone refuses the 3rd identical run.
@pytest.mark.parametrize(
    "scenario, executions, loop_effects",
    [(paging, 10, None), (edit_then_test(), 6 + 6, None), (edit_then_test((3, 3, 2, 1, 0), True), 5 + 5, {"edit": "write"})],
    ids=["paging", "edit-then-test", "edit-then-test-a-failure-printed-twice"],
)
def test_progress_completes_under_the_default_option_as_without_the_guard(scenario, executions, loop_effects):
    plain_runs, tools, reply = scenario()
    with ScriptedModel(reply) as plain:
        bare = run(plain, tools=tools)
    runs, tools, reply = scenario()
    verdicts: list = []
    with ScriptedModel(reply) as model:
        guarded = run(model, DoomLoopGuard(on_detected=verdicts.append, loop_effects=loop_effects), tools=tools)
    assert guarded["ended"] == bare["ended"] == "final"
    assert [v for v in verdicts if v["action"] in ("refuse", "stop")] == []
    assert runs == plain_runs and len(runs) == executions
    assert model.requests == plain.requests, "the model read the same conversation"
    print(f"openai-agents {scenario.__name__}: {len(runs)} tool runs, {len(model.requests)} model requests, "
          f"{len(verdicts)} verdicts, with the guard as without")


def test_the_state_persisted_mid_streak_resumes_in_a_new_run():
    def reply(body: dict, n: int) -> dict:
        # Two declined charges, then the first run ends in text; the next
        # run's model charges again every time.
        return {"content": "The card was declined twice."} if n == 2 else billing_loop(body, n)

    with ScriptedModel(reply) as model:
        guard = DoomLoopGuard()
        first = run(model, guard)
        assert (first["ended"], first["executed"]) == ("final", 2)
        saved = json.dumps(guard.get_state())  # persisted as JSON, in another process
        assert json.loads(saved)["tools"]["charge_card"]["streak"] == 2

        verdicts: list = []
        resumed = DoomLoopGuard(state=json.loads(saved), on_detected=verdicts.append)
        history = first["result"].to_input_list() + [{"role": "user", "content": "Try again."}]
        second = run(model, resumed, input=history)
    # The streak went on from 2: the new run's first charge was the 3rd, refused.
    assert second["executed"] == 0
    assert second["ended"] == "stopped"
    assert [v["streak"] for v in verdicts] == list(range(3, 13))
    assert verdicts[-1]["action"] == "stop"
    assert len(model.requests) == 3 + 10


def test_a_new_run_after_a_stop_is_a_new_user_turn_that_lifts_the_stop():
    with ScriptedModel(billing_loop) as model:
        guard = DoomLoopGuard()
        assert run(model, guard)["ended"] == "stopped"
    assert guard.session.halt() is not None

    def lookup(body: dict, n: int) -> dict:
        # The user asks something else: one new call, then an answer.
        if n == 0:
            return {"content": None, "tool_calls": [call(0, "charge_card", {"customer": "cus_2", "amount": 100})]}
        return {"content": "Charged cus_2."}

    with ScriptedModel(lookup) as model:
        second = run(model, guard, input="Charge cus_2 1.00 instead.")
    # Without the lift, the halt would have refused this new call and ended the run.
    assert (second["ended"], second["executed"]) == ("final", 1)


def test_a_parallel_fan_out_of_identical_calls_counts_once():
    def reply(body: dict, n: int) -> dict:
        return {"content": None,
                "tool_calls": [call(3 * n + k, "charge_card", {"customer": "cus_1", "amount": 4200}) for k in range(3)]}

    verdicts: list = []
    with ScriptedModel(reply) as model:
        guarded = run(model, DoomLoopGuard(on_detected=verdicts.append))
    assert guarded["ended"] == "stopped"
    assert guarded["executed"] == 6, "two rounds of three identical calls ran; the 3rd round was refused"
    assert guarded["model_requests"] == 12
    assert [v["streak"] for v in verdicts] == list(range(2, 13))
    # Every member of a refused round read the round's one verdict.
    for body in model.requests[3:]:
        texts = [m["content"] for m in body["messages"] if m.get("role") == "tool"][-3:]
        assert len(set(texts)) == 1 and "oom loop" in texts[0]
