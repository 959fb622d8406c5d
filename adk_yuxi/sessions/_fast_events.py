"""A faster validator for ``Event`` JSON, compiled from ``Event``'s own core schema.

It takes a copy of ``Event.__pydantic_core_schema__`` (public pydantic API), drops
exactly the Python hooks in ``_SKIPPED_HOOKS`` (all other validators stay),
replaces each plain ``model`` node by its fields validator followed by
``_Assemble`` (set up as ``model_construct`` does), and validates the tree with
one config. The result is a real ``Event``, but not a drop-in validator:
``_event_codec`` uses it only for rows proven to read back the same, under the
same ``FAST_CODEC``. Why and what it saves: ``docs/design/fast-events.md``.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import metadata
from typing import Any

from google.adk.events.event import Event
from google.genai import types
from pydantic_core import SchemaValidator

from .._adk import EVENT_DECODE_SKIPPED_HOOKS

__all__ = ["FAST_CODEC", "fast_event_list_validator", "fast_event_validator"]

# Bump when the schema rewrite below changes: rows proven under the old rules
# then take the validating path until a read proves them again.
_REWRITE_VERSION = 1
_PACKAGES = ("google-adk", "google-genai", "pydantic", "pydantic-core")
# (module, qualified name) of the validators left out; see the module docstring.
_SKIPPED_HOOKS = EVENT_DECODE_SKIPPED_HOOKS
_SKIPPED_INITS: frozenset[type] = frozenset({types.Part})
_CONFIG: dict[str, Any] = {
    "val_json_bytes": "base64",
    "validate_by_alias": True,
    "validate_by_name": True,
}
_object_setattr = object.__setattr__


def _fingerprint() -> str:
    versions = [str(_REWRITE_VERSION)]
    for package in _PACKAGES:
        try:
            versions.append(f"{package}={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package}=?")
    return hashlib.sha256(";".join(versions).encode()).hexdigest()[:16]


FAST_CODEC = _fingerprint()
"""Names the rewrite and library versions a row's fast-path proof holds for."""


def _assembler(cls: type[Any], post_init: str | None) -> Any:
    """Turns a fields validator's ``(dict, extra, fields_set)`` into an instance.

    This runs once per model instance, so it is a plain closure with no branches
    beyond ``model_post_init``, set up the way ``model_construct`` sets one up.
    """
    new: Any = cls.__new__
    setattr_ = _object_setattr

    def assemble(value: tuple[dict[str, Any], dict[str, Any] | None, set[str]]) -> Any:
        model = new(cls)
        setattr_(model, "__dict__", value[0])
        setattr_(model, "__pydantic_fields_set__", value[2])
        setattr_(model, "__pydantic_extra__", value[1])
        setattr_(model, "__pydantic_private__", None)
        return model

    if not post_init:
        return assemble

    def assemble_and_post_init(
        value: tuple[dict[str, Any], dict[str, Any] | None, set[str]],
    ) -> Any:
        model = assemble(value)
        getattr(model, post_init)(None)
        return model

    return assemble_and_post_init


def _skipped(node: dict[str, Any]) -> bool:
    if node.get("type") not in ("function-before", "function-after", "function-wrap"):
        return False
    function = node.get("function", {}).get("function")
    function = getattr(function, "__func__", function)
    key = (getattr(function, "__module__", None), getattr(function, "__qualname__", None))
    return key in _SKIPPED_HOOKS


def _has_skipped_hook(schema: Any) -> bool:
    """Whether the validator chain wrapped around a model's fields holds a skipped hook."""
    while isinstance(schema, dict) and str(schema.get("type", "")).startswith("function-"):
        if _skipped(schema):
            return True
        schema = schema.get("schema")
    return False


def _model(node: dict[str, Any]) -> dict[str, Any]:
    inner = _rewrite(node["schema"])
    skipped_init = bool(node.get("custom_init")) and node["cls"] in _SKIPPED_INITS
    replace = (
        (skipped_init or _has_skipped_hook(node["schema"]))
        and inner.get("type") == "model-fields"
        and not node.get("root_model")
        and not node.get("strict")
        and not node.get("frozen")
        and (not node.get("custom_init") or skipped_init)
    )
    if not replace:
        # pydantic-core will use the class's own, complete validator here (its
        # "prebuilt" reuse): already Rust all the way unless hooks sit deeper.
        return {**node, "schema": inner}
    extra = node.get("config", {}).get("extra_fields_behavior")
    if extra is not None and "extra_behavior" not in inner:
        inner = {**inner, "extra_behavior": extra}
    out: dict[str, Any] = {
        "type": "function-after",
        "function": {"type": "no-info", "function": _assembler(node["cls"], node.get("post_init"))},
        "schema": inner,
    }
    if "ref" in node:
        out["ref"] = node["ref"]
    return out


def _rewrite(node: Any) -> Any:
    if isinstance(node, list):
        return [_rewrite(item) for item in node]
    if not isinstance(node, dict):
        return node
    if _skipped(node):
        return _rewrite(node["schema"])
    if node.get("type") == "model":
        config = node.get("config", {})
        if config.get("val_json_bytes", "base64") != "base64":
            raise ValueError(f"{node['cls'].__name__} reads bytes from JSON differently")
        return _model(node)
    # Serializer schemas are not used for validation; keep them as they are.
    return {
        key: value if key == "serialization" else _rewrite(value) for key, value in node.items()
    }


@functools.cache
def _event_schema() -> Any:
    return _rewrite(Event.__pydantic_core_schema__)


@functools.cache
def fast_event_validator() -> SchemaValidator:
    """Validates one event's JSON; see the module docstring for what it skips."""
    return SchemaValidator(_event_schema(), _CONFIG)  # type: ignore[arg-type]


@functools.cache
def fast_event_list_validator() -> SchemaValidator:
    """The same for a JSON array of events, one call for a run of rows."""
    return SchemaValidator({"type": "list", "items_schema": _event_schema()}, _CONFIG)  # type: ignore[arg-type]
