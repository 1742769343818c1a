"""Pydantic AI (pydantic-ai-slim[openai], pinned) with the doom-loop guard
as an agent capability, the model scripted on 127.0.0.1 behind Pydantic
AI's own OpenAI chat model and provider (``base_url``): the billing loop is
refused from the 3rd call (the model reads the verdict as the tool's
output) and the run ends at the stop with the verdict as its output, the
model not called again; without the guard it runs to the request limit.
Runs whose calls differ (paging, edit-then-test) complete; a state saved
between runs resumes the streak in a new run; a parallel fan-out of
identical calls counts once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel  # noqa: E402
from pydantic_ai import Agent, ModelRetry, UsageLimits  # noqa: E402
from pydantic_ai.exceptions import UsageLimitExceeded  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402
from scripted_model import ScriptedModel, billing_loop, call, edit_then_test  # noqa: E402

from doom_loop.pydantic_ai import DoomLoopGuard, DoomLoopStopped  # noqa: E402

REQUEST_LIMIT = 20
CHARGE = '{"customer":"cus_1","amount":4200}'


def agent_for(model: ScriptedModel, output_type=str) -> Agent:
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{model.port}/v1", api_key="sk-scripted")
    return Agent(OpenAIChatModel("scripted", provider=provider), instructions="Charge the customer.", output_type=output_type)


def billing_agent(model: ScriptedModel, executed: list, output_type=str) -> Agent:
    agent = agent_for(model, output_type)

    @agent.tool_plain
    def charge_card(customer: str, amount: int) -> str:
        """Charge a customer's card."""
        executed.append(amount)
        return "error: card declined"

    return agent


def tokens(model: ScriptedModel) -> int:
    """The tokens the scripted model reported over every answer."""
    return sum(u["total_tokens"] for u in model.usage)


def tool_outputs(body: dict) -> list:
    return [m.get("content") for m in body["messages"] if m.get("role") == "tool"]


def test_without_the_guard_the_billing_loop_runs_to_the_request_limit():
    executed: list = []
    with ScriptedModel(billing_loop) as model:
        with pytest.raises(UsageLimitExceeded):
            billing_agent(model, executed).run_sync("Charge cus_1 42.00", usage_limits=UsageLimits(request_limit=REQUEST_LIMIT))
    assert len(executed) == REQUEST_LIMIT
    assert len(model.requests) == REQUEST_LIMIT
    print(f"pydantic-ai billing loop without the guard: model calls {len(model.requests)}, tokens {tokens(model)}")


def test_the_guard_refuses_the_billing_loop_from_the_3rd_call_and_ends_the_run_at_the_stop():
    executed: list = []
    verdicts: list = []
    guard = DoomLoopGuard(on_detected=verdicts.append)
    with ScriptedModel(billing_loop) as model:
        result = billing_agent(model, executed).run_sync(
            "Charge cus_1 42.00", capabilities=[guard], usage_limits=UsageLimits(request_limit=REQUEST_LIMIT)
        )
    assert len(executed) == 2, "the 3rd identical charge onwards were refused"
    assert len(model.requests) == 12, "the stop answered the 13th request: the model was not called"
    assert verdicts[-1]["action"] == "stop" and verdicts[-1]["streak"] == 12
    # Observed at the 2nd call, refused from the 3rd, stopped at the 12th.
    assert [v["streak"] for v in verdicts] == list(range(2, 13))
    # The run ended the framework's way: the stop's text is its output.
    assert result.output == guard.session.halt_text()
    # The model read each refusal in place of the result, as the engine wrote it.
    outputs = tool_outputs(model.requests[-1])
    assert outputs[:2] == ["error: card declined"] * 2
    assert outputs[2:] == [v["message"] for v in verdicts[1:-1]]
    # The run's own usage is the model's: the stop's answer cost nothing.
    assert result.usage.input_tokens + result.usage.output_tokens == tokens(model)
    print(f"pydantic-ai billing loop with the guard: model calls {len(model.requests)}, tokens {tokens(model)}")


def test_under_the_reference_defaults_the_billing_loop_stops_at_the_6th_call():
    executed: list = []
    guard = DoomLoopGuard(True)
    with ScriptedModel(billing_loop) as model:
        result = billing_agent(model, executed).run_sync("Charge cus_1 42.00", capabilities=[guard])
    assert (len(executed), len(model.requests)) == (2, 6)
    assert guard.session.halt()["streak"] == 6
    assert result.output.startswith("Not executed: this run was stopped by doom-loop detection.")
    print(f"pydantic-ai billing loop, reference defaults: model calls {len(model.requests)}, tokens {tokens(model)}")


class Receipt(BaseModel):
    charged: bool


def test_a_stop_ends_a_run_whose_output_is_not_text_with_doom_loop_stopped():
    executed: list = []
    guard = DoomLoopGuard(True)
    with ScriptedModel(billing_loop) as model:
        with pytest.raises(DoomLoopStopped) as stopped:
            billing_agent(model, executed, Receipt).run_sync("Charge cus_1 42.00", capabilities=[guard])
    assert (len(executed), len(model.requests)) == (2, 6)
    assert stopped.value.verdict["action"] == "stop"
    assert str(stopped.value) == guard.session.halt_text()


def test_a_paging_run_whose_every_page_is_new_completes_under_the_recommended_option():
    pages: list = []

    def reply(body: dict, n: int) -> dict:
        if n >= 10:
            return {"content": "Found the bug in part 10."}
        return {"content": None, "tool_calls": [call(n, "scroll_down", {})]}

    with ScriptedModel(reply) as model:
        agent = agent_for(model)

        @agent.tool_plain
        def scroll_down() -> dict:
            """Show the next page of the open file."""
            pages.append(len(pages) + 1)
            page = len(pages)
            return {"lines": f"{page * 100 - 99}-{page * 100} of billing.py", "text": f"def part_{page}(): ..."}

        result = agent.run_sync("Find the bug in billing.py.", capabilities=[DoomLoopGuard()])
    assert len(pages) == 10
    assert result.output == "Found the bug in part 10."


def test_an_edit_then_test_run_completes_under_the_recommended_option():
    failing = [5, 4, 3, 2, 1, 0]
    test_runs: list = []

    with ScriptedModel(edit_then_test) as model:
        agent = agent_for(model)

        @agent.tool_plain
        def edit(path: str, patch: str) -> dict:
            """Apply a patch to a file."""
            return {"ok": True}

        @agent.tool_plain
        def run_tests() -> str:
            """Run the test suite."""
            n = failing[len(test_runs)]
            test_runs.append(n)
            return json.dumps({"passing": 10 - n, "failing": n}, separators=(",", ":"))

        result = agent.run_sync("Make the test suite pass.", capabilities=[DoomLoopGuard()])
    assert len(test_runs) == 6
    assert result.output == "All tests pass."


def test_a_state_saved_after_a_run_resumes_the_streak_in_a_new_run():
    def reply(body: dict, n: int) -> dict:
        # Two declined charges, then the first run ends in text; the next
        # run's model charges again every time.
        return {"content": "The card was declined twice."} if n == 2 else billing_loop(body, n)

    first, second = [], []
    with ScriptedModel(reply) as model:
        guard = DoomLoopGuard()
        run1 = billing_agent(model, first).run_sync("Charge cus_1 42.00", capabilities=[guard])
        assert run1.output == "The card was declined twice."
        saved = json.dumps(guard.get_state())  # persisted as JSON, in another process

        verdicts: list = []
        resumed = DoomLoopGuard(state=json.loads(saved), on_detected=verdicts.append)
        run2 = billing_agent(model, second).run_sync(
            "Try again.", message_history=run1.all_messages(), capabilities=[resumed]
        )
    assert len(first) == 2
    assert len(second) == 0, "the streak went on: the first charge of the new run was its 3rd"
    assert [v["streak"] for v in verdicts] == list(range(3, 13))
    assert verdicts[-1]["action"] == "stop"
    assert run2.output == resumed.session.halt_text()
    assert len(model.requests) == 3 + 10


def test_a_new_prompt_after_a_stop_lifts_the_halt():
    executed: list = []
    with ScriptedModel(lambda body, n: {"content": "Done."} if n >= 6 else billing_loop(body, n)) as model:
        guard = DoomLoopGuard(True)
        agent = billing_agent(model, executed)
        stopped = agent.run_sync("Charge cus_1 42.00", capabilities=[guard])
        assert len(model.requests) == 6
        after = agent.run_sync("Something else.", message_history=stopped.all_messages(), capabilities=[guard])
    assert after.output == "Done."
    assert len(model.requests) == 7


def test_a_parallel_fan_out_of_identical_calls_counts_once():
    executed: list = []

    def reply(body: dict, n: int) -> dict:
        return {"content": None, "tool_calls": [call(3 * n + k, "charge_card", json.loads(CHARGE)) for k in range(3)]}

    verdicts: list = []
    with ScriptedModel(reply) as model:
        billing_agent(model, executed).run_sync("Charge cus_1 42.00", capabilities=[DoomLoopGuard(on_detected=verdicts.append)])
    assert len(executed) == 6, "two rounds of three identical calls ran; the 3rd round was refused"
    assert len(model.requests) == 12
    assert [v["streak"] for v in verdicts] == list(range(2, 13))


def test_steering_guidance_goes_into_the_next_request_only():
    ladder = {"ladder": {"observe": False, "steer": 2, "escalate": False, "block": False, "stop": 4}}
    verdicts: list = []
    with ScriptedModel(billing_loop) as model:
        billing_agent(model, []).run_sync("Charge cus_1 42.00", capabilities=[DoomLoopGuard(ladder, on_detected=verdicts.append)])
    steer = next(v for v in verdicts if v["action"] == "steer")
    assert steer["streak"] == 2

    def system_text(body: dict) -> str:
        return "\n".join(str(m.get("content")) for m in body["messages"] if m.get("role") in ("system", "developer"))

    assert steer["message"] not in system_text(model.requests[1])
    assert steer["message"] in system_text(model.requests[2])
    assert steer["message"] not in system_text(model.requests[3])


def test_a_corrupt_state_restores_fail_open_and_the_guard_still_stops_the_loop(caplog):
    executed: list = []
    guard = DoomLoopGuard(state='{"tools": [1, 2, 3], "round": ')
    with ScriptedModel(billing_loop) as model:
        result = billing_agent(model, executed).run_sync("Charge cus_1 42.00", capabilities=[guard])
    assert (len(executed), len(model.requests)) == (2, 12)
    assert result.output == guard.session.halt_text()
    assert any("invalid persisted doom-loop state" in r.getMessage() for r in caplog.records)


def test_a_failing_tool_is_handed_to_the_session_as_a_failure():
    def reply(body: dict, n: int) -> dict:
        return {"content": "Gave up."} if n >= 3 else {"content": None, "tool_calls": [call(n, "fetch", {"n": n})]}

    failures: list = []
    with ScriptedModel(reply) as model:
        agent = agent_for(model)

        @agent.tool_plain(retries=5)
        def fetch(n: int) -> str:
            """Fetch page n."""
            raise ModelRetry("the service timed out")

        guard = DoomLoopGuard()
        handed = guard.session.on_result

        def on_result(id, outcome=None, failed=False):
            failures.append(failed)
            return handed(id, outcome, failed)

        guard.session.on_result = on_result
        result = agent.run_sync("Fetch.", capabilities=[guard])
    assert result.output == "Gave up."
    assert failures == [True, True, True]


def test_an_escalation_runs_the_next_request_on_the_named_model_once():
    option = {
        "ladder": {"observe": False, "steer": False, "escalate": 2, "block": False, "stop": 4},
        "escalation": {"model": "big-model", "maxEscalations": 1},
    }
    with ScriptedModel(billing_loop) as model:
        provider = OpenAIProvider(base_url=f"http://127.0.0.1:{model.port}/v1", api_key="sk-scripted")
        guard = DoomLoopGuard(option, models={"big-model": OpenAIChatModel("big-model", provider=provider)})
        billing_agent(model, []).run_sync("Charge cus_1 42.00", capabilities=[guard])
    assert [body["model"] for body in model.requests] == ["scripted", "scripted", "big-model", "scripted"]


def test_without_models_the_escalate_rung_is_skipped_with_a_warning(caplog):
    option = {"ladder": {"observe": False, "steer": False, "escalate": 2, "block": False, "stop": 4}, "escalation": {"model": "big-model"}}
    with ScriptedModel(billing_loop) as model:
        billing_agent(model, []).run_sync("Charge cus_1 42.00", capabilities=[DoomLoopGuard(option)])
    assert all(body["model"] == "scripted" for body in model.requests)
    assert any("escalat" in r.getMessage().lower() for r in caplog.records)


def test_an_escalation_model_that_cannot_be_built_leaves_the_request_on_the_agents_model(caplog):
    option = {"ladder": {"observe": False, "steer": False, "escalate": 2, "block": False, "stop": 4}, "escalation": {"model": "big-model"}}
    with ScriptedModel(billing_loop) as model:
        guard = DoomLoopGuard(option, models={"big-model": "no-such-provider:big-model"})
        billing_agent(model, []).run_sync("Charge cus_1 42.00", capabilities=[guard])
    assert [body["model"] for body in model.requests] == ["scripted"] * 4
    assert any("escalation model could not be used" in r.getMessage() for r in caplog.records)
