"""One embedding model's calls, for callers that can go on without its vectors (a
knowledge query answers lexically, a memory search by full text, a memory is stored by
text): a call that fails or takes too long gives None, and after a failure the model is
not asked again for a while (`Backoff`), so nobody pays for it on every question. A
text the endpoint refuses (`EmbeddingInputError`) gives None without that wait: it is
that text's fault, and the next caller's text may be asked at once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TypeVar

from ..observability._tracing import annotate
from ._backoff import Backoff
from ._embedding_http import EmbeddingInputError

__all__ = ["CALL_SECONDS", "ModelGuard"]

T = TypeVar("T")

CALL_SECONDS = 10.0
"""How long a caller waits for the model before going on without it: an endpoint
answering slowly (its client's timeout is a minute) would otherwise hold every question
that long. The offline model embeds a question in milliseconds."""

_KEY = "model"


class ModelGuard:
    """`call` for one model; ``fallback`` names what the callers go on with (logged),
    ``span_key`` the span attribute that says the model was skipped or failed."""

    def __init__(
        self,
        logger: logging.Logger,
        fallback: str,
        span_key: str,
        *,
        seconds: float = CALL_SECONDS,
        retry: Backoff | None = None,
    ) -> None:
        self.retry = retry or Backoff()
        self.seconds = seconds
        self._logger = logger
        self._fallback = fallback
        self._span_key = span_key

    def skipping(self) -> bool:
        """True while the model failed a moment ago: do not start a call."""
        if self.retry.waiting(_KEY):
            annotate({self._span_key: "skipped"})
            return True
        return False

    async def call(
        self, work: Awaitable[T], *, what: str | None = None, bounded: bool = True
    ) -> T | None:
        """`work`'s result, or None when it fails or (``bounded``) outlasts `seconds`: a
        thread it runs in goes on, nobody waits for it. ``what`` heads the log line."""
        try:
            if bounded:
                out = await asyncio.wait_for(asyncio.shield(work), self.seconds)
            else:
                out = await work
        except TimeoutError:
            self.failed(f"no answer within {self.seconds:g} s", what)
            return None
        except Exception as exc:  # any model's failure: the caller goes on without it
            if isinstance(exc, EmbeddingInputError) or isinstance(
                exc.__cause__, EmbeddingInputError
            ):
                self._logger.warning("%s; %s only", _said(exc, what), self._fallback)
                annotate({self._span_key: "refused"})
                return None
            self.failed(exc, what)
            return None
        self.retry.succeeded(_KEY)
        return out

    def failed(self, why: Exception | str, what: str | None = None) -> None:
        """Records a failure: the model is skipped for a while, and the log says so."""
        wait = self.retry.failed(_KEY)
        self._logger.warning("%s; %s only for %.0f s", _said(why, what), self._fallback, wait)
        annotate({self._span_key: "failed"})

    def succeeded(self) -> None:
        self.retry.succeeded(_KEY)


def _said(why: Exception | str, what: str | None) -> str:
    return str(why) if what is None else f"{what} ({why})"
