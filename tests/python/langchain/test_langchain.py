"""LangChain v1's create_agent (langchain, langgraph, langchain-openai
pinned) with the doom-loop middleware, the model scripted on 127.0.0.1 over
chat completions (ChatOpenAI): the billing loop is refused from the 3rd
call (the model reads the verdict instead of the result) and stopped; without
the middleware it runs to LangChain's model-call limit. Paging and
edit-then-test complete under the default option, a thread persisted
mid-streak by a LangGraph checkpointer goes on with its streak in a new
invoke, and a parallel fan-out of identical calls counts once."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain.agents")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import ModelCallLimitMiddleware  # noqa: E402
from langchain.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from scripted_model import ScriptedModel, billing_loop  # noqa: E402

from doom_loop.langchain import DoomLoopMiddleware  # noqa: E402

MODEL_CALL_LIMIT = 20
DECLINED = "error: card declined"


def chat_model(model: ScriptedModel) -> ChatOpenAI:
    return ChatOpenAI(model="scripted", base_url=f"http://127.0.0.1:{model.port}/v1", api_key="sk-scripted", max_retries=0)


def billing_tools(executed: list) -> list:
    @tool
    def charge_card(customer: str, amount: int) -> str:
        """Charge a customer's card."""
        executed.append(amount)
        return DECLINED

    return [charge_card]


def call(n: int, name: str, arguments: dict, k: int = 0) -> dict:
    return {"id": f"call_{n}_{k}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def tool_texts(body: dict) -> list:
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


def run(model: ScriptedModel, middleware=(), tools=None, prompt="Charge cus_1 42.00", **invoke) -> dict:
    executed: list = []
    agent = create_agent(
        chat_model(model),
        tools=tools if tools is not None else billing_tools(executed),
        middleware=[ModelCallLimitMiddleware(run_limit=MODEL_CALL_LIMIT, exit_behavior="end"), *middleware],
        checkpointer=invoke.pop("checkpointer", None),
    )
    result = agent.invoke({"messages": [{"role": "user", "content": prompt}], **invoke.pop("input", {})}, **invoke)
    return {"result": result, "executed": executed, "requests": len(model.requests)}


def tokens(model: ScriptedModel) -> int:
    return sum(u["total_tokens"] for u in model.usage)


def recorder():
    verdicts: list = []
    return verdicts, verdicts.append


def test_without_the_middleware_the_billing_loop_runs_to_the_model_call_limit():
    with ScriptedModel(billing_loop) as model:
        bare = run(model)
    assert bare["requests"] == MODEL_CALL_LIMIT
    assert len(bare["executed"]) == MODEL_CALL_LIMIT
    print(f"langchain without the middleware: {bare['requests']} model calls, {tokens(model)} tokens")


@pytest.mark.parametrize("option, stop", [(None, 12), (True, 6)], ids=["recommended", "reference-defaults"])
def test_the_middleware_refuses_the_billing_loop_from_the_3rd_call_and_stops_it(option, stop):
    verdicts, on_detected = recorder()
    with ScriptedModel(billing_loop) as model:
        guarded = run(model, [DoomLoopMiddleware(option, on_detected=on_detected)])
    assert guarded["requests"] == stop, "the run ended at the stop, not at the model-call limit"
    assert len(guarded["executed"]) == 2, "the 3rd identical charge onwards were refused"
    assert verdicts[-1]["action"] == "stop" and verdicts[-1]["streak"] == stop
    # The model read the verdict of its streak in place of each refused call's result.
    refusals = tool_texts(model.requests[-1])[2:]
    assert refusals == [next(v["message"] for v in verdicts if v["streak"] == k) for k in range(3, stop)]
    assert tool_texts(model.requests[-1])[:2] == [DECLINED, DECLINED]
    # The thread ends well formed: the pending call answered, then the verdict as the last word.
    messages = guarded["result"]["messages"]
    assert messages[-2].type == "tool" and messages[-2].status == "error"
    assert messages[-1].type == "ai" and messages[-1].content == verdicts[-1]["message"]
    assert isinstance(guarded["result"]["doom_loop"], dict)
    print(f"langchain with the middleware ({'recommended' if option is None else 'reference defaults'}): "
          f"{guarded['requests']} model calls, {tokens(model)} tokens, tool ran {len(guarded['executed'])} times")


def test_a_parallel_fan_out_of_identical_calls_counts_once_and_runs_async():
    def fan_out(body: dict, n: int) -> dict:
        args = {"customer": "cus_1", "amount": 4200}
        return {"content": None, "tool_calls": [call(n, "charge_card", args, k) for k in range(3)]}

    verdicts, on_detected = recorder()
    executed: list = []
    with ScriptedModel(fan_out) as model:
        agent = create_agent(chat_model(model), tools=billing_tools(executed),
                             middleware=[DoomLoopMiddleware(True, on_detected=on_detected)])
        asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "Charge cus_1 42.00"}]}))
    # Responses 1 and 2 run all three calls; the response (not the call) is what the streak counts.
    assert len(executed) == 6
    assert len(model.requests) == 6
    assert [v["streak"] for v in verdicts] == [2, 3, 4, 5, 6]
    assert verdicts[-1]["action"] == "stop"
    assert tool_texts(model.requests[3])[-3:] == [verdicts[1]["message"]] * 3


def paging(body: dict, n: int) -> dict:
    if n >= 10:
        return {"content": "Found the bug in part 10."}
    return {"content": None, "tool_calls": [call(n, "scroll_down", {})]}


def test_a_paging_agent_completes_under_the_default():
    pages: list = []

    @tool
    def scroll_down() -> str:
        """Show the next page of the open file."""
        pages.append(len(pages) + 1)
        page = len(pages)
        return json.dumps({"lines": f"{page * 100 - 99}-{page * 100} of billing.py", "text": f"def part_{page}(): ..."})

    verdicts, on_detected = recorder()
    with ScriptedModel(paging) as model:
        done = run(model, [DoomLoopMiddleware(on_detected=on_detected)], tools=[scroll_down], prompt="Find the bug in billing.py.")
    assert len(pages) == 10
    assert done["requests"] == 11
    assert done["result"]["messages"][-1].content == "Found the bug in part 10."
    assert not any(v["action"] in ("block", "stop") for v in verdicts)


def edit_then_test(body: dict, n: int) -> dict:
    runs = sum(1 for text in tool_texts(body) if "failing" in text)
    if runs and "0 failing" in tool_texts(body)[-1]:
        return {"content": "All tests pass."}
    if n % 2 == 0:
        return {"content": None, "tool_calls": [call(n, "edit", {"path": "billing.py", "patch": f"fix {n // 2 + 1}"})]}
    return {"content": None, "tool_calls": [call(n, "run_tests", {})]}


def test_an_edit_then_test_agent_completes_under_the_default():
    failing = [5, 4, 3, 2, 1, 0]
    ran: list = []

    @tool
    def edit(path: str, patch: str) -> str:
        """Apply a patch to a file."""
        return json.dumps({"ok": True})

    @tool
    def run_tests() -> str:
        """Run the test suite."""
        ran.append(1)
        return f"{failing[len(ran) - 1]} failing"

    verdicts, on_detected = recorder()
    with ScriptedModel(edit_then_test) as model:
        done = run(model, [DoomLoopMiddleware(on_detected=on_detected)], tools=[edit, run_tests], prompt="Fix the tests.")
    assert len(ran) == 6
    assert done["result"]["messages"][-1].content == "All tests pass."
    assert not any(v["action"] in ("block", "stop") for v in verdicts)


def test_a_thread_persisted_mid_streak_by_the_checkpointer_goes_on_with_its_streak():
    # Requests 0-1: the identical charge; 2: the model gives up for now; then it tries again.
    def script(body: dict, n: int) -> dict:
        return {"content": "The card keeps declining; I will retry."} if n == 2 else billing_loop(body, n)

    checkpointer = InMemorySaver()
    thread = {"configurable": {"thread_id": "customer-7"}}
    with ScriptedModel(script) as model:
        first = run(model, [DoomLoopMiddleware(True)], checkpointer=checkpointer, config=thread)
        assert len(first["executed"]) == 2 and first["requests"] == 3
        saved = checkpointer.get_tuple(thread).checkpoint["channel_values"]["doom_loop"]
        assert saved["tools"]["charge_card"]["streak"] == 2

        # A new agent and a new middleware: the streak is the thread's, not the instance's.
        verdicts, on_detected = recorder()
        second = run(model, [DoomLoopMiddleware(True, on_detected=on_detected)], checkpointer=checkpointer,
                     config=thread, prompt="Please try again.")
    assert second["executed"] == [], "the streak went on at 3: refused at once"
    assert second["requests"] == 3 + 4
    assert [v["streak"] for v in verdicts] == [3, 4, 5, 6]
    assert verdicts[-1]["action"] == "stop"


def test_steer_guidance_goes_into_the_next_system_message_only():
    verdicts, on_detected = recorder()
    option = {"ladder": {"observe": False, "steer": 2, "block": False, "stop": 5}}
    with ScriptedModel(billing_loop) as model:
        run(model, [DoomLoopMiddleware(option, on_detected=on_detected)])
    assert [f"{v['action']}@{v['streak']}" for v in verdicts] == ["steer@2", "steer@3", "steer@4", "stop@5"]
    systems = [next((m["content"] for m in body["messages"] if m["role"] == "system"), None) for body in model.requests]
    assert systems[:2] == [None, None]
    assert systems[2] == verdicts[0]["message"] and systems[3] == verdicts[1]["message"]


def test_a_corrupt_state_restores_fail_open_and_off_does_nothing():
    with ScriptedModel(billing_loop) as model:
        fresh = run(model, [DoomLoopMiddleware(True)], input={"doom_loop": {"version": "nonsense", "tools": 42}})
    assert len(fresh["executed"]) == 2 and fresh["requests"] == 6
    with ScriptedModel(billing_loop) as model:
        off = run(model, [DoomLoopMiddleware(False)])
    assert off["requests"] == MODEL_CALL_LIMIT


def test_an_escalation_runs_one_request_on_the_named_model():
    verdicts, on_detected = recorder()
    option = {
        "ladder": {"observe": False, "steer": 2, "escalate": 3, "block": False, "stop": 5},
        "escalation": {"model": "frontier/model", "maxEscalations": 1},
    }
    with ScriptedModel(billing_loop) as model:
        frontier = ChatOpenAI(model="frontier", base_url=f"http://127.0.0.1:{model.port}/v1", api_key="sk-scripted", max_retries=0)
        run(model, [DoomLoopMiddleware(option, models={"frontier/model": frontier}, on_detected=on_detected)])
    assert [f"{v['action']}@{v['streak']}" for v in verdicts] == ["steer@2", "escalate@3", "steer@4", "stop@5"]
    assert [body["model"] for body in model.requests] == ["scripted", "scripted", "scripted", "frontier", "scripted"]


def test_an_internal_error_leaves_the_run_unchanged_with_one_warning(monkeypatch, caplog):
    import doom_loop.langchain as adapter

    def broken(self, *args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(adapter.DoomLoopSession, "on_response", broken)
    with ScriptedModel(billing_loop) as model:
        bare = run(model, [DoomLoopMiddleware(True)])
    assert bare["requests"] == MODEL_CALL_LIMIT and len(bare["executed"]) == MODEL_CALL_LIMIT
    ours = [r.getMessage() for r in caplog.records if r.name == "doom_loop"]
    assert len(ours) == 1 and "injected" in ours[0]


def test_one_middleware_serves_concurrent_threads_whose_calls_share_ids():
    # Every response numbers its call call_0, as providers that number calls per response do.
    def script(body: dict, n: int) -> dict:
        if "Charge" in body["messages"][0]["content"]:
            return {"content": None, "tool_calls": [{**call(n, "charge_card", {"customer": "cus_1", "amount": 4200}), "id": "call_0"}]}
        read = len(tool_texts(body))
        if read >= 8:
            return {"content": "Read all 8 pages."}
        return {"content": None, "tool_calls": [{**call(n, "read_page", {"page": read + 1}), "id": "call_0"}]}

    pages: list = []

    @tool
    def read_page(page: int) -> str:
        """Read one page of the log."""
        pages.append(page)
        return f"page {page}: lines {page * 50}-{page * 50 + 49}"

    verdicts, on_detected = recorder()
    executed: list = []
    with ScriptedModel(script) as model:
        agent = create_agent(chat_model(model), tools=[*billing_tools(executed), read_page],
                             middleware=[DoomLoopMiddleware(True, on_detected=on_detected)])

        async def both():
            ask = lambda text: agent.ainvoke({"messages": [{"role": "user", "content": text}]})  # noqa: E731
            return await asyncio.gather(ask("Charge cus_1 42.00"), ask("Read the log, page by page."))

        billing, paging = asyncio.run(both())
    threads = ["Charge" in body["messages"][0]["content"] for body in model.requests]
    assert threads[:2] in ([True, False], [False, True]), "the two runs interleaved"
    # The looping thread: calls 1-2 run, 3-5 refused, the 6th stops it, as when it runs alone.
    assert len(executed) == 2
    assert [f"{v['toolName']}@{v['streak']}" for v in verdicts] == [f"charge_card@{k}" for k in range(2, 7)]
    assert billing["messages"][-1].content == verdicts[-1]["message"]
    # The paging thread: every page read, none refused.
    assert pages == list(range(1, 9))
    assert paging["messages"][-1].content == "Read all 8 pages."
    assert not any(m.type == "tool" and m.status == "error" for m in paging["messages"])


def test_a_rung_the_agent_cannot_carry_out_warns_once_not_at_every_hook(caplog):
    option = {"ladder": {"observe": False, "steer": 2, "escalate": 3, "block": False, "stop": 5},
              "escalation": {"model": "frontier/model", "maxEscalations": 1}}
    with ScriptedModel(billing_loop) as model:
        run(model, [DoomLoopMiddleware(option)])  # no models: the escalate rung is dropped
    ours = [r.getMessage() for r in caplog.records if r.name == "doom_loop"]
    assert len(ours) == 1 and "escalat" in ours[0], ours
    assert len(model.requests) == 5
