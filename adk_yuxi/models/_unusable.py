"""The model of a shipped agent folder: an unusable `YUXI_MODEL` is reported, not raised.

Raising while ADK imports an agent leaves `adk web` answering HTTP 500 with a traceback
in the server log and `adk run` printing a traceback wall. Instead the agent loads with
`UnusableModel`, which answers every turn with the configuration error as an error
event, and one warning line is printed when the problem is first seen.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from typing_extensions import override

from ._errors import MODEL_UNUSABLE, error_response
from ._resolve import ModelConfigError, resolve_model

__all__ = ["UnusableModel", "resolve_agent_model", "warn_if_model_unusable"]

_warned: set[str] = set()


class UnusableModel(BaseLlm):
    """Stands in for a model that could not be configured; sends nothing anywhere."""

    model: str = "unusable"
    problem: str
    CODE: ClassVar[str] = MODEL_UNUSABLE

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield error_response(MODEL_UNUSABLE, self.problem)


def _warn_once(error: ModelConfigError) -> None:
    message = str(error)
    if message in _warned:
        return
    _warned.add(message)
    line = f"[adk_yuxi] {message} Agents answer every message with this error until it is fixed."
    # stderr, not the log: `adk run` sends logging to a file nobody is watching, and
    # `adk web` logs to stderr too, where a second copy would only add noise.
    print(line, file=sys.stderr, flush=True)


def warn_if_model_unusable(value: str | None = None) -> ModelConfigError | None:
    """Checks the model setting now (e.g. when a server starts); prints one line if bad."""
    try:
        resolve_model(value)
    except ModelConfigError as error:
        _warn_once(error)
        return error
    return None


def resolve_agent_model(value: str | None = None) -> BaseLlm:
    """`resolve_model`, except that an unusable setting gives an `UnusableModel`."""
    try:
        return resolve_model(value)
    except ModelConfigError as error:
        _warn_once(error)
        return UnusableModel(problem=str(error))
