"""A scripted OpenAI-compatible model on 127.0.0.1 for the Python suite:
every request is answered by the next scripted reply and its body kept, so
a test can read what reached the model. Chat completions, and (a path
ending in ``/responses``) the Responses API that OpenRouter's agent SDK
speaks, streamed as server-sent events when the request asks to be."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, List


def estimate_tokens(value) -> int:
    """A token count as the JS scripted servers estimate one (4 characters
    a token), so the usage a client reads grows with what it sends."""
    if value is None:
        return 0
    text = value if isinstance(value, str) else json.dumps(value)
    return max(1, -(-len(text) // 4))


class ScriptedModel:
    """``reply(request_body, n)`` → the assistant message (a dict) of the
    ``n``-th request (0-based)."""

    def __init__(self, reply: Callable[[dict, int], dict]) -> None:
        self.requests: List[dict] = []
        #: Each answer's usage (``prompt_tokens``, ``completion_tokens``).
        self.usage: List[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                n = len(model.requests)
                model.requests.append(body)
                message = reply(body, n)
                if self.path.rstrip("/").endswith("/responses"):
                    return self._responses(body, n, message)
                tool_calls = message.get("tool_calls")
                prompt = estimate_tokens(body.get("messages")) + estimate_tokens(body.get("tools"))
                completion = estimate_tokens(message)
                usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
                model.usage.append(usage)
                answer = {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "scripted"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": message.get("content"), **({"tool_calls": tool_calls} if tool_calls else {})},
                            "finish_reason": "tool_calls" if tool_calls else "stop",
                        }
                    ],
                    "usage": usage,
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _responses(self, body: dict, n: int, message: dict) -> None:
                result = responses_result(body, n, message)
                usage = result["usage"]
                model.usage.append({"prompt_tokens": usage["input_tokens"], "completion_tokens": usage["output_tokens"],
                                    "total_tokens": usage["total_tokens"]})
                if not body.get("stream"):
                    data = json.dumps(result).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                else:
                    event = {"type": "response.completed", "sequence_number": 0, "response": result}
                    data = f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n".encode()
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedModel":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def responses_result(body: dict, n: int, message: dict) -> dict:
    """The Responses API result of a scripted chat-style ``message``: its
    text as a message item, each tool call as a function_call item; with
    ``tool_choice: "none"`` (a model cannot call then) the text only."""
    output = []
    calls = [] if body.get("tool_choice") == "none" else message.get("tool_calls") or []
    text = message.get("content") or (None if calls else "Done.")
    if text:
        output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for call in calls:
        output.append({"type": "function_call", "id": f"fc_{call['id']}", "call_id": call["id"], "status": "completed",
                       "name": call["function"]["name"], "arguments": call["function"]["arguments"]})
    prompt = estimate_tokens(body.get("input")) + estimate_tokens(body.get("instructions")) + estimate_tokens(body.get("tools"))
    completion = estimate_tokens(output)
    return {
        "id": f"resp_{n}", "object": "response", "created_at": 0, "completed_at": 0, "status": "completed",
        "model": body.get("model", "scripted"), "output": output, "error": None, "incomplete_details": None,
        "instructions": body.get("instructions"), "metadata": None, "parallel_tool_calls": True,
        "temperature": None, "top_p": None, "frequency_penalty": None, "presence_penalty": None,
        "tool_choice": body.get("tool_choice") or "auto", "tools": [],
        # OpenRouter bills each answer in usage.cost (openrouter-agent-sdk
        # 0.8.0 fails on an answer without it once any hook is registered).
        "usage": {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion, "cost": 0.0,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }


def billing_loop(body: dict, n: int) -> dict:
    """The billing agent's loop: the same charge after every decline."""
    return {
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "charge_card", "arguments": '{"customer":"cus_1","amount":4200}'},
            }
        ],
    }


def call(n: int, name: str, arguments: dict) -> dict:
    """The ``n``-th scripted tool call (id ``call_{n}``)."""
    return {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def edit_then_test(body: dict, n: int) -> dict:
    """An agent fixing a bug: edit (each patch new), then the identical
    run_tests({}), until a test result reads ``"failing":0``."""
    if any('"failing":0' in str(m.get("content")) for m in body["messages"]):
        return {"content": "All tests pass."}
    if n % 2 == 0:
        return {"content": None, "tool_calls": [call(n, "edit", {"path": "src/billing.py", "patch": f"fix {n // 2 + 1}"})]}
    return {"content": None, "tool_calls": [call(n, "run_tests", {})]}
