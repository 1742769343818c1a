"""How an adapter reads a tool's output that reached it as text.

Frameworks hand a tool's result to their hooks as the text the model reads
(LangChain's ``ToolMessage.content``, an OpenAI Agents function tool's
return value). A JSON object or array in that text is read as the value it
spells, so the outcome-aware streaks see its fields (an ``error`` member, a
page's items); any other text (a number, ``true``, prose) stays text, as
the model read it. The JS LangChain adapter reads a tool message's text by
the same rule.
"""

from __future__ import annotations

import json
from typing import Any


def parsed_output(content: Any) -> Any:
    """``content`` as the outcome-aware streaks read it: JSON object or
    array text parsed, anything else (other text, non-text) unchanged."""
    if not isinstance(content, str) or content.lstrip()[:1] not in ("{", "["):
        return content
    try:
        return json.loads(content)
    except ValueError:
        return content
