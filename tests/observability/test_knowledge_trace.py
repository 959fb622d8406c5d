"""A knowledge query across the real MCP boundary is one trace: the agent's tool call in
the runtime and the server's answer under it, joined by the W3C `traceparent` the
runtime's MCP client sends (the server runs over loopback HTTP in this process, with
the same tracer provider, so both sides land in one exporter)."""

from __future__ import annotations

from google.adk.sessions import InMemorySessionService

from adk_yuxi.access import ShareConfig
from adk_yuxi.knowledge import (
    DelegationKeys,
    KnowledgeService,
    build_knowledge_server,
    serve_knowledge_http,
)
from adk_yuxi.testing import ScriptedLlm, call
from tests.knowledge.conftest import Platform, sqlite_platform
from tests.knowledge.mcp_client import mcp_session
from tests.knowledge.test_agent import World, _app, world
from tests.runtime._kit import USER, function_responses, run_turn

from .conftest import Spans

__all__ = ["sqlite_platform", "world"]  # fixtures, imported for pytest


async def test_one_trace_from_the_tool_call_to_the_servers_query(
    world: World, spans: Spans
) -> None:
    llm = ScriptedLlm(
        [
            call("query_kb", kb_id="hb", query="年假怎么申请"),
            call("query_kb", kb_id="secret", query="anything"),  # refused before the server
            "done",
        ]
    )
    events = await run_turn(await _app(world, llm), InMemorySessionService(), "s1", "年假？")
    answered, refused = function_responses(events)["query_kb"]
    assert answered["structuredContent"]["hits"] and refused["error"]["code"]

    server = spans.one("yuxi.knowledge.query_kb")
    attributes = dict(server.attributes or {})
    assert attributes["user.id"] == USER  # the delegation's subject
    assert attributes["gen_ai.conversation.id"] == "s1"
    assert attributes["yuxi.knowledge.kb_count"] == 2  # hb and other are public; secret is not
    assert attributes["yuxi.knowledge.hits"] >= 1  # type: ignore[operator]
    assert isinstance(attributes["yuxi.knowledge.revision"], str)
    assert attributes["yuxi.knowledge.cache_hit"] is False  # the first query builds the index
    # The query text and the hits' content are not on the span.
    assert not any("年假" in str(v) for v in attributes.values())

    ancestors = spans.ancestors(server)
    assert "execute_tool query_kb" in ancestors and "invoke_agent kb_assistant" in ancestors
    assert "POST /mcp" in [s.name for s in spans.all()]
    tool_call = next(s for s in spans.named("execute_tool query_kb"))
    assert server.context.trace_id == tool_call.context.trace_id
    assert len({s.context.trace_id for s in spans.all()}) == 1

    denied = spans.one("yuxi.authorize tool", yuxi__authz__decision="refused")
    assert denied.attributes is not None
    assert denied.attributes["yuxi.resource.kind"] == "knowledge_base"
    assert len(spans.named("yuxi.knowledge.query_kb")) == 1  # the refused call never left


async def test_the_server_joins_the_trace_of_the_http_traceparent(
    sqlite_platform: Platform, spans: Spans
) -> None:
    store, access = sqlite_platform.store, sqlite_platform.access
    await store.create_kb("Handbook", creator_id="admin", kb_id="hb", share=ShareConfig.public())
    await store.ingest("hb", b"Parking is free on weekends.", name="parking.txt")
    keys = DelegationKeys.generate()
    service = KnowledgeService(store, access, keys.verifier())
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    headers = {"traceparent": f"00-{trace_id}-{parent_id}-01"}
    async with (
        serve_knowledge_http(build_knowledge_server(service)) as url,
        mcp_session(url, keys.signer().mint("alice", "s9", ["hb"]), headers) as session,
    ):
        result = await session.call_tool("query_kb", {"kb_id": "hb", "query": "parking"})
    assert not result.is_error
    requests = spans.named("POST /mcp")
    assert requests
    for request in requests:
        assert f"{request.context.trace_id:032x}" == trace_id
        assert request.parent is not None and f"{request.parent.span_id:016x}" == parent_id
        assert request.attributes is not None
        assert request.attributes["http.route"] == "/mcp"
        assert request.attributes["http.response.status_code"] in (200, 202)  # 202: notices
    assert any((r.attributes or {}).get("http.response.status_code") == 200 for r in requests)
    query = spans.one("yuxi.knowledge.query_kb")
    assert query.attributes is not None and query.attributes["user.id"] == "alice"
