"""The registry contract: ids, metadata, independent copies, a catalog derived per call."""

from __future__ import annotations

import pytest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

from adk_yuxi.tools import (
    StrictFunctionTool,
    ToolExtraMetadata,
    ToolRegistry,
    UnknownToolError,
    register_tool,
    tool,
)


def make_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @tool(registry=registry, category="builtin", tags=["demo"], display_name="Echo text")
    def echo(text: str) -> str:
        """Returns the text it is given."""
        return text

    return registry


def test_decorator_registers_function_under_its_name_and_returns_it_unchanged() -> None:
    registry = ToolRegistry()

    @tool(registry=registry, display_name="Shout")
    def shout(text: str) -> str:
        """Upper-cases text."""
        return text.upper()

    assert shout("hi") == "HI"
    assert registry.ids() == ["shout"]
    registered = registry.get("shout")
    assert isinstance(registered, StrictFunctionTool)
    assert registered.name == "shout"
    assert registered.description == "Upper-cases text."


def test_explicit_id_differs_from_display_name() -> None:
    registry = ToolRegistry()

    @tool(registry=registry, name="web_lookup", display_name="网页查询")
    def lookup(query: str) -> str:
        return query

    [entry] = registry.catalog()
    assert entry.id == "web_lookup"
    assert entry.display_name == "网页查询"


def test_bare_decorator_uses_defaults() -> None:
    registry = ToolRegistry()

    def ping() -> str:
        """Answers pong."""
        return "pong"

    tool(registry=registry)(ping)
    meta = registry.metadata("ping")
    assert (meta.display_name, meta.category, tuple(meta.tags)) == ("ping", "builtin", ())


def test_catalog_entry_has_schema_and_metadata() -> None:
    registry = make_registry()
    [entry] = registry.catalog()
    assert entry.to_dict() == {
        "id": "echo",
        "display_name": "Echo text",
        "category": "builtin",
        "tags": ["demo"],
        "description": "Returns the text it is given.",
        "parameters": entry.parameters,
        "extra": {},
        "admin_only": False,
        "resource_args": {},
    }
    assert entry.parameters["properties"]["text"]["type"] == "string"
    assert entry.parameters["required"] == ["text"]
    assert entry.parameters["additionalProperties"] is False


def test_registration_after_catalog_shows_in_next_catalog() -> None:
    registry = make_registry()
    first = registry.catalog()

    def later(n: int) -> int:
        return n

    registry.register(FunctionTool(later), ToolExtraMetadata(display_name="Later"))
    assert [e.id for e in first] == ["echo"]
    assert [e.id for e in registry.catalog()] == ["echo", "later"]


def test_mutating_returned_values_never_changes_registry() -> None:
    registry = ToolRegistry()
    extra = {"vendor": {"name": "acme"}}
    registry.register(
        FunctionTool(vendor_tool),
        ToolExtraMetadata(display_name="Noop", tags=["a"], extra=extra),
    )
    extra["vendor"]["name"] = "changed by caller after registration"
    tool_id = registry.ids()[0]

    listed = registry.tools()
    listed.clear()
    ids = registry.ids()
    ids.append("ghost")
    catalog = registry.catalog()
    catalog[0].tags.append("mutated")
    catalog[0].parameters["properties"] = {"x": {}}
    catalog[0].extra["vendor"]["name"] = "mutated"
    catalog.clear()
    meta = registry.metadata(tool_id)
    meta.extra["vendor"]["name"] = "mutated too"  # type: ignore[index]

    assert len(registry.tools()) == 1
    assert registry.ids() == [tool_id]
    [fresh] = registry.catalog()
    assert fresh.tags == ["a"]
    assert fresh.extra == {"vendor": {"name": "acme"}}
    assert fresh.parameters["properties"] == {"q": {"title": "Q", "type": "string"}}
    assert registry.metadata(tool_id).extra == {"vendor": {"name": "acme"}}


def test_tool_instances_are_shared_execution_instances() -> None:
    registry = make_registry()
    assert registry.tools()[0] is registry.get("echo")
    assert registry.tools(["echo"])[0] is registry.get("echo")


def test_duplicate_id_is_rejected_naming_the_tool_and_keeps_the_first() -> None:
    registry = make_registry()
    original = registry.get("echo")

    def echo(text: str) -> str:
        return text * 2

    with pytest.raises(ValueError, match="'echo' is already registered"):
        tool(registry=registry)(echo)
    assert registry.get("echo") is original
    assert len(registry) == 1


@pytest.mark.parametrize("display_name", ["", "   "])
def test_empty_display_name_is_rejected_naming_the_tool(display_name: str) -> None:
    registry = ToolRegistry()

    def named(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="tool 'named': display_name"):
        tool(registry=registry, display_name=display_name)(named)
    assert "named" not in registry


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", float("nan")])
def test_non_json_metadata_is_rejected_naming_the_tool(value: object) -> None:
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="tool 'vendor_tool': metadata values must be JSON"):
        register_tool(
            FunctionTool(vendor_tool),
            ToolExtraMetadata(display_name="Vendor", extra={"bad": value}),
            registry=registry,
        )
    assert len(registry) == 0


def vendor_tool(q: str) -> str:
    """A vendor's function."""
    return q


def test_tags_must_be_a_list_not_a_string() -> None:
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="tool 'vendor_tool': tags must be a list"):
        registry.register(FunctionTool(vendor_tool), ToolExtraMetadata(tags="abc"))


def test_register_tool_makes_a_plain_function_tool_strict() -> None:
    registry = ToolRegistry()
    built = FunctionTool(vendor_tool)
    registered = register_tool(built, ToolExtraMetadata(category="vendor"), registry=registry)
    assert isinstance(registered, StrictFunctionTool) and registered.func is vendor_tool
    assert registry.get("vendor_tool") is registered
    [entry] = registry.catalog()
    assert entry.category == "vendor"
    assert entry.description == "A vendor's function."
    assert entry.parameters["properties"]["q"]["type"] == "string"


def test_register_rejects_non_tools_and_bad_ids() -> None:
    registry = ToolRegistry()
    with pytest.raises(TypeError):
        registry.register(vendor_tool)  # type: ignore[arg-type]

    class Odd(BaseTool):
        pass

    with pytest.raises(ValueError, match="'has space': the id must be"):
        registry.register(Odd(name="has space", description="x"))


def test_unknown_tool_errors_name_the_id() -> None:
    registry = ToolRegistry()
    with pytest.raises(UnknownToolError, match="'missing'"):
        registry.get("missing")
    with pytest.raises(UnknownToolError):
        registry.metadata("missing")
    with pytest.raises(UnknownToolError):
        registry.tools(["missing"])


def test_builtin_package_registers_its_tools_in_the_default_registry() -> None:
    from adk_yuxi.tools import default_registry
    from adk_yuxi.tools.builtin import BUILTIN_TOOL_IDS

    assert set(BUILTIN_TOOL_IDS) <= set(default_registry.ids())
    entries = {e.id: e for e in default_registry.catalog()}
    assert entries["calculate"].display_name == "Calculator"
