"""Test kit: a scripted ADK model (and one held at a gate), one turn through the real
``Runner``, a loopback OpenAI-compatible server and loopback fakes of the web search
providers.

Both go through ADK's real model interface (and, for the server, ADK's real OpenAI
adapter over HTTP), so tests exercise the runtime users run.
"""

from ._embedding_server import EmbeddingServer, hashed_embedding
from ._gated import GatedLlm
from ._openai_server import ChatTurn, EmptyReply, ErrorReply, OpenAIScriptServer, ToolCall
from ._pages import PageServer
from ._scripted import ScriptedLlm, ScriptExhaustedError, Turn, call, text
from ._turns import run_turn, user_message
from ._web_providers import (
    DEEPSEEK,
    DOUBAO,
    TAVILY,
    ProviderFakeServer,
    Reply,
    deepseek_error,
    doubao_error,
    tavily_error,
)

__all__ = [
    "DEEPSEEK",
    "DOUBAO",
    "TAVILY",
    "ChatTurn",
    "EmbeddingServer",
    "EmptyReply",
    "ErrorReply",
    "GatedLlm",
    "OpenAIScriptServer",
    "PageServer",
    "ProviderFakeServer",
    "Reply",
    "ScriptExhaustedError",
    "ScriptedLlm",
    "ToolCall",
    "Turn",
    "call",
    "deepseek_error",
    "doubao_error",
    "hashed_embedding",
    "run_turn",
    "tavily_error",
    "text",
    "user_message",
]
