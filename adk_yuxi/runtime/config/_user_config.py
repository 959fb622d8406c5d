"""Configs a user writes: the deployer's admin-only fields are a ceiling, not a default.

The config given to `build_app` or an `AgentCatalog` is the deployer's and binds every
user as written. A config a non-admin supplies (a future "my agents" page, say) passes
through `config_from_user` first: what it leaves out of the admin-only fields comes from
the deployer's config, a limit may only be lowered, and the model never changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ._config_error import AgentConfigError, validation_problems
from ._offload_config import ToolResultOffload

if TYPE_CHECKING:
    from ...access import Principal
    from ._config import AgentConfig, Limits

__all__ = ["admin_only_fields", "config_from_user"]

_CEILINGS = (
    "max_llm_calls",
    "max_tool_calls_per_turn",
    "max_tool_failures",
    "stop_after_same_failure",
    "stop_after_same_call",
)


def config_from_user(
    kind: type[AgentConfig],
    data: Mapping[str, Any] | AgentConfig,
    principal: Principal,
    *,
    deployer: AgentConfig | None = None,
) -> AgentConfig:
    """`data` as `principal` wrote it, bounded by `deployer` (by default a config of the
    same name with default limits and model). Admins' configs are taken as written.
    `kind` is `AgentConfig` (passed in, so this module and the config's do not import
    each other).
    Raises `AgentConfigError` naming each admin-only value the user may not set."""
    source = f"config of user {principal.user_id!r}"
    try:
        config = data if isinstance(data, kind) else kind.model_validate(data)
    except ValidationError as error:
        raise AgentConfigError(source, validation_problems(error)) from None
    if principal.is_admin:
        return config
    ceiling = deployer if deployer is not None else kind(name=config.name)
    given = config.model_fields_set
    problems: list[tuple[str, str]] = []
    if "model" in given and config.model != ceiling.model:
        problems.append(("model", "only an administrator chooses the model"))
    if "context" in given and config.context != ceiling.context:
        # A larger budget or compaction off costs tokens; a summarizer model, money.
        problems.append(("context", "only an administrator sets the context policy"))
    # The limits a user names replace the deployer's one by one; the rest stay.
    asked = config.limits
    limits = ceiling.limits.model_copy(
        update={f: getattr(asked, f) for f in asked.model_fields_set if "limits" in given}
    )
    problems += _raised_limits(limits, ceiling.limits)
    # An embedding retriever runs a model every model step: capacity, the deployer's.
    asked_retriever = None if config.tool_retrieval is None else config.tool_retrieval.retriever
    allowed = "bm25" if ceiling.tool_retrieval is None else ceiling.tool_retrieval.retriever
    if asked_retriever not in (None, "bm25", allowed):
        problems.append(
            ("tool_retrieval.retriever", "only an administrator chooses an embedding retriever")
        )
    offload = _offload(config.offload_tool_results, ceiling.offload_tool_results)
    if "offload_tool_results" in given:
        problems += _raised_offload(offload, ceiling.offload_tool_results)
    if problems:
        raise AgentConfigError(source, problems)
    kept = {f: getattr(ceiling, f) for f in admin_only_fields(kind) if f not in given}
    if "offload_tool_results" in given:
        kept["offload_tool_results"] = offload
    return config.model_copy(update={**kept, "limits": limits})


def admin_only_fields(kind: type[AgentConfig]) -> tuple[str, ...]:
    """The fields only an administrator sets (marked `admin_only` in their schema)."""
    return tuple(
        name
        for name, field in kind.model_fields.items()
        if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("admin_only")
    )


def _raised_limits(asked: Limits, ceiling: Limits) -> list[tuple[str, str]]:
    problems = [
        (f"limits.{name}", f"may not exceed {getattr(ceiling, name)} (the deployer's limit)")
        for name in _CEILINGS
        if getattr(asked, name) > getattr(ceiling, name)
    ]
    # "generate" spends one more model call than "force": it is the higher setting.
    if asked.early_stopping == "generate" and ceiling.early_stopping == "force":
        problems.append(
            ("limits.early_stopping", "may not be 'generate' under the deployer's 'force'")
        )
    return problems


def _offload(
    asked: ToolResultOffload | None, ceiling: ToolResultOffload | None
) -> ToolResultOffload | None:
    """The fields a user names replace the deployer's one by one, as for the limits."""
    if asked is None or ceiling is None:
        return asked
    return ceiling.model_copy(update={f: getattr(asked, f) for f in asked.model_fields_set})


def _raised_offload(
    asked: ToolResultOffload | None, ceiling: ToolResultOffload | None
) -> list[tuple[str, str]]:
    """A user may offload more (a lower threshold, a shorter preview), never less."""
    if ceiling is None:
        return []
    field = "offload_tool_results"
    if asked is None:
        return [(field, "may not be switched off (the deployer offloads large results)")]
    problems = [
        (f"{field}.{name}", f"may not exceed {getattr(ceiling, name)} (the deployer's setting)")
        for name in ("max_inline_bytes", "preview_chars")
        if getattr(asked, name) > getattr(ceiling, name)
    ]
    extra = sorted(set(asked.exempt_tools) - set(ceiling.exempt_tools))
    if extra:
        problems.append((f"{field}.exempt_tools", f"may not exempt {extra[0]!r}"))
    return problems
