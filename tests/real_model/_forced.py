"""A client that names the tool the model must call: the scenario that makes a weak model
call a tool on every step, so the loop guards meet a real model's calls.

OpenAI's named `tool_choice` (`{"type": "function", "function": {"name": ...}}`) is what
llama-cpp-python's `chatml-function-calling` turns into a grammar for that tool's
arguments; `"required"`, what ADK sends for its `ANY` mode, fails there with HTTP 500.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from adk_yuxi.models import OpenAICompatibleLlm
from adk_yuxi.models._openai_client import GuardedAsyncOpenAI


class _Completions:
    def __init__(self, inner: Any, tool: str) -> None:
        self._inner = inner
        self._tool = tool

    async def create(self, **kwargs: Any) -> Any:
        names = [t.get("function", {}).get("name") for t in kwargs.get("tools") or []]
        if self._tool in names:
            kwargs["tool_choice"] = {"type": "function", "function": {"name": self._tool}}
        return await self._inner.create(**kwargs)


class _Chat:
    def __init__(self, inner: Any, tool: str) -> None:
        self.completions = _Completions(inner.completions, tool)


class ForcedToolClient(GuardedAsyncOpenAI):
    """`GuardedAsyncOpenAI` whose requests that declare `forced_tool` name it as the
    tool the model must call."""

    forced_tool = ""

    @cached_property
    def chat(self) -> Any:
        return _Chat(super().chat, self.forced_tool)


def forced_model(name: str, base_url: str, api_key: str, tool: str) -> OpenAICompatibleLlm:
    client = ForcedToolClient(api_key=api_key, base_url=base_url)
    client.forced_tool = tool
    return OpenAICompatibleLlm(model=name, api_key=api_key, base_url=base_url, client=client)
