"""An agent assembled by `build_app`: built-in tools gated behind the sample skills.

`adk run agents/skilled` and `adk web agents` load the module-level `app`. The model sees
only the skill loader at first; `/call load_skill {"skill_name": "note-keeping"}` opens
`save_note` and `list_notes` from the next step. `exact-arithmetic` is preloaded, so
`calculate` is visible from the start. There is no access database here: the principal
is a fixed local user who may use the sample skills, so revocation is not live (pass a
repository to `build_app` for that).
"""

import os

from google.adk.apps import App

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi.access import Principal, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.runtime import AgentConfig, build_app
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.skills.builtin import BUILTIN_SKILLS_DIR
from adk_yuxi.tools import default_registry

LOCAL_USER = os.environ.get("YUXI_USER", "test_user")
"""The only user id this app serves (runs under any other id are refused). `adk run`
uses "test_user"; for `adk web`, set YUXI_USER to the user id the web UI sends."""

skills = SkillCatalog(default_registry, McpServerRegistry())
skills.load_dir(BUILTIN_SKILLS_DIR)

principal = Principal.from_records(
    User(id=LOCAL_USER),
    [
        ResourceRecord(
            kind=ResourceKind.SKILL, id=spec.name, creator_id=LOCAL_USER, share=ShareConfig()
        )
        for spec in skills.all()
    ],
)

config = AgentConfig(
    name="skilled",
    description="Keeps notes and does exact arithmetic through skills.",
    instruction="Load a skill before you need its tools. Answer briefly.",
    tools=(),
    preload_skills=("exact-arithmetic",),
)

app: App = build_app(config, principal, skills=skills)
root_agent = app.root_agent
