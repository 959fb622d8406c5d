"""`ContextPolicy`: its defaults, how a deployer changes it or turns it off (in code and
in YAML), what a non-admin may not change, and how `build_app` wires it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from pydantic import ValidationError

from adk_yuxi.access import Role
from adk_yuxi.models import DemoLlm, DemoSummarizer, ModelConfigError
from adk_yuxi.runtime import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_COMPACT_AT_EVENTS,
    AgentConfig,
    AgentConfigError,
    ContextPolicy,
    GuardedSummarizer,
    build_app,
)
from adk_yuxi.testing import ScriptedLlm

from ._kit import Kit


def _config(text: str) -> AgentConfig:
    return AgentConfig.model_validate(yaml.safe_load(text))


def test_on_by_default_with_a_large_budget() -> None:
    policy = AgentConfig(name="a").context
    assert policy.compaction and policy.budget_tokens == DEFAULT_BUDGET_TOKENS
    assert policy.threshold_tokens == DEFAULT_BUDGET_TOKENS * 3 // 4
    assert policy.keep_recent_events == 8 and policy.summarizer_model is None
    assert policy.compact_at_events == DEFAULT_COMPACT_AT_EVENTS


@pytest.mark.parametrize(
    "text",
    ["name: a\ncontext: {compaction: off}", "name: a\ncontext: off", "name: a\ncontext: 'off'"],
)
def test_yaml_turns_it_off(text: str) -> None:
    assert _config(text).context == ContextPolicy(compaction=False) == ContextPolicy.off()


def test_yaml_changes_it() -> None:
    config = _config(
        "name: a\ncontext:\n  budget_tokens: 8000\n  compact_at_tokens: 5000\n"
        "  keep_recent_events: 2\n  summarizer_model: yuxi-demo\n"
    )
    assert config.context.threshold_tokens == 5000 and config.context.keep_recent_events == 2


@pytest.mark.parametrize(("text", "count"), [("300", 300), ("null", None)])
def test_yaml_sets_the_event_count(text: str, count: int | None) -> None:
    assert (
        _config(f"name: a\ncontext: {{compact_at_events: {text}}}").context.compact_at_events
        == count
    )


@pytest.mark.parametrize(
    "context",
    [
        {"budget_tokens": 1000, "compact_at_tokens": 2000},
        {"budget_tokens": 10},
        {"keep_recent_events": -1},
        {"keep_recent_events": 8, "compact_at_events": 8},
        {"compact_at_events": 0},
        {"compaction": "sometimes"},
        {"budget": 1000},
        "maybe",
    ],
)
def test_bad_values_are_refused(context: object) -> None:
    with pytest.raises(ValidationError) as error:
        AgentConfig.model_validate({"name": "a", "context": context})
    assert error.value.errors()[0]["loc"][0] == "context"


def test_a_user_may_not_change_the_policy(tmp_path: Path) -> None:
    user = Kit(tmp_path).principal(role=Role.USER)
    deployer = AgentConfig(name="a", context=ContextPolicy(budget_tokens=4000))
    with pytest.raises(AgentConfigError) as error:
        AgentConfig.from_user({"name": "a", "context": "off"}, user, deployer=deployer)
    assert [p[0] for p in error.value.problems] == ["context"]
    kept = AgentConfig.from_user({"name": "a"}, user, deployer=deployer)
    assert kept.context == deployer.context  # left out: the deployer's


def test_build_app_wires_the_policy(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    admin = kit.principal(role=Role.ADMIN)
    policy = ContextPolicy(budget_tokens=4000, keep_recent_events=3)
    demo = build_app(AgentConfig(name="a", context=policy), admin, model=DemoLlm())
    compaction = demo.events_compaction_config
    assert compaction is not None
    assert (compaction.token_threshold, compaction.event_retention_size) == (3000, 3)
    assert compaction.compaction_interval is None  # summaries roll up; no sliding window
    assert isinstance(compaction.summarizer, GuardedSummarizer)
    assert isinstance(compaction.summarizer.inner, DemoSummarizer)
    assert compaction.summarizer.inner.max_chars == policy.summary_max_chars

    scripted = build_app(AgentConfig(name="a", context=policy), admin, model=ScriptedLlm([]))
    inner = scripted.events_compaction_config.summarizer.inner  # type: ignore[union-attr]
    assert isinstance(inner, LlmEventSummarizer)  # the agent's own model

    smaller = policy.model_copy(update={"summarizer_model": "yuxi-demo"})
    chosen = build_app(AgentConfig(name="a", context=smaller), admin, model=ScriptedLlm([]))
    inner = chosen.events_compaction_config.summarizer.inner  # type: ignore[union-attr]
    assert isinstance(inner, DemoSummarizer)

    off = build_app(AgentConfig(name="a", context=ContextPolicy.off()), admin, model=DemoLlm())
    assert off.events_compaction_config is None


def test_an_unknown_summarizer_model_fails_at_build_time(tmp_path: Path) -> None:
    policy = ContextPolicy(summarizer_model="no-such-model-anywhere")
    with pytest.raises(ModelConfigError):
        build_app(
            AgentConfig(name="a", context=policy),
            Kit(tmp_path).principal(role=Role.ADMIN),
            model=DemoLlm(),
        )
