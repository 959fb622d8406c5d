"""Two changes to a chat-completions request that keep local OpenAI-compatible servers
from failing on what OpenAI itself accepts.

- An assistant message that only calls tools has `content: null` in ADK's request.
  llama-cpp-python's function-calling handler (0.3.x) answers it with HTTP 500; an empty
  string means the same to every server.
- A string parameter's `maxLength` is turned into a grammar by servers that constrain
  decoding to the tool schema (llama.cpp, llama-cpp-python; vLLM's guided decoding does
  the same): a bound of 2,000 or more overflowed llama-cpp-python's stack (a segfault of
  the whole server). Bounds of `LONG_STRING` characters or more are left out of the
  schema the model is shown. The tool still enforces them: its arguments are validated
  on our side, and a string too long comes back as `invalid_arguments` naming the bound.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LONG_STRING", "compatible_request"]

LONG_STRING = 1000
"""The smallest `maxLength` left out of the schemas sent."""


def _without_long_bounds(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_without_long_bounds(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bound = schema.get("maxLength")
    long_bound = isinstance(bound, int) and bound >= LONG_STRING
    return {
        key: _without_long_bounds(value)
        for key, value in schema.items()
        if not (key == "maxLength" and long_bound)
    }


def _message(message: Any) -> Any:
    silent = isinstance(message, dict) and message.get("role") == "assistant"
    if silent and message.get("content") is None:
        return {**message, "content": ""}
    return message


def _tool(tool: Any) -> Any:
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict) or "parameters" not in function:
        return tool
    parameters = _without_long_bounds(function["parameters"])
    return {**tool, "function": {**function, "parameters": parameters}}


def compatible_request(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` of `chat.completions.create`, with the two changes above (a copy)."""
    changed = dict(kwargs)
    if isinstance(kwargs.get("messages"), list):
        changed["messages"] = [_message(m) for m in kwargs["messages"]]
    if isinstance(kwargs.get("tools"), list):
        changed["tools"] = [_tool(t) for t in kwargs["tools"]]
    return changed
