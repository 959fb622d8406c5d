"""The exact argument contract of ask_user_question, case by case, on the tool instance
apps get (the strict validation ADK runs before the function)."""

from __future__ import annotations

from typing import Any

import pytest

from adk_yuxi.tools import StrictFunctionTool, ToolArgumentsError
from adk_yuxi.tools.base import base_tool
from adk_yuxi.waitpoints import AnswerRejected, Question, validate_answers

TOOL = base_tool("ask_user_question")
assert isinstance(TOOL, StrictFunctionTool)


def ok(**question: Any) -> dict[str, Any]:
    return {"question": "Which colour?", **question}


def opts(n: int) -> list[dict[str, str]]:
    return [{"label": f"Option {i}", "value": f"v{i}"} for i in range(1, n + 1)]


def normalised(questions: Any) -> list[Question]:
    return TOOL.validate_arguments({"questions": questions})["questions"]


def test_trims_text_and_fills_defaults() -> None:
    (q,) = normalised(
        [
            {
                "question": "  Which colour? ",
                "options": [{"label": " Red ", "value": " red ", "description": " warm "}],
            }
        ]
    )
    assert q.question == "Which colour?"
    assert q.question_id == "q-1"
    assert q.options[0].model_dump() == {"label": "Red", "value": "red", "description": "warm"}
    assert (q.multi_select, q.allow_other) == (False, True)


def test_generated_ids_follow_position_and_keep_explicit_ones() -> None:
    qs = normalised([ok(), ok(question_id="size"), ok()])
    assert [q.question_id for q in qs] == ["q-1", "size", "q-3"]


def test_free_text_question_has_no_options() -> None:
    (q,) = normalised([ok()])
    assert q.options == []


@pytest.mark.parametrize(
    ("case", "args"),
    [
        ("json string instead of the list", {"questions": '[{"question": "x"}]'}),
        ("wrapper object", {"questions": {"items": [ok()]}}),
        ("alias title", {"questions": [{"title": "x"}]}),
        ("alias text", {"questions": [{"text": "x"}]}),
        ("alias id", {"questions": [ok(id="a")]}),
        ("alias multiSelect", {"questions": [ok(options=opts(2), multiSelect=True)]}),
        ("options as plain strings", {"questions": [ok(options=["red", "blue"])]}),
        ("boolean as string", {"questions": [ok(options=opts(2), multi_select="true")]}),
        ("boolean as number", {"questions": [ok(allow_other=1)]}),
        ("zero questions", {"questions": []}),
        ("six questions", {"questions": [ok(question_id=f"x{i}") for i in range(6)]}),
        ("six options", {"questions": [ok(options=opts(6))]}),
        ("duplicate explicit ids", {"questions": [ok(question_id="a"), ok(question_id="a")]}),
        (
            "explicit id colliding with a generated one",
            {"questions": [ok(question_id="q-2"), ok()]},
        ),
        ("blank id", {"questions": [ok(question_id="   ")]}),
        ("empty id", {"questions": [ok(question_id="")]}),
        ("blank question", {"questions": [{"question": "  "}]}),
        ("blank option label", {"questions": [ok(options=[{"label": " ", "value": "v"}])]}),
        ("blank option value", {"questions": [ok(options=[{"label": "L", "value": ""}])]}),
        ("option extra field", {"questions": [ok(options=[{"label": "L", "value": "v", "x": 1}])]}),
        (
            "duplicate option values",
            {
                "questions": [
                    ok(options=[{"label": "A", "value": "v"}, {"label": "B", "value": "v"}])
                ]
            },
        ),
        ("missing questions", {}),
        ("question not a string", {"questions": [{"question": 3}]}),
        ("null question list", {"questions": None}),
    ],
)
def test_rejected(case: str, args: dict[str, Any]) -> None:
    with pytest.raises(ToolArgumentsError) as raised:
        TOOL.validate_arguments(args)
    assert raised.value.tool_name == "ask_user_question" and raised.value.problems


def test_five_questions_and_five_options_are_the_limits() -> None:
    qs = normalised([ok(options=opts(5)) for _ in range(5)])
    assert [q.question_id for q in qs] == ["q-1", "q-2", "q-3", "q-4", "q-5"]


# --- answers -----------------------------------------------------------------------

QUESTIONS = normalised(
    [
        {"question": "Name?", "question_id": "name"},
        {"question": "Colour?", "question_id": "colour", "options": opts(3)},
        {"question": "Toppings?", "question_id": "top", "options": opts(3), "multi_select": True},
        {"question": "Size?", "question_id": "size", "options": opts(2), "allow_other": False},
    ]
)
GOOD = {"name": " Ann ", "colour": "v2", "top": ["v1", "v3"], "size": "v1"}


def test_valid_answers_are_normalised() -> None:
    assert validate_answers(QUESTIONS, GOOD) == {**GOOD, "name": "Ann"}


def test_other_where_allowed() -> None:
    got = validate_answers(
        QUESTIONS, {**GOOD, "colour": {"other": " teal "}, "top": {"other": "x"}}
    )
    assert got["colour"] == {"other": "teal"}


@pytest.mark.parametrize(
    ("question_id", "answers"),
    [
        ("ghost", {**GOOD, "ghost": "x"}),
        ("colour", {**GOOD, "colour": "purple"}),
        ("colour", {**GOOD, "colour": ["v1"]}),
        ("top", {**GOOD, "top": "v1"}),
        ("top", {**GOOD, "top": []}),
        ("top", {**GOOD, "top": ["v1", "v1"]}),
        ("top", {**GOOD, "top": ["nope"]}),
        ("size", {**GOOD, "size": {"other": "huge"}}),
        ("name", {k: v for k, v in GOOD.items() if k != "name"}),
        ("name", {**GOOD, "name": "   "}),
        ("name", {**GOOD, "name": 5}),
        ("name", {**GOOD, "name": {"other": "x"}}),
        ("colour", {**GOOD, "colour": {"other": "x", "extra": 1}}),
    ],
)
def test_answer_rejected(question_id: str, answers: dict[str, Any]) -> None:
    with pytest.raises(AnswerRejected) as raised:
        validate_answers(QUESTIONS, answers)
    assert question_id in [p["question_id"] for p in raised.value.problems]


def test_answers_must_be_an_object() -> None:
    with pytest.raises(AnswerRejected):
        validate_answers(QUESTIONS, ["v1"])


def test_a_rejection_does_not_repeat_the_input() -> None:
    secret = "SECRET-" + "x" * 200_000
    answers = {**GOOD, "colour": secret, "top": [secret], "k" * 5000: "x"}
    answers.update({f"ghost{i}": "x" for i in range(50)})
    with pytest.raises(AnswerRejected) as raised:
        validate_answers(QUESTIONS, answers)
    text = repr(raised.value.problems)
    assert "SECRET" not in text and len(text) < 3000
    problems = {p["question_id"]: p["problem"] for p in raised.value.problems}
    assert "not among the options (" in problems["colour"]  # the valid values are named
    assert "more unknown question ids" in problems[""]
