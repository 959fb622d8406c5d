"""Strict arguments without gaps: `Annotated` constraints and validators are enforced and
shown in the schema, nested models are closed at every depth, a plain `FunctionTool`
is made strict, and an annotation that cannot be resolved fails at registration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from pydantic import AfterValidator, BaseModel, Field

from adk_yuxi._adk import declaration_of
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import StrictFunctionTool, ToolRegistry, register_tool, tool
from tests.conftest import function_responses, run_turn

if TYPE_CHECKING:
    from decimal import Decimal


def _even(value: int) -> int:
    if value % 2:
        raise ValueError("must be even")
    return value


Code = Annotated[str, Field(max_length=3, pattern="^[a-z]+$")]


class Leaf(BaseModel):
    value: int


class Branch(BaseModel):
    leaf: Leaf
    leaves: list[Leaf] = []


def _register(registry: ToolRegistry, calls: list[Any]) -> None:
    @tool(registry=registry)
    def pick(
        count: Annotated[int, Field(ge=1, le=5)],
        code: Code = "ab",
        pair: Annotated[int, AfterValidator(_even)] = 2,
        branch: Branch | None = None,
    ) -> dict[str, Any]:
        """Picks things."""
        calls.append({"count": count, "code": code, "pair": pair, "branch": branch})
        return {"ok": True}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"count": 9}, "count"),
        ({"count": 0}, "count"),
        ({"count": 1, "code": "abcd"}, "code"),
        ({"count": 1, "code": "AB"}, "code"),
        ({"count": 1, "pair": 3}, "pair"),
        ({"count": 1, "branch": {"leaf": {"value": 1, "extra": 1}}}, "branch.leaf.extra"),
        ({"count": 1, "branch": {"leaf": {"value": 1}, "leaves": [{"value": 2, "x": 0}]}}, "x"),
        ({"count": 1, "branch": {"leaf": {"value": 1}, "more": True}}, "branch.more"),
    ],
)
async def test_constraints_are_enforced_through_the_runner(
    args: dict[str, Any], field: str
) -> None:
    registry = ToolRegistry()
    calls: list[Any] = []
    _register(registry, calls)
    model = ScriptedLlm([call("pick", **args), "fixed"])
    events = await run_turn(LlmAgent(name="agent", model=model, tools=registry.tools()), "go")
    assert calls == []
    [response] = function_responses(events)
    error = response.response["error"]  # type: ignore[index]
    assert error["code"] == "invalid_arguments"
    assert any(p["field"].endswith(field) for p in error["problems"]), error["problems"]


async def test_valid_nested_arguments_arrive_as_the_declared_classes() -> None:
    registry = ToolRegistry()
    calls: list[Any] = []
    _register(registry, calls)
    branch = {"leaf": {"value": 1}, "leaves": [{"value": 2}]}
    model = ScriptedLlm([call("pick", count=2, code="xy", pair=4, branch=branch), "done"])
    await run_turn(LlmAgent(name="agent", model=model, tools=registry.tools()), "go")
    [received] = calls
    assert type(received["branch"]) is Branch and type(received["branch"].leaves[0]) is Leaf
    assert received["branch"] == Branch(leaf=Leaf(value=1), leaves=[Leaf(value=2)])


def test_the_model_and_the_catalog_see_the_enforced_schema() -> None:
    registry = ToolRegistry()
    _register(registry, [])
    [entry] = registry.catalog()
    count = entry.parameters["properties"]["count"]
    assert (count["minimum"], count["maximum"]) == (1, 5)
    declaration = declaration_of(registry.get("pick"))
    assert declaration is not None and declaration.parameters_json_schema is not None
    code = declaration.parameters_json_schema["properties"]["code"]
    assert code["maxLength"] == 3 and code["pattern"] == "^[a-z]+$"
    leaf = declaration.parameters_json_schema["$defs"]["Leaf"]
    assert leaf["additionalProperties"] is False


def flag(enabled: bool) -> dict[str, Any]:
    """Sets a flag."""
    return {"enabled": enabled}


async def test_a_registered_function_tool_runs_on_strict_arguments() -> None:
    registry = ToolRegistry()
    register_tool(FunctionTool(flag), registry=registry)
    model = ScriptedLlm([call("flag", enabled="false"), "ok"])
    events = await run_turn(LlmAgent(name="agent", model=model, tools=registry.tools()), "go")
    [response] = function_responses(events)
    assert response.response["error"]["code"] == "invalid_arguments"  # type: ignore[index]


def test_a_loose_function_tool_subclass_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'flag'.*LongRunningFunctionTool"):
        register_tool(LongRunningFunctionTool(flag), registry=ToolRegistry())


def test_unresolvable_annotations_fail_at_registration() -> None:
    class Local(BaseModel):
        x: int

    def uses_local(item: Local) -> None:
        """Takes a class defined in a function."""

    def uses_type_checking_import(amount: Decimal) -> None:
        """Takes a name imported only for type checkers."""

    def uses_bad_reference(x: NoSuchName) -> None:  # type: ignore[name-defined]  # noqa: F821
        """Names nothing."""

    for func in (uses_local, uses_type_checking_import, uses_bad_reference):
        with pytest.raises(ValueError, match=f"tool '{func.__name__}'"):
            StrictFunctionTool(func)
