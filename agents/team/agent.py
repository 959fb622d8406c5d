"""A multi-agent app: a coordinator that calls a researcher as a tool and hands
drafting to a writer, assembled by `build_app` from the YAML configs next to this file.

`adk run agents/team` and `adk web agents` load the module-level `app`. On the offline
demo model: "ask researcher what is 6 * 7" calls the researcher agent tool (a nested
run with its own tools: the calculator); "hand it to the writer" transfers the
conversation; "hand it to the critic" is refused with the list of allowed targets (the
critic is a sub-agent, but not on the coordinator's whitelist).

Every local user may read every agent (`LocalPrincipals`); a host service passes its
`AccessRepository` as the access so each user gets the tree their rights allow.
`samples/agent_tree.py` shows two users with different rights.
"""

from pathlib import Path

from google.adk.apps import App

import adk_yuxi.tools.builtin  # noqa: F401  (registers the built-in tools)
from adk_yuxi import AgentCatalog, LocalPrincipals, build_app
from adk_yuxi.access import ResourceKind, ResourceRecord, ShareConfig
from adk_yuxi.models import resolve_agent_model

catalog = AgentCatalog.from_yaml(Path(__file__).parent / "configs")

local_users = LocalPrincipals(
    ResourceRecord(kind=ResourceKind.AGENT, id=name, creator_id="local", share=ShareConfig.public())
    for name in catalog.names()
)
"""Any user id is an active local user who may use every agent of the team."""

app: App = build_app(
    "coordinator", local_users, catalog=catalog, name="team", model=resolve_agent_model()
)
root_agent = app.root_agent
