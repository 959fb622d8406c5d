"""Which tool results the offload plugin leaves whole: decided by what the tool *is*.

A name proves nothing: a deployer may register its own `load_skill` or `web_fetch`, and
a 100 KB result of it must be offloaded like any other. Exempt are only the
framework's own tool objects (ADK's final-answer, transfer and skill-loading tools, by
their class) and the platform's own implementations (by the function object, or for
the web tools, made anew for each binding, by the code of the function they wrap).
"""

from __future__ import annotations

import functools
import logging
from types import CodeType
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.set_model_response_tool import SetModelResponseTool
from google.adk.tools.skill_toolset import LoadSkillTool
from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool
from google.genai import types

__all__ = ["carries_media", "pages_own_output", "wants_whole_result"]

_FRAMEWORK_WHOLE = (SetModelResponseTool, TransferToAgentTool, LoadSkillTool)
"""ADK's tools whose answer the model must see whole (the final answer, a handoff, a
loaded skill)."""
logger = logging.getLogger("adk_yuxi.runtime.offload")


def _code(func: Any) -> CodeType | None:
    return getattr(func, "__code__", None)


@functools.cache
def _whole_codes() -> frozenset[CodeType]:
    """The platform's tools whose result is already a window or must be seen whole."""
    from ...tools.base.ask_user_question import ask_user_question
    from ...tools.base.read_tool_result import read_tool_result

    return frozenset(c for c in map(_code, (read_tool_result, ask_user_question)) if c)


@functools.cache
def _paged_codes() -> frozenset[CodeType]:
    """The platform's tools that bound and page their own results."""
    from ...web import web_fetch_tool, web_search_tool

    funcs: list[Any] = [web_fetch_tool(None).func, web_search_tool(None).func]
    try:
        from ...tools.builtin.documents import ocr_parse_file
    except ImportError:  # the documents extra is not installed: no such tool runs
        logger.debug("ocr_parse_file is not importable", exc_info=True)
    else:
        funcs.append(ocr_parse_file)
    return frozenset(c for c in map(_code, funcs) if c)


def _implementation(tool: BaseTool) -> CodeType | None:
    return _code(getattr(tool, "func", None))


def wants_whole_result(tool: BaseTool) -> bool:
    """The framework's or the platform's own tool whose result the model sees whole."""
    if isinstance(tool, _FRAMEWORK_WHOLE):
        return True
    code = _implementation(tool)
    return code is not None and code in _whole_codes()


def pages_own_output(tool: BaseTool) -> bool:
    """The platform's own web and document tools: they page their results themselves."""
    code = _implementation(tool)
    return code is not None and code in _paged_codes()


def carries_media(value: Any, depth: int = 0) -> bool:
    """Whether ADK hands part of this result to the model as media (a `Part` with
    bytes or a URI, returned as is, among its entries or one container further down):
    such a result reaches the model as parts, not as text, and is left to ADK. A text
    `Part` is not media."""
    if isinstance(value, types.Part):
        return value.inline_data is not None or value.file_data is not None
    if depth > 1 or not isinstance(value, dict | list | tuple):
        return False
    entries = value.values() if isinstance(value, dict) else value
    return any(carries_media(v, depth + 1) for v in entries)
