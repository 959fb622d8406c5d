"""The assistant agent: registry-built tools on the model that `YUXI_MODEL` names, and
all three services in use.

`yuxi demo`, `adk run agents/assistant` and `adk web agents` load the module-level `app`.
With no `YUXI_MODEL` set, it runs on the offline demo model, which says so on stderr;
with an unusable one, it answers every message with the configuration error.

- sessions: notes live in `user:` state;
- memory: every finished turn is added to the memory service, `load_memory` searches it
  on request and `preload_memory` offers matches to the model at every turn;
- artifacts: files attached in `adk web` are saved as artifacts by ADK's
  `SaveFilesAsArtifactsPlugin`, and `save_text_file` saves a generated one;
- context: older turns are compacted into a summary (`ContextPolicy`); on the offline
  demo model with a small budget, so a dozen turns show a compaction event in `adk web`.
"""

import logging

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App
from google.adk.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin
from google.adk.tools import load_memory
from google.adk.tools.preload_memory_tool import PreloadMemoryTool

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi.models import DemoLlm, resolve_agent_model
from adk_yuxi.runtime import ContextPolicy, compaction_config
from adk_yuxi.tools import default_registry

from . import files  # noqa: F401  (registers save_text_file)

logger = logging.getLogger(__name__)

INSTRUCTION = """You are a helpful assistant for a team's knowledge work.
Use `calculate` for any arithmetic instead of computing it yourself.
Use `save_note` when the user asks you to remember something, and `list_notes` to recall.
Use `load_memory` to look through earlier conversations, and `save_text_file` when the
user asks for a file. Answer briefly and say which tool result your answer relies on."""


async def remember_conversation(callback_context: CallbackContext) -> None:
    """Adds the session to memory after every turn, so later conversations can find it."""
    try:
        await callback_context.add_session_to_memory()
    except ValueError as exc:  # no memory service configured for this Runner
        logger.debug("session not added to memory: %s", exc)


root_agent = LlmAgent(
    name="assistant",
    model=resolve_agent_model(),
    description="Answers questions, does exact arithmetic, keeps notes and files for the user.",
    instruction=INSTRUCTION,
    tools=[
        *default_registry.tools(["save_note", "list_notes", "calculate", "save_text_file"]),
        load_memory,
        PreloadMemoryTool(),
    ],
    after_agent_callback=remember_conversation,
)

# The demo model's budget is small on purpose: compaction is what it shows.
DEMO_CONTEXT = ContextPolicy(budget_tokens=2_000, keep_recent_events=4)
model = root_agent.canonical_model
app = App(
    name="assistant",
    root_agent=root_agent,
    plugins=[SaveFilesAsArtifactsPlugin()],
    events_compaction_config=compaction_config(
        DEMO_CONTEXT if isinstance(model, DemoLlm) else ContextPolicy(), model
    ),
)
