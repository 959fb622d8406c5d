"""A hit inside a very long line can be read: search windows carry a character offset
and a cut flag, and open_kb_document reads on within a line, through the real knowledge
server over streamable HTTP."""

from __future__ import annotations

from typing import Any

from adk_yuxi.knowledge import (
    DelegationKeys,
    KnowledgeService,
    build_knowledge_server,
    serve_knowledge_http,
)

from .conftest import Platform
from .mcp_client import mcp_session

LONG_LINE = "".join(f"word{i:05d} " for i in range(5000)) + "NEEDLE-42 " + "tail " * 2572 + "end"
TEXT = f"short first line\n{LONG_LINE}\nthird line NEEDLE-43"


async def test_a_hit_in_a_long_line_is_found_and_readable(platform: Platform) -> None:
    assert len(LONG_LINE) > 60_000
    store = platform.store
    await store.create_kb("Eng", creator_id="admin", kb_id="eng")
    file_id = (await store.ingest("eng", TEXT.encode(), name="long.txt")).file_id
    keys = DelegationKeys.generate()
    service = KnowledgeService(store, platform.access, keys.verifier())
    token = keys.signer().mint("admin", "s1", ("eng",))
    base: dict[str, Any] = {"kb_id": "eng", "file_id": file_id}
    async with (
        serve_knowledge_http(build_knowledge_server(service)) as url,
        mcp_session(url, token) as session,
    ):
        found = await session.call_tool("find_kb_document", {**base, "patterns": ["needle"]})
        windows = found.structured_content["windows"]
        assert [w["match_lines"] for w in windows] == [[2], [3]]
        cut = windows[0]
        assert cut["cut"] is True and "NEEDLE-42" in cut["content"]
        assert LONG_LINE[cut["char_offset"] :].startswith(cut["content"])
        assert windows[1]["cut"] is False and windows[1]["content"].endswith("NEEDLE-43")
        regex = await session.call_tool(
            "find_kb_document", {**base, "patterns": [r"NEEDLE-4\d"], "use_regex": True}
        )
        assert "NEEDLE-42" in regex.structured_content["windows"][0]["content"]

        pieces: list[str] = []
        offset = 0
        while True:
            page = await session.call_tool(
                "open_kb_document", {**base, "line": 2, "char_offset": offset}
            )
            window = page.structured_content
            assert window["start_line"] == 2 and window["char_offset"] == offset
            if window["next_char_offset"] is None:
                pieces.append(window["content"].split("\n")[0])
                assert window["end_line"] == 3
                break
            assert len(window["content"]) <= 20_000
            pieces.append(window["content"])
            offset = window["next_char_offset"]
        assert "".join(pieces) == LONG_LINE
        past = await session.call_tool("open_kb_document", {**base, "line": 1, "char_offset": 500})
        assert past.is_error and "char_offset" in str(past.content[0].text)
