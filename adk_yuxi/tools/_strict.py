"""Function tools whose arguments are checked strictly before the function runs.

Models produce JSON. ADK's `FunctionTool` coerces loosely (or not at all, depending on a
feature flag), so a model that sends `"false"` for a boolean or a JSON-encoded string
where a list is declared gets its mistake silently accepted and the function runs on
garbage. Here the arguments are validated as the JSON they are, in pydantic's strict
mode, against a model built from the signature (`Annotated` constraints included, every
nested model closed to unknown fields); the model and `catalog()` are shown that same
model's JSON schema. A mismatch goes back to the model as a structured tool error so it
can correct itself, and the function never runs.
"""

from __future__ import annotations

import inspect
import json
import types as pytypes
import typing
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import pydantic
import pydantic_core
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from adk_yuxi._adk import HookedFunctionTool, function_tool_context_param
from adk_yuxi.errors import ToolErrorCode, YuxiError, tool_error

__all__ = ["StrictFunctionTool", "ToolArgumentsError"]

_IGNORED_PARAMS = frozenset({"input_stream"})
_CONFIG = pydantic.ConfigDict(
    strict=True,
    extra="forbid",
    arbitrary_types_allowed=True,
    validate_by_alias=False,
    validate_by_name=True,
)


class ToolArgumentsError(YuxiError, ValueError):
    """The arguments a model sent do not match the tool's declared parameters."""

    def __init__(self, tool_name: str, problems: list[dict[str, str]]) -> None:
        self.tool_name = tool_name
        self.problems = problems
        listed = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
        super().__init__(f"invalid arguments for tool {tool_name!r}: {listed}")


def _closed(annotation: Any, seen: dict[type, type]) -> Any:
    """`annotation` with every pydantic model in it replaced by a subclass that forbids
    unknown fields, at every depth (a subclass, so the function still gets an instance
    of the class it declared)."""
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        if annotation in seen:
            return seen[annotation]
        fields: dict[str, Any] = {}
        for name, info in annotation.model_fields.items():
            fields[name] = (_closed(info.annotation, seen), info)
        closed = pydantic.create_model(
            annotation.__name__,
            __base__=annotation,
            __module__=annotation.__module__,
            **fields,
        )
        closed.model_config["extra"] = "forbid"
        closed.model_rebuild(force=True)
        seen[annotation] = closed
        return closed
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *metadata = get_args(annotation)
        return Annotated[(_closed(base, seen), *metadata)]
    args = get_args(annotation)
    if origin is None or not args:
        return annotation
    closed_args = tuple(_closed(a, seen) for a in args)
    if closed_args == args:
        return annotation
    if origin in (typing.Union, pytypes.UnionType):
        return typing.Union[closed_args]  # noqa: UP007
    return origin[closed_args]


def _hints(func: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    try:
        return get_type_hints(func, include_extras=True)
    except Exception as exc:  # any failure to resolve is the tool author's to fix now
        raise ValueError(
            f"tool {tool_name!r}: its type annotations cannot be resolved ({exc}); use"
            " names importable at module level (not local classes or TYPE_CHECKING imports)"
        ) from None


def _build_arguments_models(
    func: Callable[..., Any], context_param: str | None, tool_name: str
) -> tuple[type[pydantic.BaseModel], type[pydantic.BaseModel] | None]:
    """The strict model the arguments are checked against, and, when it had to close
    nested models, the model that builds the values the function receives (instances of
    the classes it declared)."""
    signature = inspect.signature(func)
    hints = _hints(func, tool_name)
    fields: dict[str, Any] = {}
    declared: dict[str, Any] = {}
    seen: dict[type, type] = {}
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
        fields[name] = (_closed(annotation, seen), default)
        declared[name] = (annotation, default)
    try:
        model: type[pydantic.BaseModel] = pydantic.create_model(
            f"{tool_name}_arguments", __config__=_CONFIG, **fields
        )
        model.model_json_schema()
        values = None
        if seen:
            values = pydantic.create_model(f"{tool_name}_values", __config__=_CONFIG, **declared)
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, TypeError) as exc:
        raise ValueError(
            f"tool {tool_name!r}: its parameters cannot be validated ({exc})"
        ) from None
    return model, values


class _ArgumentsRejected(Exception):
    """Carries a `ToolArgumentsError` out of ADK's preprocessing hook to `run_async`."""

    def __init__(self, error: ToolArgumentsError) -> None:
        super().__init__(str(error))
        self.error = error


class StrictFunctionTool(HookedFunctionTool):
    """An ADK `FunctionTool` that validates arguments strictly, as JSON, before running.

    Raises `ValueError` naming the tool when its annotations cannot be resolved or
    validated, so a broken tool fails where it is defined, not at its first call.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        require_confirmation: bool | Callable[..., bool] = False,
    ) -> None:
        super().__init__(func, require_confirmation=require_confirmation)
        if name is not None:
            self.name = name
        self._schema: bytes | None = None  # JSON: parsing it is a cheap deep copy
        self._declaration: types.FunctionDeclaration | None = None
        self._arguments_model, self._values_model = _build_arguments_models(
            func, function_tool_context_param(self), self.name
        )

    @property
    def arguments_model(self) -> type[pydantic.BaseModel]:
        return self._arguments_model

    def parameters_json_schema(self) -> dict[str, Any]:
        """The JSON schema of the enforced arguments (a fresh copy; built once)."""
        if self._schema is None:
            self._schema = pydantic_core.to_json(self._arguments_model.model_json_schema())
        schema: dict[str, Any] = pydantic_core.from_json(self._schema)
        return schema

    @override
    def declaration(self) -> types.FunctionDeclaration | None:
        """ADK's declaration, with the parameters replaced by the schema that is
        enforced, so the model sees the constraints it is held to. Built once per name
        (generating a JSON schema costs milliseconds); callers get a copy with a
        fresh schema, since ADK's callers may change what they get (the other fields
        are strings)."""
        cached = self._declaration
        if cached is None or cached.name != self.name:
            base = super().declaration()
            if base is None:
                return None
            cached = self._declaration = types.FunctionDeclaration(
                name=self.name, description=base.description
            )
        schema = self.parameters_json_schema()
        schema.pop("title", None)
        return cached.model_copy(update={"parameters_json_schema": schema})

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
                for err in exc.errors(include_url=False, include_input=False, include_context=False)
            ]
            raise ToolArgumentsError(self.name, problems) from None
        if self._values_model is not None:
            validated = self._values_model.model_validate_json(
                payload, strict=True, by_alias=False, by_name=True
            )
        return {name: getattr(validated, name) for name in validated.model_fields_set}

    @override
    def preprocess_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.validate_arguments(args)
        except ToolArgumentsError as error:
            raise _ArgumentsRejected(error) from None

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            return await super().run_async(args=args, tool_context=tool_context)
        except _ArgumentsRejected as rejected:
            # Not a failure of the tool: the model's arguments, reported back to it field
            # by field without echoing the (possibly large) values it sent.
            return tool_error(
                ToolErrorCode.INVALID_ARGUMENTS, self.name, problems=rejected.error.problems
            )
