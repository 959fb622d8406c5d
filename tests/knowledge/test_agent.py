"""An ADK agent reaches the knowledge server through its toolset and the built-in skill:
the scripted model calls `query_kb`, the toolset mints the delegation, the real server
answers over loopback HTTP."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig
from adk_yuxi.knowledge import (
    KNOWLEDGE_SERVER_NAME,
    KNOWLEDGE_SKILL_NAME,
    SESSION_SELECTION_KEY,
    DelegationKeys,
    KnowledgeService,
    build_knowledge_server,
    install_knowledge,
    serve_knowledge_http,
)
from adk_yuxi.mcp import DelegatedServerError, McpServerConfig, McpServerRegistry
from adk_yuxi.models import declared_tool_names
from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry
from tests.runtime._kit import USER, function_responses, run_turn

from .conftest import Platform

CONFIG = AgentConfig(
    name="kb_assistant", preload_skills=("knowledge-base",), skills=("knowledge-base",)
)


@dataclass
class World:
    platform: Platform
    mcp: McpServerRegistry
    skills: SkillCatalog
    registry: ToolRegistry


@pytest.fixture
async def world(sqlite_platform: Platform) -> AsyncIterator[World]:
    store, access = sqlite_platform.store, sqlite_platform.access
    await store.create_kb("Handbook", creator_id="admin", kb_id="hb", share=ShareConfig.public())
    await store.create_kb("Other", creator_id="admin", kb_id="other", share=ShareConfig.public())
    await store.create_kb("Secret", creator_id="admin", kb_id="secret")
    await store.ingest(
        "hb", "# 请假制度\n\n年假需提前三天在系统中申请。\nSick leave needs a note.".encode(),
        name="leave.md",
    )  # fmt: skip
    await store.ingest("other", b"Parking is free on weekends.", name="parking.txt")
    keys = DelegationKeys.generate()
    service = KnowledgeService(store, access, keys.verifier())
    async with serve_knowledge_http(build_knowledge_server(service)) as url:
        registry = ToolRegistry()
        mcp = McpServerRegistry()
        skills = SkillCatalog(registry, mcp)
        install_knowledge(mcp, skills, url=url, signer=keys.signer())
        # The skill is shared like any other; its knowledge is gated per base and call.
        await access.save_resource(
            ResourceRecord(
                kind=ResourceKind.SKILL,
                id=KNOWLEDGE_SKILL_NAME,
                creator_id="admin",
                share=ShareConfig.public(),
            )
        )
        yield World(sqlite_platform, mcp, skills, registry)


async def _app(world: World, llm: ScriptedLlm, config: AgentConfig = CONFIG) -> Any:
    principal = await world.platform.access.load_principal(USER)
    return build_app(
        config,
        principal,
        model=llm,
        toolbox=Toolbox(registry=world.registry, skills=world.skills, mcp_servers=world.mcp),
    )


async def test_agent_calls_query_kb_through_the_toolset(world: World) -> None:
    seen: list[list[str]] = []

    def quote(request: LlmRequest) -> str:
        seen.append(declared_tool_names(request))
        response = request.contents[-1].parts[0].function_response.response
        # One copy of the hits: the server's JSON text block repeating them is dropped.
        assert "content" not in response, response
        hit = response["structuredContent"]["hits"][0]
        return f"“{hit['content'].splitlines()[2]}” ({hit['file_name']})"

    llm = ScriptedLlm([call("query_kb", kb_id="hb", query="年假怎么申请"), quote])
    events = await run_turn(await _app(world, llm), InMemorySessionService(), "s1", "年假？")
    assert {"list_kbs", "query_kb", "open_kb_document"} <= set(llm.tool_names(0))
    result = function_responses(events)["query_kb"][0]
    assert result["isError"] is False
    assert result["structuredContent"]["kb_id"] == "hb"
    assert events[-1].content.parts[0].text == "“年假需提前三天在系统中申请。” (leave.md)"


async def test_selection_and_rights_come_from_the_platform_not_the_prompt(world: World) -> None:
    llm = ScriptedLlm(
        [
            call("list_kbs"),
            call("query_kb", kb_id="secret", query="anything"),
            call("query_kb", kb_id="other", query="parking"),
            "done",
        ]
    )
    sessions = InMemorySessionService()
    await sessions.create_session(
        app_name="kb_assistant",
        user_id=USER,
        session_id="s2",
        state={SESSION_SELECTION_KEY: ["hb"]},
    )
    events = await run_turn(await _app(world, llm), sessions, "s2", "show me everything")
    responses = function_responses(events)
    listed = responses["list_kbs"][0]["structuredContent"]["kbs"]
    assert [kb["kb_id"] for kb in listed] == ["hb"]  # the session selected only hb
    secret, other = responses["query_kb"]
    # Not the user's: the runtime's resource guard refuses before the server is asked.
    assert secret["error"]["code"] == "resource_not_available"
    # The user's, but outside the session's selection: the server refuses it.
    assert other["isError"] and "no knowledge base 'other'" in other["content"][0]["text"]


async def test_revoked_share_stops_the_next_call_in_the_same_run(world: World) -> None:
    url = world.platform.store.store.target.url

    async def revoke() -> None:
        # An administrator elsewhere: another connection to the same database.
        admin = AccessRepository(url)
        try:
            await admin.share(ResourceKind.KNOWLEDGE_BASE, "hb", ShareConfig.private())
        finally:
            await admin.close()

    def revoke_then_call(request: LlmRequest) -> Any:
        worker = threading.Thread(target=asyncio.run, args=(revoke(),))
        worker.start()
        worker.join()
        return call("query_kb", kb_id="hb", query="sick leave")

    llm = ScriptedLlm([call("query_kb", kb_id="hb", query="sick leave"), revoke_then_call, "ok"])
    events = await run_turn(await _app(world, llm), InMemorySessionService(), "s3", "leave?")
    first, second = function_responses(events)["query_kb"]
    assert not first["isError"] and second["isError"]


async def test_knowledge_switched_off_is_unavailable_not_a_failure(world: World) -> None:
    server = world.mcp.get(KNOWLEDGE_SERVER_NAME)
    world.mcp.replace(server.model_copy(update={"enabled": False}))
    llm = ScriptedLlm([call("query_kb", kb_id="hb", query="leave"), "knowledge is off"])
    app = await _app(world, llm)
    events = await run_turn(app, InMemorySessionService(), "s4", "leave?")
    assert "query_kb" not in llm.tool_names(0)
    refused = function_responses(events)["query_kb"][0]
    assert "not_available" in str(refused)
    assert events[-1].content.parts[0].text == "knowledge is off"
    assert KNOWLEDGE_SERVER_NAME in world.mcp  # the identity stays


async def test_switched_off_during_a_run_is_gone_from_the_next_run(world: World) -> None:
    def switch_off(request: LlmRequest) -> Any:
        server = world.mcp.get(KNOWLEDGE_SERVER_NAME)
        world.mcp.replace(server.model_copy(update={"enabled": False}))
        return "switching off"

    llm = ScriptedLlm([call("list_kbs"), switch_off])
    await run_turn(await _app(world, llm), InMemorySessionService(), "s5", "hi")
    assert "list_kbs" in llm.tool_names(0)
    follow = ScriptedLlm(["after"])
    await run_turn(await _app(world, follow), InMemorySessionService(), "s6", "hi")
    assert "list_kbs" not in follow.tool_names(0)


def test_no_credential_can_be_configured_for_the_builtin_server(world: World) -> None:
    server = world.mcp.get(KNOWLEDGE_SERVER_NAME)
    with pytest.raises(DelegatedServerError, match="no shared or admin credential"):
        world.mcp.replace(server.model_copy(update={"headers": {"Authorization": "Bearer x"}}))
    other = McpServerRegistry(
        [McpServerConfig(name="knowledge", transport="streamable_http", url="http://x/mcp",
                         headers={"X-Api-Key": "admin"})]
    )  # fmt: skip
    with pytest.raises(DelegatedServerError):
        other.attach_delegation("knowledge", object())  # type: ignore[arg-type]
