"""An agent assembled by `build_app`: built-in tools gated behind the sample skills.

`adk run agents/skilled` and `adk web agents` load the module-level `app`. The model sees
only the skill loader at first; `/call load_skill {"skill_name": "note-keeping"}` opens
`save_note` and `list_notes` from the next step. `exact-arithmetic` is preloaded, so
`calculate` is visible from the start.

The app serves any user id: its principal source is `LocalPrincipals`, which gives every
local user the sample skills, so `adk run` (user "test_user") and `adk web` (whatever id
the URL carries) both work without an access database. Revocation is therefore not live
here; a host service passes its `AccessRepository` as the access instead.

The run records (`RunRecords`) bring the ledger and the base tools that act through
it: runs, waiting points and marks go to the database every `yuxi` command uses
(`YUXI_DATABASE_URL`, else `.yuxi/yuxi.db`, relative to where `adk` runs), and
`present_artifacts` reads each user's files under `YUXI_WORKSPACES/<user id>` (default
`.yuxi/workspaces`), shown to the model as `/workspace/...`.
"""

import os

from google.adk.apps import App

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi import (
    AgentConfig,
    LocalPrincipals,
    RunRecords,
    Toolbox,
    build_app,
    per_user_workspaces,
)
from adk_yuxi.access import ResourceKind, ResourceRecord, ShareConfig
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.models import resolve_agent_model
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.skills.builtin import BUILTIN_SKILLS_DIR
from adk_yuxi.storage import database_url
from adk_yuxi.tools import default_registry

skills = SkillCatalog(default_registry, McpServerRegistry())
skills.load_dir(BUILTIN_SKILLS_DIR)

local_users = LocalPrincipals(
    ResourceRecord(
        kind=ResourceKind.SKILL, id=spec.name, creator_id="local", share=ShareConfig.public()
    )
    for spec in skills.all()
)
"""Any user id is an active local user who may use every sample skill."""

config = AgentConfig(
    name="skilled",
    description="Keeps notes and does exact arithmetic through skills.",
    instruction="Load a skill before you need its tools. Answer briefly.",
    tools=(),
    preload_skills=("exact-arithmetic",),
)

records = RunRecords(
    database_url(),
    workspaces=per_user_workspaces(os.environ.get("YUXI_WORKSPACES", ".yuxi/workspaces")),
)
app: App = build_app(
    config,
    local_users,
    toolbox=Toolbox(skills=skills),
    capabilities=[records],
    model=resolve_agent_model(),
)
root_agent = app.root_agent
