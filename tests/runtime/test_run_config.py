"""The host's `RunConfig`: ADK's cheaper stable telemetry only while nothing records."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.run_config import RunConfig
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.telemetry.context import TelemetryConfig
from google.genai import types

from adk_yuxi.access import Role
from adk_yuxi.runtime import AgentConfig, Toolbox, build_app, host_run_config, telemetry_recorded
from adk_yuxi.sessions import SessionWindow
from adk_yuxi.testing import ScriptedLlm

from ._kit import USER, Kit


def test_without_providers_runs_ask_for_the_stable_semconv() -> None:
    # In a fresh process: the span tests set a tracer provider for the rest of theirs.
    assert _in_fresh_process("") == "False False"
    if telemetry_recorded():
        return
    config = host_run_config()
    assert config.telemetry is not None
    assert config.telemetry.should_use_experimental_genai_semconv is False
    # Everything else is ADK's default, but for the windowed session read.
    assert isinstance(config.get_session_config, SessionWindow)
    assert config.get_session_config.num_recent_events is None
    assert config.get_session_config.after_timestamp is None
    own = {"telemetry", "get_session_config"}
    assert config.model_dump(exclude=own) == RunConfig().model_dump(exclude=own)


def test_with_providers_runs_read_the_window_too() -> None:
    out = _in_fresh_process(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        trace.set_tracer_provider(TracerProvider())
        from adk_yuxi.runtime import host_run_config
        from adk_yuxi.sessions import SessionWindow
        assert isinstance(host_run_config().get_session_config, SessionWindow)
        """
    )
    assert out == "True True"


def test_each_run_gets_its_own_config() -> None:
    first, second = host_run_config(), host_run_config()
    assert first is not second
    first.max_llm_calls = 3
    assert second.max_llm_calls == RunConfig().max_llm_calls
    assert first.get_session_config is not second.get_session_config


def _in_fresh_process(setup: str) -> str:
    script = textwrap.dedent(setup) + textwrap.dedent(
        """
        from adk_yuxi.runtime import host_run_config, telemetry_recorded
        print(telemetry_recorded(), host_run_config().telemetry is None)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_an_installed_tracer_provider_keeps_adks_default() -> None:
    # A provider set after import counts too: the decision is made per run.
    out = _in_fresh_process(
        """
        import adk_yuxi.runtime
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        trace.set_tracer_provider(TracerProvider())
        """
    )
    assert out == "True True"


def test_an_installed_logger_provider_keeps_adks_default() -> None:
    out = _in_fresh_process(
        """
        from opentelemetry import _logs
        from opentelemetry.sdk._logs import LoggerProvider
        _logs.set_logger_provider(LoggerProvider())
        """
    )
    assert out == "True True"


def test_a_meter_provider_alone_keeps_the_stable_semconv() -> None:
    # ADK's metrics do not depend on the semconv choice: only spans and logs do.
    out = _in_fresh_process(
        """
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        metrics.set_meter_provider(MeterProvider())
        """
    )
    assert out == "False False"


class _SeenConfig(BasePlugin):
    """Records the run config each model call runs under."""

    def __init__(self) -> None:
        super().__init__(name="seen_config")
        self.configs: list[RunConfig | None] = []

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        self.configs.append(callback_context.run_config)
        return None


async def _run_with(run_config: RunConfig | None, tmp_path: Path) -> RunConfig | None:
    kit = Kit(tmp_path)
    seen = _SeenConfig()
    app = build_app(
        AgentConfig(name="a", tools=()),
        kit.principal(role=Role.ADMIN),
        model=ScriptedLlm(["fine"]),
        toolbox=Toolbox(registry=kit.registry),
        capabilities=[seen],
    )
    sessions = InMemorySessionService()
    runner = Runner(app=app, session_service=sessions)
    await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    async for _ in runner.run_async(
        user_id=USER, session_id="s", new_message=message, run_config=run_config
    ):
        pass
    await runner.close()
    assert len(seen.configs) == 1
    return seen.configs[0]


async def test_a_run_without_run_config_gets_the_hosts_telemetry_choice(tmp_path: Path) -> None:
    config = await _run_with(None, tmp_path)
    assert config is not None
    if telemetry_recorded():  # another test installed a provider: ADK's default stays
        assert config.telemetry is None
    else:
        assert config.telemetry is not None
        assert config.telemetry.should_use_experimental_genai_semconv is False


async def test_a_run_configs_own_telemetry_is_kept_and_not_changed(tmp_path: Path) -> None:
    mine = RunConfig(max_llm_calls=7)
    config = await _run_with(mine, tmp_path)
    assert mine.telemetry is None  # the caller's object is left alone
    assert config is not None and config.max_llm_calls == 7
    chosen = TelemetryConfig(genai_semconv_stability_opt_in="experimental")
    config = await _run_with(RunConfig(telemetry=chosen), tmp_path)
    assert config is not None and config.telemetry == chosen
