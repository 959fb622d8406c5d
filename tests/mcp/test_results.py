"""Only exact JSON repeats of a structured MCP result are dropped for the model."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from google.adk.tools.function_tool import FunctionTool

from adk_yuxi.mcp import McpResultPlugin, drop_duplicate_text

STRUCTURED = {"kb_id": "hb", "hits": [{"content": "年假需提前三天申请。", "score": 1.5}]}


def _text(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": value if isinstance(value, str) else json.dumps(value)}


def _result(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"content": list(blocks), "structuredContent": STRUCTURED, "isError": False, **extra}


def test_the_json_repeat_goes_and_nothing_else_changes() -> None:
    compact = _text(json.dumps(STRUCTURED, ensure_ascii=False, separators=(",", ":")))
    indented = _text(json.dumps(STRUCTURED, indent=2))
    result = _result(compact, indented)
    assert drop_duplicate_text(result) is True
    assert result == {"structuredContent": STRUCTURED, "isError": False}


def test_an_empty_content_list_beside_structured_content_goes() -> None:
    # What the knowledge server sends a client that asked for structured results alone.
    result = _result()
    assert drop_duplicate_text(result) is True
    assert result == {"structuredContent": STRUCTURED, "isError": False}


def test_other_blocks_stay_in_their_order() -> None:
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    prose = _text("Found 1 hit in hb.")
    result = _result(prose, _text(STRUCTURED), image)
    assert drop_duplicate_text(result) is True
    assert result["content"] == [prose, image]


@pytest.mark.parametrize(
    "block",
    [
        _text({**STRUCTURED, "kb_id": "other"}),  # different JSON: not a repeat
        _text("{not json"),
        _text("[1, 2]"),
        {**_text(STRUCTURED), "annotations": {"audience": ["user"]}},  # says more
        {"type": "resource", "resource": {"uri": "file:///x", "text": json.dumps(STRUCTURED)}},
    ],
)
def test_anything_but_an_exact_repeat_stays(block: dict[str, Any]) -> None:
    result = _result(block)
    before = copy.deepcopy(result)
    assert drop_duplicate_text(result) is False
    assert result == before


def test_errors_and_unstructured_results_stay_whole() -> None:
    failed = _result(_text(STRUCTURED), isError=True)
    plain = {"content": [_text(STRUCTURED)], "isError": False}
    for result in (failed, plain, {"error": "x"}):
        before = copy.deepcopy(result)
        assert drop_duplicate_text(result) is False
        assert result == before


async def test_the_plugin_leaves_other_tools_alone_and_never_ends_the_chain() -> None:
    def lookup() -> dict[str, Any]:
        return {}

    plugin = McpResultPlugin()
    result = _result(_text(STRUCTURED))
    before = copy.deepcopy(result)
    tool = FunctionTool(lookup)
    answer = await plugin.after_tool_callback(
        tool=tool,
        tool_args={},
        tool_context=None,  # type: ignore[arg-type]
        result=result,
    )
    assert answer is None
    assert result == before  # not an MCP tool: its result is its own business
