"""A strict tool's declaration is built once and handed out as independent copies."""

from __future__ import annotations

from adk_yuxi.tools import StrictFunctionTool


def lookup(city: str, limit: int = 3) -> dict[str, object]:
    """Looks a city up."""
    return {"city": city, "limit": limit}


def test_each_step_gets_an_equal_independent_copy() -> None:
    tool = StrictFunctionTool(lookup)
    first, second = tool.declaration(), tool.declaration()
    assert first is not None and second is not None
    assert first == second and first is not second
    assert first.parameters_json_schema is not None
    first.parameters_json_schema["properties"].clear()  # a caller that mutates its copy
    third = tool.declaration()
    assert third is not None and third == second
    assert set((third.parameters_json_schema or {})["properties"]) == {"city", "limit"}
    assert third.parameters_json_schema.get("required") == ["city"]


def test_a_renamed_tool_is_declared_under_its_new_name() -> None:
    tool = StrictFunctionTool(lookup, name="find_city")
    before = tool.declaration()
    tool.name = "find_town"
    after = tool.declaration()
    assert before is not None and after is not None
    assert (before.name, after.name) == ("find_city", "find_town")
    assert before.parameters_json_schema == after.parameters_json_schema
