"""Function tools whose arguments are checked strictly before the function runs.

Models produce JSON. ADK's `FunctionTool` coerces loosely (or not at all, depending on a
feature flag), so a model that sends `"false"` for a boolean or a JSON-encoded string
where a list is declared gets its mistake silently accepted and the function runs on
garbage. Here the arguments are validated as the JSON they are, in pydantic's strict
mode, against the same signature the declaration is built from; a mismatch goes back to
the model as a structured tool error so it can correct itself, and the function never
runs.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, get_type_hints

import pydantic
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from adk_yuxi.errors import YuxiError

__all__ = ["StrictFunctionTool", "ToolArgumentsError"]

_IGNORED_PARAMS = frozenset({"input_stream"})


class ToolArgumentsError(YuxiError, ValueError):
    """The arguments a model sent do not match the tool's declared parameters."""

    def __init__(self, tool_name: str, problems: list[dict[str, str]]) -> None:
        self.tool_name = tool_name
        self.problems = problems
        listed = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
        super().__init__(f"invalid arguments for tool {tool_name!r}: {listed}")

    def to_response(self) -> dict[str, Any]:
        """The tool result the model sees: what was wrong, field by field, and that
        nothing ran, without echoing the (possibly large) values it sent."""
        return {
            "error": {
                "code": "invalid_arguments",
                "tool": self.tool_name,
                "message": (
                    f"The arguments for `{self.tool_name}` do not match its parameters, so it"
                    " did not run. Send JSON values of the declared types (no strings for"
                    " booleans, numbers, objects or lists; no undeclared fields) and call it"
                    " again."
                ),
                "problems": self.problems,
            }
        }


def _build_arguments_model(
    func: Callable[..., Any], context_param: str | None
) -> type[pydantic.BaseModel]:
    signature = inspect.signature(func)
    try:
        hints = get_type_hints(func, include_extras=True)
    except (NameError, TypeError):
        hints = {}
    fields: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        if name == context_param or name in _IGNORED_PARAMS:
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(name, param.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        if isinstance(annotation, type) and issubclass(annotation, ToolContext):
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, default)
    config = pydantic.ConfigDict(
        strict=True,
        extra="forbid",
        arbitrary_types_allowed=True,
        validate_by_alias=False,
        validate_by_name=True,
    )
    model_name = f"{getattr(func, '__name__', 'tool')}_arguments"
    model: type[pydantic.BaseModel] = pydantic.create_model(model_name, __config__=config, **fields)
    return model


class _ArgumentsRejected(Exception):
    """Carries a `ToolArgumentsError` out of ADK's preprocessing hook to `run_async`."""

    def __init__(self, error: ToolArgumentsError) -> None:
        super().__init__(str(error))
        self.error = error


class StrictFunctionTool(FunctionTool):
    """An ADK `FunctionTool` that validates arguments strictly, as JSON, before running."""

    def __init__(self, func: Callable[..., Any], *, name: str | None = None) -> None:
        super().__init__(func)
        if name is not None:
            self.name = name
        self._arguments_model = _build_arguments_model(func, self._context_param_name)

    @property
    def arguments_model(self) -> type[pydantic.BaseModel]:
        return self._arguments_model

    def parameters_json_schema(self) -> dict[str, Any]:
        return self._arguments_model.model_json_schema()

    def validate_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """Returns the validated, converted arguments or raises `ToolArgumentsError`."""
        try:
            payload = json.dumps(args, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ToolArgumentsError(
                self.name, [{"field": "(arguments)", "problem": f"not JSON: {exc}"}]
            ) from exc
        try:
            validated = self._arguments_model.model_validate_json(
                payload, strict=True, by_alias=False, by_name=True
            )
        except pydantic.ValidationError as exc:
            problems = [
                {
                    "field": ".".join(str(part) for part in err["loc"]) or "(arguments)",
                    "problem": err["msg"],
                    "type": err["type"],
                }
                for err in exc.errors(include_url=False, include_input=False)
            ]
            raise ToolArgumentsError(self.name, problems) from None
        return {name: getattr(validated, name) for name in validated.model_fields_set}

    @override
    def _preprocess_args(self, args: dict[str, Any]) -> dict[str, Any]:
        # ADK documents this hook for subclasses; replacing it keeps ADK's own invocation
        # path (context injection, confirmation, generators) while the checks are ours.
        try:
            return self.validate_arguments(args)
        except ToolArgumentsError as error:
            raise _ArgumentsRejected(error) from None

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            return await super().run_async(args=args, tool_context=tool_context)
        except _ArgumentsRejected as rejected:
            return rejected.error.to_response()
