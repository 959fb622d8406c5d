"""A knowledge agent served by the host API: one run is one trace from the API's
request span through ADK's invocation and tool spans and the authorization decisions
to the knowledge server's answer, joined across the MCP boundary by `traceparent`.

The API is the ASGI app over httpx's ASGI transport on a real SQLite database; the
knowledge server is the real MCP server over loopback HTTP on the same database, with
the same tracer provider, so both sides land in one exporter."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig
from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.knowledge import (
    KNOWLEDGE_SKILL_NAME,
    DelegationKeys,
    KnowledgeService,
    KnowledgeStore,
    build_knowledge_server,
    install_knowledge,
    serve_knowledge_http,
)
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.runtime import AgentConfig, Toolbox
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import default_registry
from tests.e2e._cli import free_port
from tests.host.conftest import parse_sse, seed

from .conftest import Spans

LIBRARIAN = AgentConfig(
    name="librarian",
    description="Answers from the knowledge bases.",
    tools=(),
    skills=(KNOWLEDGE_SKILL_NAME,),
    preload_skills=(KNOWLEDGE_SKILL_NAME,),
)
RUNS = "/v1/agents/{agent_id}/sessions/{session_id}/runs"


@dataclass
class KnowledgeApi:
    client: httpx.AsyncClient
    llm: ScriptedLlm
    tokens: dict[str, str]

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


async def _seed_knowledge(store: KnowledgeStore) -> None:
    """`hb` readable by everyone, `secret` root's own; the skill and the agent shared."""
    await store.create_kb("Handbook", creator_id="root", kb_id="hb", share=ShareConfig.public())
    await store.create_kb("Secret", creator_id="root", kb_id="secret")
    await store.ingest("hb", b"Parking is free on weekends.", name="parking.txt")
    access = AccessRepository(store.store)
    for kind, ident in (
        (ResourceKind.SKILL, KNOWLEDGE_SKILL_NAME),
        (ResourceKind.AGENT, "librarian"),
    ):
        await access.save_resource(
            ResourceRecord(kind=kind, id=ident, creator_id="root", share=ShareConfig.public())
        )


async def _open_api(
    url: str, tokens: dict[str, str], server_url: str, keys: DelegationKeys
) -> AsyncIterator[KnowledgeApi]:
    """The host API serving `librarian`, with the knowledge server at `server_url`."""
    mcp_servers = McpServerRegistry()
    skills = SkillCatalog(default_registry, mcp_servers)
    install_knowledge(mcp_servers, skills, url=server_url, signer=keys.signer())
    llm = ScriptedLlm([])
    config = ApiConfig(
        database_url=url,
        agents=(LIBRARIAN,),
        model=llm,
        worker="test-worker",
        toolbox=Toolbox(skills=skills, mcp_servers=mcp_servers),
    )
    app = create_app(config)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield KnowledgeApi(client, llm, tokens)


async def _opened(tmp_path: Path, *, serving: bool) -> AsyncIterator[KnowledgeApi]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'api.db'}"
    tokens = await seed(url)  # users root, mei, bo with their API keys
    store = KnowledgeStore(url)
    await store.prepare()
    keys = DelegationKeys.generate()
    try:
        await _seed_knowledge(store)
        if not serving:  # a URL where nothing listens
            async for api in _open_api(url, tokens, f"http://127.0.0.1:{free_port()}/mcp", keys):
                yield api
            return
        service = KnowledgeService(store, AccessRepository(store.store), keys.verifier())
        async with serve_knowledge_http(build_knowledge_server(service)) as server_url:
            async for api in _open_api(url, tokens, server_url, keys):
                yield api
    finally:
        await store.close()


@pytest.fixture
async def knowledge_api(tmp_path: Path) -> AsyncIterator[KnowledgeApi]:
    async for api in _opened(tmp_path, serving=True):
        yield api


@pytest.fixture
async def knowledge_gone(tmp_path: Path) -> AsyncIterator[KnowledgeApi]:
    async for api in _opened(tmp_path, serving=False):
        yield api


async def _run(api: KnowledgeApi, text: str) -> tuple[str, list[dict[str, Any]]]:
    created = await api.client.post("/v1/agents/librarian/sessions", headers=api.auth("mei"))
    assert created.status_code == 201, created.text
    session = str(created.json()["id"])
    response = await api.client.post(
        f"/v1/agents/librarian/sessions/{session}/runs",
        json={"text": text},
        headers=api.auth("mei"),
    )
    assert response.status_code == 200, response.text
    return session, parse_sse(response.text)


def _tool_results(frames: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    found = []
    for frame in frames:
        for part in ((frame["data"].get("content") or {}).get("parts")) or []:
            response = part.get("function_response") or part.get("functionResponse")
            if response and response.get("name") == name:
                found.append(response["response"])
    return found


async def test_a_knowledge_run_through_the_host_is_one_trace(
    knowledge_api: KnowledgeApi, spans: Spans
) -> None:
    api = knowledge_api
    api.llm.extend(
        [
            call("query_kb", kb_id="hb", query="parking"),  # mei may read hb: answered
            call("query_kb", kb_id="secret", query="anything"),  # not shared: refused
            "Parking is free on weekends.",
        ]
    )
    session, frames = await _run(api, "Is parking free?")
    assert frames[-1]["data"]["status"] == "completed"
    answered, refused = _tool_results(frames, "query_kb")
    assert answered["structuredContent"]["hits"][0]["file_name"] == "parking.txt"
    assert refused["error"]["code"] == "resource_not_available"

    request = spans.one("POST " + RUNS, http__route=RUNS)
    trace_id = request.context.trace_id
    assert (request.attributes or {})["yuxi.run.id"] == frames[-1]["data"]["run_id"]
    allowed = spans.one(
        "yuxi.authorize tool", gen_ai__tool__name="query_kb", yuxi__authz__decision="allowed"
    )
    denied = spans.one("yuxi.authorize tool", yuxi__authz__decision="refused")
    assert denied.attributes is not None
    assert denied.attributes["yuxi.authz.rule"] == "resource_not_available"
    assert denied.attributes["yuxi.resource.kind"] == "knowledge_base"
    assert denied.attributes["yuxi.authz.argument"] == "kb_id"
    server = spans.one("yuxi.knowledge.query_kb")  # only the allowed call reached it
    attributes = dict(server.attributes or {})
    assert attributes["user.id"] == "mei"  # the delegation the API signed
    assert attributes["gen_ai.conversation.id"] == session
    assert attributes["yuxi.knowledge.hits"] == 1
    invocation = spans.one("invoke_agent librarian")
    tool_calls = spans.named("execute_tool query_kb")
    assert len(tool_calls) == 2
    for span in (allowed, denied, server, invocation, *tool_calls):
        assert span.context.trace_id == trace_id, span.name
        assert request.name in spans.ancestors(span), span.name
    ancestors = spans.ancestors(server)
    # The server's MCP span under the client's, under ADK's tool call: the boundary.
    assert ancestors[:3] == [
        "tools/call query_kb",
        "MCP send tools/call query_kb",
        "execute_tool query_kb",
    ]
    assert any(s.context.trace_id == trace_id for s in spans.named("POST /mcp"))
    assert "invoke_agent librarian" in ancestors
    # The session's own request is its own trace; everything of the run is one.
    runs = [s for s in spans.all() if s.context.trace_id == trace_id]
    others = {s.name for s in spans.all() if s.context.trace_id != trace_id}
    assert others <= {
        "POST /v1/agents/{agent_id}/sessions",
        "fastapi.dependencies",
        "fastapi.endpoint",
        "fastapi.serialization",
    }, others
    assert "yuxi.ledger.claim" in {s.name for s in runs}


async def test_a_knowledge_server_that_is_not_there_leaves_its_tools_unavailable(
    knowledge_gone: KnowledgeApi,
) -> None:
    """The server is skipped for the run (the operator log says why); the run goes on
    and the model is told the tool is not available, as for any MCP server down."""
    knowledge_gone.llm.extend([call("query_kb", kb_id="hb", query="parking"), "No answer."])
    _session, frames = await _run(knowledge_gone, "Is parking free?")
    assert frames[-1]["data"]["status"] == "completed"
    assert "query_kb" not in knowledge_gone.llm.tool_names(0)
    (refused,) = _tool_results(frames, "query_kb")
    assert refused["error"]["code"] == "tool_not_available"
