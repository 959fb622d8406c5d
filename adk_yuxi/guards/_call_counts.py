"""What the two loop guards share: a per-run count of identical tool calls, and the
ledger that ends the run at its next model call."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from typing_extensions import override

from ._budget import RepairLedger, remember
from ._run_scoped import RunScoped

__all__ = ["CallCountPlugin", "fingerprint", "shown_tool"]


def fingerprint(value: Any) -> str | None:
    """A digest of a tool's arguments or result; None for a value that has none (too
    deep, an int past Python's digit limit): such a call is never counted."""
    try:
        shown = json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        try:
            shown = repr(value)
        except (ValueError, RecursionError):
            return None
    return hashlib.sha256(shown.encode("utf-8", "surrogatepass")).hexdigest()


def shown_tool(tool: str) -> str:
    """How a stop's public text names a tool: its name when it is a plain identifier."""
    return f"`{tool}`" if tool.isidentifier() and len(tool) <= 64 else "a tool"


class CallCountPlugin(RunScoped, BasePlugin):
    """Counts identical calls per run; a subclass decides which calls count and halts
    the run through `ledger` at `repeat_limit`."""

    def __init__(self, ledger: RepairLedger, *, repeat_limit: int, name: str) -> None:
        if repeat_limit < 2:
            raise ValueError("repeat_limit must be at least 2")
        super().__init__(name=name)
        self.ledger = ledger
        self.repeat_limit = repeat_limit
        self._counts: dict[str, Counter[str]] = {}

    def count(self, run: str, tool: BaseTool, *parts: Any) -> int:
        """How often this run made this call (`tool` with `parts`: its arguments, and
        whatever else makes two calls the same), this one included; 0 when a part has
        no fingerprint."""
        shown = [fingerprint(part) for part in parts]
        if any(part is None for part in shown):
            return 0
        counts = self._counts.get(run)
        if counts is None:
            counts = Counter()
            remember(self._counts, run, counts)
        key = "\x00".join([tool.name, *(part or "" for part in shown)])
        counts[key] += 1
        return counts[key]

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        # A stand-alone budget ends the run itself; the runtime's leaves it to the runtime.
        return self.ledger.stop_response(callback_context)

    def end_run(self, invocation_id: str) -> None:
        self._counts.pop(invocation_id, None)
