"""Model failures a user can act on, as error responses instead of tracebacks.

A model that cannot be reached, or a `YUXI_MODEL` that names nothing usable, ends the
turn with one error event: its `error_code` for code, and the same explanation as text
so `adk run` prints it and `adk web` shows it in the conversation. That text names the
model, its URL and the variables to check: right for the developer at the keyboard, not
for a caller of a hosted API, who gets `model_error_text(code)` instead (one public
sentence per code; see the host API).
"""

from __future__ import annotations

from google.adk.models.llm_response import LlmResponse
from google.genai import types

__all__ = [
    "MODEL_CONTEXT_EXCEEDED",
    "MODEL_EMPTY_REPLY",
    "MODEL_REJECTED",
    "MODEL_UNREACHABLE",
    "MODEL_UNUSABLE",
    "REACT_PARSE_FAILED",
    "error_response",
    "model_error_text",
]

MODEL_UNUSABLE = "YUXI_MODEL_UNUSABLE"
"""`YUXI_MODEL` (or the credentials it needs) cannot be used; nothing was sent."""

MODEL_UNREACHABLE = "MODEL_UNREACHABLE"
"""The model's host did not answer (refused, timed out, DNS)."""

MODEL_REJECTED = "MODEL_REJECTED"
"""The host answered but refused the request (key, model name, path)."""

MODEL_CONTEXT_EXCEEDED = "MODEL_CONTEXT_EXCEEDED"
"""The host refused the request as longer than the model's context window."""

MODEL_EMPTY_REPLY = "MODEL_EMPTY_REPLY"
"""The model answered with nothing: no text and no tool call."""

REACT_PARSE_FAILED = "REACT_PARSE_FAILED"
"""A text-only model's reply could not be read as a thought, a tool call or an answer."""

_PUBLIC_TEXTS = {
    MODEL_UNUSABLE: "the model is not configured on this server",
    MODEL_UNREACHABLE: "the model host could not be reached",
    MODEL_REJECTED: "the model host refused the request",
    MODEL_CONTEXT_EXCEEDED: "the conversation is too long for the model",
    MODEL_EMPTY_REPLY: "the model sent an empty reply",
    REACT_PARSE_FAILED: "the model's reply could not be understood",
}


def model_error_text(code: str | None) -> str | None:
    """The public sentence of a model error code (None: not a code of these models).
    It names no model, URL or variable: what a hosted API tells its callers."""
    return _PUBLIC_TEXTS.get(code) if code is not None else None


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
