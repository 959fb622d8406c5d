"""The knowledge server pages its own results, so they are never stored twice: with an
offload threshold every knowledge hit list crosses, `query_kb` still reaches the model
whole, while a local tool's result of that size in the same run is stored (real Runner,
the real server over loopback HTTP, artifacts in the SQLite database)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.access import ResourceKind, ResourceRecord, ShareConfig
from adk_yuxi.artifacts import SqlArtifactService
from adk_yuxi.knowledge import (
    KNOWLEDGE_SKILL_NAME,
    DelegationKeys,
    KnowledgeService,
    build_knowledge_server,
    install_knowledge,
    serve_knowledge_http,
)
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.runtime import AgentConfig, Toolbox, ToolResultOffload, build_app
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry, tool
from tests.runtime._kit import USER, function_responses

from .conftest import Platform

LINES = "\n".join(
    f"Leave rule {i}: annual leave needs {i % 7 + 1} days notice." for i in range(400)
)


async def test_knowledge_results_are_not_offloaded(
    sqlite_platform: Platform, tmp_path: Path
) -> None:
    store, access = sqlite_platform.store, sqlite_platform.access
    await store.create_kb("Handbook", creator_id="admin", kb_id="hb", share=ShareConfig.public())
    await store.ingest("hb", LINES.encode(), name="leave.md")
    await access.save_resource(
        ResourceRecord(
            kind=ResourceKind.SKILL,
            id=KNOWLEDGE_SKILL_NAME,
            creator_id="admin",
            share=ShareConfig.public(),
        )
    )
    registry = ToolRegistry()

    @tool(registry=registry)
    def dump(size: int) -> dict[str, Any]:
        """A dump of `size` characters."""
        return {"dump": "y" * size}

    keys = DelegationKeys.generate()
    service = KnowledgeService(store, access, keys.verifier())
    artifacts = SqlArtifactService(store.store, blob_dir=tmp_path / "blobs")
    async with serve_knowledge_http(build_knowledge_server(service)) as url:
        mcp = McpServerRegistry()
        skills = SkillCatalog(registry, mcp)
        install_knowledge(mcp, skills, url=url, signer=keys.signer())
        llm = ScriptedLlm(
            [
                call("query_kb", kb_id="hb", query="annual leave notice", top_k=20),
                call("dump", size=4000),
                "done",
            ]
        )
        config = AgentConfig(
            name="kb_assistant",
            preload_skills=(KNOWLEDGE_SKILL_NAME,),
            skills=(KNOWLEDGE_SKILL_NAME,),
            offload_tool_results=ToolResultOffload(max_inline_bytes=1024),
        )
        principal = await access.load_principal(USER)
        app = build_app(
            config,
            principal,
            model=llm,
            toolbox=Toolbox(registry=registry, skills=skills, mcp_servers=mcp),
        )
        sessions = InMemorySessionService()
        session = await sessions.create_session(app_name=app.name, user_id=USER)
        runner = Runner(app=app, session_service=sessions, artifact_service=artifacts)
        message = types.Content(role="user", parts=[types.Part(text="leave?")])
        run = runner.run_async(user_id=USER, session_id=session.id, new_message=message)
        events = [e async for e in run]
        await runner.close()
    found = function_responses(events)
    (hits,) = found["query_kb"]
    assert len(json.dumps(hits).encode()) > 1024  # above the threshold, and whole
    assert "stored_result" not in hits and hits["structuredContent"]["hits"]
    (dumped,) = found["dump"]
    name = dumped["stored_result"]["artifact"]
    listed = await artifacts.list_artifact_keys(
        app_name=app.name, user_id=USER, session_id=session.id
    )
    assert listed == [name]
