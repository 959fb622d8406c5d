"""`YUXI_MODEL` resolution: each accepted form, and a clear start-up error otherwise."""

from __future__ import annotations

import pytest
from google.adk.integrations.openai import OpenAILlm
from google.adk.models.registry import LLMRegistry

from adk_yuxi.models import MODEL_ENV, DemoLlm, ModelConfigError, resolve_model

CREDENTIAL_VARS = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (MODEL_ENV, *CREDENTIAL_VARS):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("value", ["", "   ", "yuxi-demo"])
def test_unset_or_demo_gives_the_demo_model(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(MODEL_ENV, value)
    assert isinstance(resolve_model(), DemoLlm)


def test_demo_model_name_resolves_through_adk_registry() -> None:
    resolve_model()
    assert LLMRegistry.resolve("yuxi-demo") is DemoLlm


def test_openai_compatible_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_ENV, "openai/deepseek-chat")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    llm = resolve_model()
    assert isinstance(llm, OpenAILlm)
    assert (llm.model, llm.base_url, llm.api_key) == ("deepseek-chat", "http://127.0.0.1:9/v1", "k")


def test_gemini_with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    llm = resolve_model("gemini-2.5-flash")
    assert type(llm).__name__ == "Gemini"
    assert llm.model == "gemini-2.5-flash"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("no-such-model", "does not know it"),
        ("openai/", "no model name"),
        ("openai/gpt-4o", "OPENAI_API_KEY is not set"),
        ("gemini-2.5-flash", "GOOGLE_API_KEY"),
    ],
)
def test_unusable_names_fail_naming_the_variable_and_forms(
    monkeypatch: pytest.MonkeyPatch, value: str, reason: str
) -> None:
    monkeypatch.setenv(MODEL_ENV, value)
    with pytest.raises(ModelConfigError) as caught:
        resolve_model()
    message = str(caught.value)
    assert message.startswith(f"YUXI_MODEL={value!r} cannot be used")
    assert reason in message
    assert "openai/<model>" in message and "yuxi-demo" in message
