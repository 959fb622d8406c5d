"""The assistant agent: registry-built tools on the model that `YUXI_MODEL` names.

`adk run agents/assistant` and `adk web agents` load the module-level `app`. With no
`YUXI_MODEL` set, it runs on the offline demo model, which says so on stderr.
"""

from google.adk.agents import LlmAgent
from google.adk.apps import App

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi.models import resolve_model
from adk_yuxi.tools import default_registry

INSTRUCTION = """You are a helpful assistant for a team's knowledge work.
Use `calculate` for any arithmetic instead of computing it yourself.
Use `save_note` when the user asks you to remember something, and `list_notes` to recall.
Answer briefly and say which tool result your answer relies on."""

root_agent = LlmAgent(
    name="assistant",
    model=resolve_model(),
    description="Answers questions, does exact arithmetic and keeps notes for the user.",
    instruction=INSTRUCTION,
    tools=default_registry.tools(["save_note", "list_notes", "calculate"]),
)

app = App(name="assistant", root_agent=root_agent)
