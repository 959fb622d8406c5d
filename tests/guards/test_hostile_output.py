"""Model output is untrusted text parsed on the event loop: the ReAct reply and the
structured-output fence are read in linear time (a reply shaped to be slow cannot stall
every run in the process), and never raise anything but the parser's own error."""

from __future__ import annotations

import asyncio
import json
import re
import string
from pathlib import Path
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_yuxi.guards._structured import fenced_body
from adk_yuxi.models import REACT_PARSE_FAILED, ReactLlm
from adk_yuxi.models._react_format import ReactParseError, action_text, parse_reply
from adk_yuxi.testing import OpenAIScriptServer, ScriptedLlm
from tests._linear import assert_linear
from tests._profiles import examples
from tests.runtime._kit import Kit

from ._kit import app_for, guard_kit, openai_model, responses, turn
from .test_structured import Forecast, final_json


def react_step(reply: str) -> list[LlmResponse]:
    """One step of the real ReAct wrapper over a scripted inner model that writes `reply`."""
    model = ReactLlm(inner=ScriptedLlm([reply]), format_retries=0)
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="hi")])])

    async def run() -> list[LlmResponse]:
        return [r async for r in model.generate_content_async(request)]

    return asyncio.run(run())


REACT_SHAPES = {
    "blank lines": lambda n: "It is" + "\n" * n + "ok",
    "blank lines after an action": lambda n: "Action: get_weather" + "\n" * n,
    "blanks and newlines": lambda n: "Thought:" + " \t\n" * (n // 3 + 1) + "x",
    "almost markers": lambda n: "Action Inpu\n Final Answe\n" * (n // 24 + 1),
    "one long line": lambda n: "Final " * (n // 6 + 1) + "answer",
}


@pytest.mark.parametrize("shape", list(REACT_SHAPES), ids=list(REACT_SHAPES))
def test_react_replies_are_parsed_in_linear_time(shape: str) -> None:
    assert_linear(react_step, REACT_SHAPES[shape])


def test_the_reported_reply_reads_as_its_answer() -> None:
    [response] = react_step("It is" + "\n" * 12000 + "ok")
    assert response.content and response.content.parts
    assert response.content.parts[-1].text == "It is" + "\n" * 12000 + "ok"
    [failed] = react_step("Action: get_weather" + "\n" * 50_000)
    assert failed.error_code == REACT_PARSE_FAILED
    assert "Action Input" in (failed.error_message or "")


FENCE_SHAPES = {
    "unclosed fence": lambda n: "```json\n" + " " * n + '{"value": 1}',
    "fence of newlines": lambda n: "```" + "\n" * n,
    "backticks": lambda n: "`" * n,
    "fences": lambda n: "```json ```" * (n // 11 + 1),
}


@pytest.mark.parametrize("shape", list(FENCE_SHAPES), ids=list(FENCE_SHAPES))
def test_fenced_answers_are_read_in_linear_time(shape: str) -> None:
    assert_linear(fenced_body, FENCE_SHAPES[shape])


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return guard_kit(tmp_path)


async def test_a_slow_shaped_final_answer_is_sent_back_through_the_real_plugin(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    unclosed = "```json\n" + " " * 200_000 + '{"city": "杭州"}'
    script = [unclosed, '```JSON\n{"city": "杭州", "weather": "sunny", "temperature_c": 21}\n```']
    with OpenAIScriptServer(script) as server:
        app = app_for(kit, openai_model(monkeypatch, server.base_url), output_schema=Forecast)
        events = await turn(app, "杭州天气？")
    assert responses(events)[0][1]["error"]["code"] == "malformed_arguments"
    assert final_json(events) == {"city": "杭州", "weather": "sunny", "temperature_c": 21}


async def test_a_slow_shaped_react_reply_ends_the_turn_through_the_real_wrapper(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = "Thought: x\nAnswer: It is" + "\n" * 200_000 + "ok"
    with OpenAIScriptServer([reply]) as server:
        app = app_for(kit, openai_model(monkeypatch, server.base_url, prefix="react/"))
        events = await turn(app, "天气？")
    texts = [p.text for e in events for p in (e.content.parts if e.content else []) or []]
    assert any(t and t.startswith("It is") and t.endswith("ok") for t in texts)


# --- properties ---------------------------------------------------------------------

MARKUP = st.sampled_from(
    [
        "Action",
        "action",
        "Action Input",
        "Answer",
        "Final Answer",
        "Thought",
        ":",
        " ",
        "\t",
        "\n",
        "\r\n",
        "{",
        "}",
        '"',
        "`",
        "(",
        "get_weather",
        '{"a": 1}',
        "[1]",
        "é",
        "\u3000",
    ]
)
REPLIES = st.lists(MARKUP | st.text(max_size=4), max_size=30).map("".join)


@given(REPLIES)
@settings(max_examples=examples(200), deadline=None)
def test_any_reply_parses_or_raises_the_parse_error(reply: str) -> None:
    try:
        parsed = parse_reply(reply)
    except ReactParseError:
        return
    assert (parsed.action is None) != (parsed.answer is None)
    if parsed.action is not None:
        assert isinstance(parsed.arguments, dict)


NAMES = st.from_regex(re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,20}"), fullmatch=True)
ONE_LINE = st.text(st.characters(blacklist_categories=("Cc", "Zl", "Zp")), max_size=40)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@given(NAMES, st.dictionaries(st.text(max_size=8), JSON, max_size=4), ONE_LINE)
@settings(max_examples=examples(300), deadline=None)
def test_a_written_action_reads_back(name: str, args: dict[str, Any], thought: str) -> None:
    text = action_text(types.FunctionCall(name=name, args=args), thought=thought)
    parsed = parse_reply(text)
    assert (parsed.action, parsed.arguments) == (name, args)
    assert parsed.thought == thought.strip()


@given(ONE_LINE, st.text(max_size=60))
@settings(max_examples=examples(300), deadline=None)
def test_an_answer_reads_back_whatever_it_holds(thought: str, answer: str) -> None:
    parsed = parse_reply(f"Thought: {thought}\nAnswer: {answer}")
    assert parsed.answer == answer.strip()
    assert parsed.action is None


# The pattern the fence used to be read with: exact on short inputs, cubic on long ones.
OLD_FENCE = re.compile(r"^\s*```(?:json)?\s*(?P<body>.*?)\s*```\s*$", re.S | re.I)


@given(
    st.lists(
        st.sampled_from(["`", "```", "json", "JSON", " ", "\n", "{}", "x", "js"]), max_size=12
    ).map("".join)
)
@settings(max_examples=examples(300), deadline=None)
def test_the_fence_reads_as_the_pattern_did(text: str) -> None:
    old = OLD_FENCE.match(text)
    assert fenced_body(text) == (old.group("body") if old else text.strip())


@given(JSON, st.sampled_from(["json", "JSON", ""]), st.text(string.whitespace, max_size=3))
@settings(max_examples=examples(200), deadline=None)
def test_a_fenced_json_value_reads_back(value: Any, tag: str, blank: str) -> None:
    text = f"{blank}```{tag}\n{json.dumps(value)}\n```{blank}"
    assert json.loads(fenced_body(text)) == value
