"""The demo model's knowledge rules, on requests shaped as ADK sends them."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_yuxi.models import DemoLlm


def _request(*contents: types.Content, tools: tuple[str, ...] = ()) -> LlmRequest:
    request = LlmRequest(contents=list(contents))
    if tools:
        declarations = [types.FunctionDeclaration(name=name) for name in tools]
        request.config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=declarations)]
        )
    return request


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _responses(*pairs: tuple[str, dict[str, Any]]) -> types.Content:
    return types.Content(
        role="user",
        parts=[
            types.Part(function_response=types.FunctionResponse(name=name, response=body))
            for name, body in pairs
        ],
    )


async def _answer(request: LlmRequest) -> types.Content:
    async for response in DemoLlm().generate_content_async(request):
        assert response.content is not None
        return response.content
    raise AssertionError("no response")


async def test_a_question_lists_then_queries_every_base_in_one_ranked_call() -> None:
    tools = ("list_kbs", "query_kb")
    first = await _answer(_request(_user("备份保留多久？"), tools=tools))
    assert first.parts[0].function_call.name == "list_kbs"
    bases = [{"kb_id": f"kb{n}"} for n in range(5)]  # more than the three it once took
    listed = {"structuredContent": {"kbs": bases}, "isError": False}
    second = await _answer(
        _request(_user("备份保留多久？"), _responses(("list_kbs", listed)), tools=tools)
    )
    calls = [p.function_call for p in second.parts]
    assert [(c.name, c.args["kb_ids"], c.args["query"]) for c in calls] == [
        ("query_kb", [b["kb_id"] for b in bases], "备份保留多久？"),
    ]


async def test_the_best_hit_is_quoted_with_its_file_and_lines() -> None:
    def hits(*items: tuple[float, str]) -> dict[str, Any]:
        found = [
            {"score": s, "content": c, "file_name": f"f{s}.md", "start_line": 3, "end_line": 9}
            for s, c in items
        ]
        return {"structuredContent": {"hits": found}, "isError": False}

    answer = await _answer(
        _request(
            _user("how long are backups kept?"),
            _responses(
                ("query_kb", hits((1.5, "# Ops\nBackups are kept for 30 days.\nOther line."))),
                ("query_kb", hits((0.5, "unrelated"))),
            ),
        )
    )
    assert answer.parts[0].text == (
        "(demo model) From the knowledge base: “Backups are kept for 30 days.” (f1.5.md, lines 3-9)"
    )


async def test_refusals_and_empty_results_are_said_plainly() -> None:
    refused = {"isError": True, "content": [{"type": "text", "text": "no delegation token"}]}
    answer = await _answer(_request(_user("q"), _responses(("list_kbs", refused))))
    assert "could not list" in answer.parts[0].text and "no delegation" in answer.parts[0].text
    empty = {"structuredContent": {"hits": []}, "isError": False}
    answer = await _answer(_request(_user("q"), _responses(("query_kb", empty))))
    assert answer.parts[0].text == "(demo model) The knowledge bases have nothing on that."


async def test_without_the_knowledge_tools_the_help_text_stays() -> None:
    answer = await _answer(_request(_user("what is the travel policy?"), tools=("calculate",)))
    assert "offline demo model" in answer.parts[0].text


@pytest.mark.parametrize(
    ("question", "passage", "quoted"),
    [
        (
            "连接池配置多大？",
            "## 连接池配置\n\n应用的数据库连接池大小建议设置为 CPU 核数的两倍。\n\n"
            "## 备份策略\n\n每天备份。",
            "应用的数据库连接池大小建议设置为 CPU 核数的两倍。",
        ),
        (
            "what is the travel and expenses policy?",
            "# Travel and Expenses Policy\n\nThis policy applies to every employee.\n"
            "## Booking flights\nBook flights 14 days ahead.",
            "This policy applies to every employee.",
        ),
        (  # the heading's terms lift the line under it above a line elsewhere
            "what is the hotel limit?",
            "## Trains\nTrains in Europe are second class.\n## Hotel limit\nAt most 180 euros.",
            "At most 180 euros.",
        ),
        ("anything", "# Only a heading", "# Only a heading"),
    ],
)
async def test_the_line_that_answers_is_quoted_not_its_heading(
    question: str, passage: str, quoted: str
) -> None:
    hit = {"score": 1.0, "content": passage, "file_name": "f.md", "start_line": 1, "end_line": 9}
    body = {"structuredContent": {"hits": [hit]}, "isError": False}
    answer = await _answer(_request(_user(question), _responses(("query_kb", body))))
    assert (
        answer.parts[0].text
        == f"(demo model) From the knowledge base: “{quoted}” (f.md, lines 1-9)"
    )
