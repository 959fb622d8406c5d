"""Tools that exist always but run only when their server-side configuration allows.

A web search tool is registered under a stable id whether or not a provider key is set;
whether a run gets it is decided at assembly, from the settings the host passed in (and
the environment). A binder turns those settings into the instance a run executes, or
says why it cannot; the runtime leaves an unavailable tool out of the run, for the model
and for execution alike, and logs one structured record per tool.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from google.adk.tools.base_tool import BaseTool

from adk_yuxi.errors import YuxiError

__all__ = ["ToolBinder", "ToolSettings", "ToolUnavailable", "log_unavailable"]

logger = logging.getLogger("adk_yuxi.tools.availability")

T = TypeVar("T")


class ToolUnavailable(YuxiError, RuntimeError):
    """A registered tool that cannot be bound with these settings (no key, bad value)."""

    def __init__(self, tool_id: str, reason: str) -> None:
        super().__init__(f"tool {tool_id!r} is not available: {reason}")
        self.tool_id = tool_id
        self.reason = reason


class ToolSettings:
    """The configuration tools are bound with: settings objects a host passes in, one per
    section type (e.g. `WebSettings`), over the process environment.

    Each section owner merges the two itself, with the host's explicitly set values
    winning over environment variables. The environment is read once, when this object
    is built, so a run's tools and its availability records agree.
    """

    def __init__(self, *sections: object, environ: Mapping[str, str] | None = None) -> None:
        self._sections: dict[type, object] = {}
        for section in sections:
            if type(section) in self._sections:
                raise ValueError(f"two settings sections of type {type(section).__name__}")
            self._sections[type(section)] = section
        self.environ: Mapping[str, str] = dict(os.environ if environ is None else environ)

    def section(self, kind: type[T]) -> T | None:
        """The section of type `kind` the host passed in, or None."""
        found = self._sections.get(kind)
        return found if isinstance(found, kind) else None

    def __repr__(self) -> str:
        # Sections hold credentials; a repr must never print them.
        names = ", ".join(sorted(t.__name__ for t in self._sections))
        return f"ToolSettings(sections=[{names}], environ=<{len(self.environ)} variables>)"


ToolBinder = Callable[[ToolSettings], BaseTool]
"""Returns the instance a run executes for these settings; raises `ToolUnavailable`."""


_reported: set[tuple[str, str]] = set()
_reported_lock = threading.Lock()


def log_unavailable(error: ToolUnavailable, *, requested: bool = True, **fields: Any) -> None:
    """The one availability record: `component=<tool id> available=false reason=...`.

    A tool an agent asked for is a WARNING each time it is left out. One nobody asked
    for (every registered tool is bound at each app build) is INFO, once per process
    per tool and reason, so an unconfigured optional tool does not flood the log.
    """
    if not requested:
        with _reported_lock:
            if (error.tool_id, error.reason) in _reported:
                return
            _reported.add((error.tool_id, error.reason))
    logger.log(
        logging.WARNING if requested else logging.INFO,
        "component=%s available=false reason=%s",
        error.tool_id,
        error.reason,
        extra={
            "component": error.tool_id,
            "available": False,
            "reason": error.reason,
            "requested": requested,
            **fields,
        },
    )
