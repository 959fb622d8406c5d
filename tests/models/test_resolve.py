"""`YUXI_MODEL` resolution: each accepted form, and a clear start-up error otherwise."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.integrations.openai import OpenAILlm
from google.adk.models.registry import LLMRegistry

from adk_yuxi.models import (
    DEFAULT_OPENAI_BASE_URL,
    MODEL_ENV,
    MODEL_UNUSABLE,
    DemoLlm,
    ModelConfigError,
    OpenAICompatibleLlm,
    UnusableModel,
    resolve_agent_model,
    resolve_model,
    warn_if_model_unusable,
)
from tests.conftest import final_texts, run_turn

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
    assert "openai/MODEL" in message and "yuxi-demo" in message


def test_bare_openai_names_need_the_same_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # ADK's registry serves 'gpt-4o' with its OpenAI adapter; without a key a run fails.
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY is not set"):
        resolve_model("gpt-4o")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    llm = resolve_model("gpt-4o")
    assert isinstance(llm, OpenAICompatibleLlm)
    assert llm.effective_base_url == DEFAULT_OPENAI_BASE_URL


@pytest.mark.parametrize(
    "base_url", ["localhost:11434", "http://", "ftp://host/v1", "http://h:port/v1", "127.0.0.1"]
)
def test_malformed_base_url_is_refused(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    with pytest.raises(ModelConfigError) as caught:
        resolve_model("openai/qwen-plus")
    assert f"OPENAI_BASE_URL={base_url!r} is not an http(s) URL" in str(caught.value)


@pytest.mark.parametrize("name", ["deepseek-chat", "qwen-plus", "llama3.1:8b"])
def test_bare_compatible_names_suggest_the_openai_prefix(name: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_model(name)
    assert f"write 'openai/{name}'" in str(caught.value)


def test_unknown_names_get_no_misleading_suggestion() -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_model("nonsense")
    assert "write 'openai/" not in str(caught.value)


async def test_agent_model_turns_a_bad_setting_into_an_error_event(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(MODEL_ENV, "bad-model-for-event-test")
    llm = resolve_agent_model()
    assert isinstance(llm, UnusableModel)
    resolve_agent_model()  # a second agent in the same process: still one line
    assert warn_if_model_unusable() is not None
    warned = capsys.readouterr().err
    assert warned.count("YUXI_MODEL='bad-model-for-event-test' cannot be used") == 1

    events = await run_turn(LlmAgent(name="a", model=llm), "hello")
    [event] = events[1:] if events[0].author == "user" else events
    assert event.error_code == MODEL_UNUSABLE
    assert event.error_message is not None
    assert event.error_message.startswith("YUXI_MODEL='bad-model-for-event-test' cannot be used")
    assert "openai/MODEL" in event.error_message
    assert final_texts(events) == [f"[{MODEL_UNUSABLE}] {event.error_message}"]


def test_agent_model_passes_good_settings_through() -> None:
    assert isinstance(resolve_agent_model(), DemoLlm)
    assert warn_if_model_unusable() is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("react/nonsense", "'nonsense' after 'react/': ADK's model registry does not know it"),
        ("react/openai/qwen", "'openai/qwen' after 'react/': OPENAI_API_KEY is not set"),
    ],
)
def test_a_bad_model_after_react_is_reported_as_the_user_set_it(
    monkeypatch: pytest.MonkeyPatch, value: str, reason: str
) -> None:
    monkeypatch.setenv(MODEL_ENV, value)
    with pytest.raises(ModelConfigError) as caught:
        resolve_model()
    assert caught.value.value == value
    assert str(caught.value).startswith(f"{MODEL_ENV}={value!r} cannot be used: {reason}")
