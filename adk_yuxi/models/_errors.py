"""Model failures a user can act on, as error responses instead of tracebacks.

A model that cannot be reached, or a `YUXI_MODEL` that names nothing usable, ends the
turn with one error event: its `error_code` for code, and the same explanation as text
so `adk run` prints it and `adk web` shows it in the conversation.
"""

from __future__ import annotations

from google.adk.models.llm_response import LlmResponse
from google.genai import types

__all__ = ["MODEL_REJECTED", "MODEL_UNREACHABLE", "MODEL_UNUSABLE", "error_response"]

MODEL_UNUSABLE = "YUXI_MODEL_UNUSABLE"
"""`YUXI_MODEL` (or the credentials it needs) cannot be used; nothing was sent."""

MODEL_UNREACHABLE = "MODEL_UNREACHABLE"
"""The model's host did not answer (refused, timed out, DNS)."""

MODEL_REJECTED = "MODEL_REJECTED"
"""The host answered but refused the request (key, model name, path)."""


def error_response(code: str, message: str) -> LlmResponse:
    """The response that ends the turn; it carries no function call, so the flow stops."""
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=f"[{code}] {message}")]),
        error_code=code,
        # Nothing was generated; saying so keeps ADK from warning about missing usage.
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=0, candidates_token_count=0, total_token_count=0
        ),
        error_message=message,
        turn_complete=True,
    )
