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

from google.adk.apps import App
from google.adk.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin
from google.adk.tools.preload_memory_tool import PreloadMemoryTool

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi import AgentConfig, ContextPolicy, LocalPrincipals, Toolbox, build_app
from adk_yuxi.models import DemoLlm, resolve_agent_model
from adk_yuxi.tools import ToolRegistry, default_registry

from . import files  # noqa: F401  (registers save_text_file)
from .memory import LoadMemory, RememberConversation

INSTRUCTION = """You are a helpful assistant for a team's knowledge work.
Use `calculate` for any arithmetic instead of computing it yourself.
Use `save_note` when the user asks you to remember something, and `list_notes` to recall.
Use `load_memory` to look through earlier conversations, and `save_text_file` when the
user asks for a file. Answer briefly and say which tool result your answer relies on."""

TOOLS = ("save_note", "list_notes", "calculate", "save_text_file")

registry = ToolRegistry()
"""The assistant's own tools: the registry's it uses, and ADK's memory tools."""
for tool_id in TOOLS:
    registry.register(default_registry.get(tool_id), default_registry.metadata(tool_id))
registry.register(LoadMemory())
registry.register(PreloadMemoryTool())

model = resolve_agent_model()
# The demo model's budget is small on purpose: compaction is what it shows.
DEMO_CONTEXT = ContextPolicy(budget_tokens=2_000, keep_recent_events=4)
config = AgentConfig(
    name="assistant",
    description="Answers questions, does exact arithmetic, keeps notes and files for the user.",
    instruction=INSTRUCTION,
    tools=(*TOOLS, "load_memory", "preload_memory"),
    context=DEMO_CONTEXT if isinstance(model, DemoLlm) else ContextPolicy(),
)

app: App = build_app(
    config,
    LocalPrincipals(),
    toolbox=Toolbox(registry=registry),
    capabilities=[SaveFilesAsArtifactsPlugin(), RememberConversation()],
    model=model,
)
root_agent = app.root_agent
