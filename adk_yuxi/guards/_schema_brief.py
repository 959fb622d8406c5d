"""The expected arguments of a tool in brief, for a repair message the model can act on.

Tools that are not ours have no public schema accessor: their declaration is read
through `adk_yuxi._adk`, the one home of ADK private names.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.base_tool import BaseTool

from .._adk import declaration_of
from ..tools import StrictFunctionTool

__all__ = ["parameters_schema", "schema_brief"]


def parameters_schema(tool: BaseTool) -> dict[str, Any] | None:
    if isinstance(tool, StrictFunctionTool):
        return tool.parameters_json_schema()
    if type(tool) is BaseTool:  # ADK's placeholder for a name nothing declared
        return None
    declaration = declaration_of(tool)
    if declaration is None:
        return None
    if declaration.parameters_json_schema is not None:
        return dict(declaration.parameters_json_schema)
    if declaration.parameters is not None:
        return declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True)
    return {"type": "object", "properties": {}}


def _type_of(schema: Any, defs: dict[str, Any], depth: int = 0) -> str:
    if not isinstance(schema, dict) or depth > 4:
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _type_of(defs.get(ref.rsplit("/", 1)[-1], {}), defs, depth + 1)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            return " | ".join(_type_of(o, defs, depth + 1) for o in options)
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"][:10])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " | ".join(str(k) for k in kind)
    kind = str(kind).lower()
    if kind == "array":
        return f"array of {_type_of(schema.get('items', {}), defs, depth + 1)}"
    if kind == "object" and isinstance(schema.get("properties"), dict):
        inner = ", ".join(
            f"{k}: {_type_of(v, defs, depth + 1)}" for k, v in schema["properties"].items()
        )
        return f"object {{{inner}}}"
    return kind


def schema_brief(schema: dict[str, Any] | None) -> dict[str, Any]:
    """{"parameters": {name: type}, "required": [...]} from a JSON schema."""
    if not schema:
        return {"parameters": {}, "required": []}
    defs = schema.get("$defs") or schema.get("definitions") or {}
    properties = schema.get("properties") or {}
    return {
        "parameters": {name: _type_of(value, defs) for name, value in properties.items()},
        "required": list(schema.get("required") or []),
    }
