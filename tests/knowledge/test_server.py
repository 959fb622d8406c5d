"""The knowledge MCP server through the `mcp` SDK's client over real streamable HTTP, on
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from adk_yuxi.access import ResourceKind, Scope, ShareConfig
from adk_yuxi.knowledge import (
    KNOWLEDGE_TOOL_NAMES,
    RESULT_FORM_HEADER,
    DelegationKeys,
    KnowledgeService,
    build_knowledge_server,
    serve_knowledge_http,
)

from .conftest import Platform
from .mcp_client import mcp_session

LONG = "\n".join(
    [
        f"第 {i} 行：普通内容。" if i % 50 else f"Line {i}: checkpoint ERROR-{i}"
        for i in range(1, 251)
    ]
)


@dataclass
class Server:
    url: str
    keys: DelegationKeys
    platform: Platform
    files: dict[str, str]

    def token(self, user: str = "alice", kbs: tuple[str, ...] = ("eng", "pub", "priv")) -> str:
        return self.keys.signer().mint(user, "session-1", kbs)


async def _setup(platform: Platform) -> dict[str, str]:
    store = platform.store
    eng = ShareConfig(read_scope=Scope.departments("eng"), manage_scope=Scope.users())
    await store.create_kb("Engineering", creator_id="admin", kb_id="eng", share=eng)
    await store.create_kb("Public", creator_id="admin", kb_id="pub", share=ShareConfig.public())
    await store.create_kb("Private", creator_id="admin", kb_id="priv")
    files = {}
    files["runbook"] = (
        await store.ingest(
            "eng", "# Runbook\n\n数据库连接池满时重启服务。\nRestart the pool.".encode(),
            name="runbook.md",
        )
    ).file_id  # fmt: skip
    files["long"] = (await store.ingest("eng", LONG.encode(), name="long.txt")).file_id
    files["xs"] = (await store.ingest("eng", b"x" * 3000, name="xs.txt")).file_id
    files["pub"] = (
        await store.ingest("pub", b"Office hours are 9 to 5.", name="hours.txt")
    ).file_id
    files["priv"] = (await store.ingest("priv", b"salary table secret", name="pay.txt")).file_id
    for i in range(25):
        await store.ingest("pub", f"note {i}".encode(), name=f"note-{i:02d}.txt")
    return files


@pytest.fixture
async def server(platform: Platform) -> AsyncIterator[Server]:
    files = await _setup(platform)
    keys = DelegationKeys.generate()
    service = KnowledgeService(platform.store, platform.access, keys.verifier())
    async with serve_knowledge_http(build_knowledge_server(service)) as url:
        yield Server(url, keys, platform, files)


async def _call(url: str, token: str | None, tool: str, args: dict[str, Any]) -> Any:
    async with mcp_session(url, token) as session:
        return await session.call_tool(tool, args)


def _error(result: Any) -> str:
    assert result.is_error, result.structured_content
    return str(result.content[0].text)


async def test_catalog_is_exactly_the_five_tools(server: Server) -> None:
    async with mcp_session(server.url, server.token()) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == set(KNOWLEDGE_TOOL_NAMES)
    # One base (kb_id) or several ranked together (kb_ids): the question alone is required.
    assert tools["query_kb"].input_schema["required"] == ["query"]
    assert {"kb_id", "kb_ids"} <= set(tools["query_kb"].input_schema["properties"])
    assert "kb_id" in tools["query_kb"].output_schema["properties"]
    assert tools["open_kb_document"].output_schema["required"].count("next_offset") == 1
    assert tools["query_kb"].input_schema["properties"]["top_k"]["type"] == "integer"
    assert tools["find_kb_document"].input_schema["properties"]["use_regex"]["type"] == "boolean"


async def test_list_and_query_follow_current_rights(server: Server) -> None:
    result = await _call(server.url, server.token(), "list_kbs", {})
    kbs = {kb["kb_id"]: kb for kb in result.structured_content["kbs"]}
    assert set(kbs) == {"eng", "pub"} and kbs["eng"]["file_count"] == 3
    # The selection narrows further; it never widens.
    only_pub = await _call(server.url, server.token(kbs=("pub",)), "list_kbs", {})
    assert [kb["kb_id"] for kb in only_pub.structured_content["kbs"]] == ["pub"]

    hits = await _call(
        server.url, server.token(), "query_kb", {"kb_id": "eng", "query": "连接池满了怎么办"}
    )
    top = hits.structured_content["hits"][0]
    assert (top["kb_id"], top["file_id"]) == ("eng", server.files["runbook"])
    assert "重启" in top["content"] and top["start_line"] == 1


async def test_a_client_reading_structured_content_can_skip_the_text_copy(server: Server) -> None:
    args = {"kb_id": "eng", "query": "连接池满了怎么办"}
    async with mcp_session(server.url, server.token()) as session:
        full = await session.call_tool("query_kb", args)
    assert [json.loads(block.text) for block in full.content] == [full.structured_content]
    for form in ("structured", "Structured"):
        async with mcp_session(server.url, server.token(), {RESULT_FORM_HEADER: form}) as session:
            lean = await session.call_tool("query_kb", args)
            listed = await session.call_tool("list_kbs", {})
            refused = await session.call_tool("query_kb", {**args, "kb_id": "priv"})
        assert lean.content == [] and lean.structured_content == full.structured_content
        assert listed.content == [] and listed.structured_content["kbs"]
        # An error keeps its message: it is text, and has no structured form.
        assert "no knowledge base 'priv'" in _error(refused)
    async with mcp_session(server.url, server.token(), {RESULT_FORM_HEADER: "text"}) as session:
        assert (await session.call_tool("query_kb", args)).content


async def test_another_users_base_and_file_are_invisible(server: Server) -> None:
    token = server.token()
    for tool, args in [
        ("query_kb", {"kb_id": "priv", "query": "salary"}),
        ("open_kb_document", {"kb_id": "priv", "file_id": server.files["priv"]}),
        ("find_kb_document", {"kb_id": "priv", "file_id": server.files["priv"], "patterns": ["a"]}),
    ]:
        assert "no knowledge base 'priv'" in _error(await _call(server.url, token, tool, args))
    # A visible base does not open a file of another base.
    message = _error(
        await _call(
            server.url, token, "open_kb_document", {"kb_id": "eng", "file_id": server.files["priv"]}
        )
    )
    assert "no file" in message and "secret" not in message
    # Bob (sales) does not see the engineering base even when his token names it.
    bob = server.token("bob")
    assert "no knowledge base" in _error(
        await _call(server.url, bob, "query_kb", {"kb_id": "eng", "query": "pool"})
    )


@pytest.mark.parametrize(
    "bad_id", ["eng ", "eng\n", "e\x00ng", "еng", "../eng", "", "x" * 100_000]
)  # trailing space, trailing newline, NUL, Cyrillic е, path, empty, oversize
async def test_odd_ids_are_refused(server: Server, bad_id: str) -> None:
    result = await _call(server.url, server.token(), "query_kb", {"kb_id": bad_id, "query": "x"})
    message = _error(result)
    assert "kb_id must be" in message and len(message) < 200  # the input is not echoed whole


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("query_kb", {"kb_id": "eng", "query": "pool", "top_k": True}),
        ("query_kb", {"kb_id": "eng", "query": "pool", "top_k": "5"}),
        (
            "find_kb_document",
            {"kb_id": "eng", "file_id": "f", "patterns": ["a"], "use_regex": "yes"},
        ),
        ("open_kb_document", {"kb_id": "eng", "file_id": "f", "line": False}),
        ("search_file", {"limit": True}),
        ("search_file", {"kb_name": "x" * 100_000}),
    ],
)
async def test_arguments_are_not_coerced_from_other_types(
    server: Server, tool: str, args: dict[str, Any]
) -> None:
    message = _error(await _call(server.url, server.token(), tool, args))
    assert len(message) < 500


async def test_a_whole_number_sent_as_a_float_still_counts(server: Server) -> None:
    # What a model's function call carries: JSON numbers reach ADK's client as floats.
    args = {"kb_id": "eng", "query": "pool", "top_k": 2.0}
    result = await _call(server.url, server.token(), "query_kb", args)
    assert not result.is_error and len(result.structured_content["hits"]) <= 2


async def test_tokens_that_are_refused(server: Server) -> None:
    args = {"kb_id": "eng", "query": "pool"}
    expired = server.keys.signer().mint("alice", "s", ["eng"], now=time.time() - 400)
    forged = DelegationKeys.generate().signer().mint("alice", "s", ["eng"])
    wrong_audience = server.keys.signer(audience="another-service").mint("alice", "s", ["eng"])
    tampered = server.token()[:-6] + "AAAAAA"
    cases = {
        None: "no delegation token",
        expired: "expired",
        forged: "bad_signature",
        wrong_audience: "invalid_claim",
        tampered: "bad_signature",
        "not-a-jwt": "refused",
    }
    for token, reason in cases.items():
        assert reason in _error(await _call(server.url, token, "query_kb", args)), token


async def test_revocation_between_two_calls(server: Server) -> None:
    access = server.platform.access
    async with mcp_session(server.url, server.token()) as session:
        first = await session.call_tool("query_kb", {"kb_id": "eng", "query": "pool"})
        assert not first.is_error
        await access.share(ResourceKind.KNOWLEDGE_BASE, "eng", ShareConfig.private())
        second = await session.call_tool("query_kb", {"kb_id": "eng", "query": "pool"})
        assert "no knowledge base 'eng'" in _error(second)
        await access.share(ResourceKind.KNOWLEDGE_BASE, "eng", ShareConfig.public())
        assert not (await session.call_tool("list_kbs", {})).is_error
        await access.set_user_active("alice", False)
        assert "disabled" in _error(await session.call_tool("list_kbs", {}))
        await access.set_user_active("alice", True)
        await access.set_resource_enabled(ResourceKind.KNOWLEDGE_BASE, "pub", False)
        kbs = (await session.call_tool("list_kbs", {})).structured_content["kbs"]
        assert [kb["kb_id"] for kb in kbs] == ["eng"]


async def test_open_document_pages_through_the_file(server: Server) -> None:
    token, file_id = server.token(), server.files["long"]
    offset: int | None = 0
    seen: list[str] = []
    async with mcp_session(server.url, token) as session:
        while offset is not None:
            page = await session.call_tool(
                "open_kb_document",
                {"kb_id": "eng", "file_id": file_id, "offset": offset, "window_size": 100},
            )
            window = page.structured_content
            assert window["total_lines"] == 250 and window["kb_id"] == "eng"
            assert window["has_more_before"] == (offset > 0)
            seen.extend(window["content"].split("\n"))
            offset = window["next_offset"]
        assert seen == LONG.split("\n")
        at_line = await session.call_tool(
            "open_kb_document", {"kb_id": "eng", "file_id": file_id, "line": 200, "window_size": 1}
        )
        assert at_line.structured_content["content"] == "Line 200: checkpoint ERROR-200"
        both = await session.call_tool(
            "open_kb_document", {"kb_id": "eng", "file_id": file_id, "line": 2, "offset": 2}
        )
        assert "either line or offset" in _error(both)
        past = await session.call_tool(
            "open_kb_document", {"kb_id": "eng", "file_id": file_id, "offset": 250}
        )
        assert "window must start inside it" in _error(past)


async def test_find_in_document_with_keywords_and_regexes(server: Server) -> None:
    file_id = server.files["long"]
    base = {"kb_id": "eng", "file_id": file_id}
    async with mcp_session(server.url, server.token()) as session:
        found = await session.call_tool(
            "find_kb_document",
            {**base, "patterns": [r"ERROR-(1|2)\d0\b"], "use_regex": True, "window_size": 1},
        )
        windows = found.structured_content["windows"]
        assert [w["match_lines"] for w in windows] == [[100], [150], [200], [250]]
        assert windows[0]["start_line"] == 99 and windows[0]["end_line"] == 101
        assert found.structured_content["truncated"] is False
        few = await session.call_tool(
            "find_kb_document", {**base, "patterns": ["error"], "max_windows": 2}
        )
        assert few.structured_content["truncated"] is True
        exact = await session.call_tool(
            "find_kb_document", {**base, "patterns": ["error"], "case_sensitive": True}
        )
        assert exact.structured_content["windows"] == []
        literal = await session.call_tool("find_kb_document", {**base, "patterns": ["(x+x+)+y"]})
        assert literal.structured_content["windows"] == []
        evil = await session.call_tool(
            "find_kb_document",
            {**base, "file_id": server.files["xs"], "patterns": ["(x+x+)+y"], "use_regex": True},
        )
        assert "did not finish in 1 s" in _error(evil)
        bomb = await session.call_tool(
            "find_kb_document",
            {**base, "patterns": ["(?:(?:a{200}){200}){200}z"], "use_regex": True},
        )
        assert "repeats too much" in _error(bomb)
        broken = await session.call_tool(
            "find_kb_document", {**base, "patterns": ["(unclosed"], "use_regex": True}
        )
        assert "invalid regular expression" in _error(broken)
        huge = await session.call_tool("find_kb_document", {**base, "patterns": ["a" * 500]})
        assert "1-200 characters" in _error(huge)


async def test_a_slow_search_does_not_hold_up_other_calls(server: Server) -> None:
    order: list[str] = []

    async def slow() -> None:
        async with mcp_session(server.url, server.token()) as session:
            args = {"kb_id": "eng", "file_id": server.files["xs"], "use_regex": True}
            found = await session.call_tool("find_kb_document", {**args, "patterns": ["(x+x+)+y"]})
            assert found.is_error
            order.append("find")

    async def quick() -> None:
        async with mcp_session(server.url, server.token()) as session:
            await asyncio.sleep(0.2)  # the search has started
            assert not (await session.call_tool("list_kbs", {})).is_error
            order.append("list_kbs")

    await asyncio.gather(slow(), quick())
    # The search spends its whole budget (1 s); on the event loop it would finish first.
    assert order == ["list_kbs", "find"]


async def test_search_file_pages_across_visible_bases(server: Server) -> None:
    async with mcp_session(server.url, server.token()) as session:
        first = await session.call_tool("search_file", {"query": "note", "limit": 10})
        page = first.structured_content
        assert page["total"] == 25 and page["next_offset"] == 10
        assert [f["name"] for f in page["files"]][:2] == ["note-00.txt", "note-01.txt"]
        last = await session.call_tool("search_file", {"query": "note", "offset": 20, "limit": 10})
        assert last.structured_content["next_offset"] is None
        assert len(last.structured_content["files"]) == 5
        everything = await session.call_tool("search_file", {"limit": 100})
        names = {f["name"] for f in everything.structured_content["files"]}
        assert "pay.txt" not in names and "runbook.md" in names
        by_kb = await session.call_tool("search_file", {"kb_name": "Engineering"})
        assert {f["kb_id"] for f in by_kb.structured_content["files"]} == {"eng"}
        hidden = await session.call_tool("search_file", {"kb_name": "Private"})
        assert "no knowledge base 'Private'" in _error(hidden)
        bad = await session.call_tool("search_file", {"limit": 1000})
        assert bad.is_error


async def test_storage_failure_is_a_tool_error_not_a_crash(server: Server) -> None:
    token, sql = server.token(), server.platform.store.store
    query = {"kb_id": "eng", "query": "连接池"}
    assert not (await _call(server.url, token, "query_kb", query)).is_error  # index cached
    async with sql.write() as tx:
        await tx.execute("ALTER TABLE yx_kb_bases RENAME TO yx_kb_bases_away")
    result = await _call(server.url, token, "list_kbs", {})
    assert _error(result).endswith(": the knowledge service is unavailable; try again later")
    # With its revision unreadable, a query answers nothing from the cached index.
    result = await _call(server.url, token, "query_kb", query)
    assert _error(result).endswith(": the knowledge service is unavailable; try again later")
    async with sql.write() as tx:
        await tx.execute("ALTER TABLE yx_kb_bases_away RENAME TO yx_kb_bases")
    assert not (await _call(server.url, token, "list_kbs", {})).is_error
