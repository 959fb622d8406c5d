"""Turns `YUXI_MODEL` into a model, or fails with a message that says how to fix it.

The checks are the ones a run depends on (a name some class serves, the credentials
and base URL that class needs), so `yuxi model` and an agent's start agree.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from google.adk.integrations.openai import OpenAILlm
from google.adk.models.base_llm import BaseLlm
from google.adk.models.registry import LLMRegistry

from adk_yuxi.errors import YuxiError

from ._context_window import ContextSettingError, configured_context_window
from ._demo import DEMO_MODEL_NAME, DemoLlm
from ._openai import OpenAICompatibleLlm
from ._openai_client import GuardedAsyncOpenAI
from ._react import REACT_PREFIX, ReactLlm

__all__ = ["MODEL_ENV", "ModelConfigError", "register_models", "resolve_model"]

MODEL_ENV = "YUXI_MODEL"

ACCEPTED_FORMS = (
    "unset or 'yuxi-demo' (the offline demo model); a name ADK's model registry resolves,"
    " such as 'gemini-2.5-flash' (with GOOGLE_API_KEY, or Vertex AI settings); or"
    " 'openai/MODEL' (e.g. 'openai/deepseek-chat') for any OpenAI-compatible host"
    " (OpenAI, DeepSeek, Qwen, vLLM, Ollama) with OPENAI_BASE_URL and OPENAI_API_KEY;"
    " any of these after 'react/' for a text-only model that calls tools through a"
    " ReAct prompt"
)

# Bare names people type for models served over the OpenAI protocol.
_OPENAI_COMPATIBLE_FAMILIES = re.compile(
    r"(deepseek|qwen|qwq|llama|mistral|mixtral|glm|moonshot|kimi|yi|baichuan|doubao|"
    r"ernie|hunyuan|minimax|phi|gemma|o\d)[-\w.:]*",
    re.I,
)


class ModelConfigError(YuxiError, ValueError):
    """`YUXI_MODEL` names nothing usable; raised before any request is sent."""

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


def _base_url(value: str) -> str | None:
    raw = os.environ.get("OPENAI_BASE_URL", "").strip()
    if not raw:
        return None
    try:
        parts = urlsplit(raw)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018  (raises ValueError on a malformed port)
    except ValueError:
        valid = False
    if not valid:
        raise ModelConfigError(
            value,
            f"OPENAI_BASE_URL={raw!r} is not an http(s) URL with a host"
            " (e.g. 'https://api.deepseek.com/v1' or 'http://127.0.0.1:11434/v1')",
        )
    return raw


def _openai_compatible(value: str, model_name: str) -> OpenAICompatibleLlm:
    if not model_name:
        raise ModelConfigError(value, "no model name after 'openai/'")
    base_url = _base_url(value)
    api_key = os.environ.get("OPENAI_API_KEY", "").strip()
    if not api_key:
        raise ModelConfigError(
            value,
            "OPENAI_API_KEY is not set (local hosts such as Ollama or vLLM accept any"
            " non-empty key)",
        )
    try:
        window = configured_context_window()
    except ContextSettingError as exc:
        raise ModelConfigError(value, str(exc)) from None
    client = GuardedAsyncOpenAI(api_key=api_key, base_url=base_url)
    return OpenAICompatibleLlm(
        model=model_name,
        api_key=api_key,
        base_url=base_url,
        client=client,
        context_window=window,
    )


def _has_google_credentials() -> bool:
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return True
    vertex = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")
    return vertex and bool(os.environ.get("GOOGLE_CLOUD_PROJECT"))


def _react(value: str, inner: str) -> BaseLlm:
    if not inner or inner.startswith(REACT_PREFIX):
        raise ModelConfigError(value, f"'{REACT_PREFIX}' must be followed by one other model form")
    try:
        return ReactLlm(inner=resolve_model(inner))
    except ModelConfigError as exc:  # reported with the value the user set
        raise ModelConfigError(value, f"{inner!r} after '{REACT_PREFIX}': {exc.reason}") from None


def _unknown(raw: str, name: str, exc: Exception) -> ModelConfigError:
    first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    reason = f"ADK's model registry does not know it ({first_line})"
    if "/" not in name and _OPENAI_COMPATIBLE_FAMILIES.fullmatch(name):
        reason += f"; for an OpenAI-compatible host write 'openai/{name}'"
    return ModelConfigError(raw, reason)


def resolve_model(value: str | None = None) -> BaseLlm:
    """The model for an agent: `value`, else `$YUXI_MODEL`, else the offline demo model.

    Raises `ModelConfigError` for a name no class serves and for missing credentials
    or a malformed base URL, the things that would otherwise fail at the first turn.
    """
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
        raise _unknown(raw, name, exc) from None
    if issubclass(cls, DemoLlm):
        return LLMRegistry.new_llm(name)
    if issubclass(cls, OpenAILlm):
        # ADK serves bare 'gpt-…' / 'o1-…' names with its OpenAI adapter: same needs.
        return _openai_compatible(raw, name)
    if cls.__name__ == "Gemini" and not _has_google_credentials():
        raise ModelConfigError(
            raw,
            "it is a Gemini model but neither GOOGLE_API_KEY nor Vertex AI settings"
            " (GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT) are set",
        )
    return LLMRegistry.new_llm(name)
