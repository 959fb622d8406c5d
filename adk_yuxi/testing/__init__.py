"""Test kit: a scripted ADK model and a loopback OpenAI-compatible server.

Both go through ADK's real model interface (and, for the server, ADK's real OpenAI
adapter over HTTP), so tests exercise the runtime users run.
"""

from ._openai_server import ChatTurn, OpenAIScriptServer, ToolCall
from ._scripted import ScriptedLlm, ScriptExhaustedError, Turn, call, text

__all__ = [
    "ChatTurn",
    "OpenAIScriptServer",
    "ScriptExhaustedError",
    "ScriptedLlm",
    "ToolCall",
    "Turn",
    "call",
    "text",
]
