"""Turns `YUXI_MODEL` into a model, or fails at start with a message that says how to fix it."""

from __future__ import annotations

import os

from google.adk.models.base_llm import BaseLlm
from google.adk.models.registry import LLMRegistry

from adk_yuxi.errors import YuxiError

from ._demo import DEMO_MODEL_NAME, DemoLlm
from ._react import REACT_PREFIX, ReactLlm

__all__ = ["MODEL_ENV", "ModelConfigError", "register_models", "resolve_model"]

MODEL_ENV = "YUXI_MODEL"

ACCEPTED_FORMS = (
    "unset or 'yuxi-demo' (the offline demo model); a name ADK's model registry resolves,"
    " such as 'gemini-2.5-flash' (with GOOGLE_API_KEY, or Vertex AI settings); or"
    " 'openai/<model>' for any OpenAI-compatible host (OpenAI, DeepSeek, Qwen, vLLM,"
    " Ollama) with OPENAI_BASE_URL and OPENAI_API_KEY; any of these after 'react/' for a"
    " text-only model that calls tools through a ReAct prompt"
)


class ModelConfigError(YuxiError, ValueError):
    """`YUXI_MODEL` names nothing usable; raised at start, never mid-run."""

    def __init__(self, value: str, reason: str) -> None:
        self.value = value
        self.reason = reason
        super().__init__(
            f"{MODEL_ENV}={value!r} cannot be used: {reason}. Accepted forms: {ACCEPTED_FORMS}."
        )


_registered = False


def register_models() -> None:
    """Makes 'yuxi-demo' resolvable by name through ADK's registry (idempotent)."""
    global _registered
    if not _registered:
        LLMRegistry.register(DemoLlm)
        _registered = True


def _openai_compatible(value: str, model_name: str) -> BaseLlm:
    if not model_name:
        raise ModelConfigError(value, "no model name after 'openai/'")
    api_key = os.environ.get("OPENAI_API_KEY", "").strip()
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip() or None
    if not api_key:
        raise ModelConfigError(
            value,
            "OPENAI_API_KEY is not set (local hosts such as Ollama or vLLM accept any"
            " non-empty key)",
        )
    from google.adk.integrations.openai import OpenAILlm

    from ._openai_client import GuardedAsyncOpenAI

    client = GuardedAsyncOpenAI(api_key=api_key, base_url=base_url)
    return OpenAILlm(model=model_name, api_key=api_key, base_url=base_url, client=client)


def _has_google_credentials() -> bool:
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return True
    vertex = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")
    return vertex and bool(os.environ.get("GOOGLE_CLOUD_PROJECT"))


def _react(value: str, inner: str) -> BaseLlm:
    if not inner or inner.startswith(REACT_PREFIX):
        raise ModelConfigError(value, f"'{REACT_PREFIX}' must be followed by one other model form")
    return ReactLlm(inner=resolve_model(inner))


def resolve_model(value: str | None = None) -> BaseLlm:
    """The model for an agent: `value`, else `$YUXI_MODEL`, else the offline demo model."""
    register_models()
    raw = os.environ.get(MODEL_ENV, "") if value is None else value
    name = raw.strip()
    if not name or name == DEMO_MODEL_NAME:
        return DemoLlm()
    if name.startswith(REACT_PREFIX):
        return _react(raw, name.removeprefix(REACT_PREFIX).strip())
    if name.startswith("openai/"):
        return _openai_compatible(raw, name.removeprefix("openai/").strip())
    try:
        cls = LLMRegistry.resolve(name)
    except (ValueError, ImportError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        reason = f"ADK's model registry does not know it ({first_line})"
        raise ModelConfigError(raw, reason) from None
    if cls.__name__ == "Gemini" and not _has_google_credentials():
        raise ModelConfigError(
            raw,
            "it is a Gemini model but neither GOOGLE_API_KEY nor Vertex AI settings"
            " (GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT) are set",
        )
    return LLMRegistry.new_llm(name)
