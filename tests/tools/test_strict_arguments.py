"""Strict arguments through the real Runner: a bad call returns a structured error to
the model, the function never runs, and the run goes on to the model's next step."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent
from pydantic import BaseModel, ConfigDict, Field

from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import StrictFunctionTool, ToolArgumentsError, ToolRegistry, tool
from tests.conftest import final_texts, function_responses, run_turn


class Option(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str
    value: str = Field(alias="val")


def build(registry: ToolRegistry, calls: list[dict[str, Any]]) -> None:
    @tool(registry=registry, display_name="Choose")
    def choose(
        options: list[Option], multi_select: bool = False, limits: dict[str, int] | None = None
    ) -> dict[str, Any]:
        """Offers options."""
        calls.append({"options": options, "multi_select": multi_select, "limits": limits})
        return {"count": len(options)}


BAD_ARGUMENTS = [
    pytest.param({"options": '[{"label": "a", "value": "b"}]'}, "options", id="json-string-list"),
    pytest.param({"options": [], "multi_select": "false"}, "multi_select", id="string-bool"),
    pytest.param({"options": [], "multi_select": 1}, "multi_select", id="int-bool"),
    pytest.param({"options": [], "unknown": True}, "unknown", id="unknown-field"),
    pytest.param({"options": [{"label": "a", "val": "b"}]}, "options.0.value", id="alias"),
    pytest.param({"options": ["a"]}, "options.0", id="string-option"),
    pytest.param({"options": [], "limits": {"x": "3"}}, "limits.x", id="string-int"),
    pytest.param({}, "options", id="missing"),
]


@pytest.mark.parametrize(("args", "field"), BAD_ARGUMENTS)
async def test_bad_arguments_never_run_the_function_and_the_run_continues(
    args: dict[str, Any], field: str
) -> None:
    registry = ToolRegistry()
    calls: list[dict[str, Any]] = []
    build(registry, calls)
    model = ScriptedLlm([call("choose", **args), "I will fix my arguments."])
    agent = LlmAgent(name="agent", model=model, tools=registry.tools())

    events = await run_turn(agent, "go")

    assert calls == []
    [response] = function_responses(events)
    error = response.response["error"]  # type: ignore[index]
    assert error["code"] == "invalid_arguments"
    assert error["tool"] == "choose"
    assert field in [p["field"] for p in error["problems"]]
    # The model was asked again and saw the error as the function's result.
    assert len(model.requests) == 2
    assert final_texts(events)[-1] == "I will fix my arguments."
    seen = model.requests[1].contents[-1].parts[0].function_response
    assert seen is not None and seen.response == response.response


async def test_valid_arguments_are_converted_and_run() -> None:
    registry = ToolRegistry()
    calls: list[dict[str, Any]] = []
    build(registry, calls)
    model = ScriptedLlm(
        [call("choose", options=[{"label": "A", "value": "a"}], multi_select=True), "done"]
    )
    agent = LlmAgent(name="agent", model=model, tools=registry.tools())

    events = await run_turn(agent, "go")

    assert calls == [
        {"options": [Option(label="A", val="a")], "multi_select": True, "limits": None}
    ]
    [response] = function_responses(events)
    assert response.response == {"count": 1}


def test_validate_arguments_directly_reports_every_problem() -> None:
    registry = ToolRegistry()
    build(registry, [])
    strict = registry.get("choose")
    with pytest.raises(ToolArgumentsError) as caught:
        strict.validate_arguments({"options": "x", "multi_select": "no", "extra": 1})  # type: ignore[attr-defined]
    fields = sorted(p["field"] for p in caught.value.problems)
    assert fields == ["extra", "multi_select", "options"]
    assert "choose" in str(caught.value)


def test_error_payload_does_not_echo_the_values_sent() -> None:
    registry = ToolRegistry()
    build(registry, [])
    secret = "s3cr3t-value-the-model-sent"
    with pytest.raises(ToolArgumentsError) as caught:
        registry.get("choose").validate_arguments({"options": secret})  # type: ignore[attr-defined]
    assert secret not in repr(caught.value.problems)


def test_annotated_constraints_are_enforced() -> None:
    import adk_yuxi.tools.builtin  # noqa: F401
    from adk_yuxi.tools import default_registry

    save_note = default_registry.get("save_note")
    assert isinstance(save_note, StrictFunctionTool)
    with pytest.raises(ToolArgumentsError) as caught:
        save_note.validate_arguments({"text": ""})
    assert caught.value.problems[0]["field"] == "text"
    with pytest.raises(ToolArgumentsError):
        save_note.validate_arguments({"text": "x" * 2001})
    assert save_note.validate_arguments({"text": "buy milk"}) == {"text": "buy milk"}
    assert save_note.parameters_json_schema()["properties"]["text"]["maxLength"] == 2000
