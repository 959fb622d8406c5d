"""The assistant agent for `adk run agents/assistant` and `adk web agents`.

Its code ships inside the library (`adk_yuxi.demo.assistant`), where `yuxi demo` finds
it after a plain install; this folder only points ADK's loader at it.
"""

from adk_yuxi.demo.assistant import app, root_agent

__all__ = ["app", "root_agent"]
