"""A scripted model held at a gate: a test sees a turn in flight (a stream open, a run
``running``) for as long as it needs, without sleeping."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import PrivateAttr
from typing_extensions import override

from ._scripted import ScriptedLlm

__all__ = ["GatedLlm"]


class GatedLlm(ScriptedLlm):
    """A :class:`ScriptedLlm` whose calls after the first ``free`` wait until ``gate`` is set.

    The gate is a ``threading.Event`` so a test thread (an HTTP client, a served API in
    another thread) can open it; a call waits at most ``timeout`` seconds, then plays on.
    """

    _gate: threading.Event = PrivateAttr()
    _free: int = PrivateAttr(default=1)
    _timeout: float = PrivateAttr(default=30.0)

    def __init__(
        self,
        script: Sequence[Any] = (),
        gate: threading.Event | None = None,
        *,
        free: int = 1,
        timeout: float = 30.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(script, **kwargs)
        self._gate = gate if gate is not None else threading.Event()
        self._free = free
        self._timeout = timeout

    @property
    def gate(self) -> threading.Event:
        return self._gate

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if len(self.requests) >= self._free:
            await asyncio.to_thread(self._gate.wait, self._timeout)
        async for response in super().generate_content_async(llm_request, stream):
            yield response
