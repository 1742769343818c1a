"""A LiteLLM proxy guardrail: the doom-loop gateway on the proxy teams
already run in front of their models.

Every request of an agent loop carries the whole conversation, so the
guardrail hands the request to the gateway engine (``doom_loop.Gateway``,
the same decision as the npm package's gateway and ``doomloop proxy``) and
applies its decision before LiteLLM calls the model:

- *forward*: the request goes on unchanged;
- *rewrite*: the request goes on with the gateway's body — each refused
  call's result replaced by the verdict's text, steering guidance added;
- *answer* (a stop): the model is not called; the client gets a final
  assistant message carrying the stop verdict (LiteLLM's ``mock_response``),
  so its loop ends the way it always ends. A new user message lifts the
  halt.

Configure it in the proxy's ``config.yaml`` (LiteLLM loads a guardrail from
a file beside the config, so that file only re-exports this class)::

    guardrails:
      - guardrail_name: doom-loop
        litellm_params:
          guardrail: doom_loop_guardrail.DoomLoopGuardrail
          mode: pre_call
          default_on: true

with ``doom_loop_guardrail.py`` holding
``from doom_loop.litellm import DoomLoopGuardrail``. LiteLLM is imported
here only (the rest of the package never imports it). Fails open: a
request the gateway cannot read, or any error here, goes on unchanged with
one log line.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Optional

from litellm.integrations.custom_guardrail import CustomGuardrail

from . import Gateway

logger = logging.getLogger("doom_loop.litellm")

# LiteLLM's call types, by the API their request body speaks.
_APIS = {
    "completion": "chat",
    "acompletion": "chat",
    "responses": "responses",
    "aresponses": "responses",
    "anthropic_messages": "anthropic",
}

# The request fields the gateway reads (LiteLLM adds its own bookkeeping to
# the request dict: metadata, the proxy's request, call ids).
_FIELDS = ("model", "messages", "tools", "tool_choice", "input", "instructions", "system", "previous_response_id")


def _answer_text(decision: dict) -> Optional[str]:
    """The stop message's text from the gateway's answer, in any API's shape."""
    try:
        body = json.loads(decision["body"])
    except (KeyError, TypeError, ValueError):
        return None
    if "choices" in body:
        return body["choices"][0]["message"]["content"]
    if body.get("type") == "message":
        return "".join(block.get("text", "") for block in body.get("content", []))
    for item in body.get("output", []):
        for part in item.get("content", []):
            if part.get("type") == "output_text":
                return part.get("text")
    return None


class DoomLoopGuardrail(CustomGuardrail):
    """The doom-loop gateway as a LiteLLM ``pre_call`` guardrail.
    ``doom_loop`` (keyword): the option (default
    ``RECOMMENDED_DOOM_LOOP_OPTION``); ``loop_keys``: per-tool loop keys."""

    def __init__(self, doom_loop: Any = None, loop_keys: Optional[dict] = None, **kwargs: Any) -> None:
        self._gateway = Gateway(doom_loop, loop_keys)
        super().__init__(**kwargs)

    def decide(self, api: str, data: dict) -> dict:
        """The gateway's decision for LiteLLM's request dict (not streamed:
        LiteLLM streams the answer itself)."""
        body = {name: data[name] for name in _FIELDS if name in data}
        return self._gateway.decide(api, json.dumps(body, default=str))

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: str) -> Any:
        api = _APIS.get(call_type)
        if api is None:
            return data
        try:
            decision = self.decide(api, data)
        except Exception as error:  # noqa: BLE001 - the guard never fails a request
            logger.warning("doom-loop: request forwarded unguarded: %s", error)
            return data
        for line in decision.get("log", []):
            logger.info("%s", line)
        if decision["action"] == "rewrite":
            data.update(json.loads(decision["body"]))
            return data
        if decision["action"] == "answer":
            text = _answer_text(decision)
            if text is not None:
                # LiteLLM's own mock response: a final assistant message in
                # the client's format (streamed or not), the model not
                # called. (A string returned here would be a 400 error.)
                data["mock_response"] = text
        return data
