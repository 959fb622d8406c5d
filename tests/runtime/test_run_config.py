"""The host's `RunConfig`: ADK's cheaper stable telemetry only while nothing records."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from google.adk.agents.run_config import RunConfig

from adk_yuxi.runtime import host_run_config, telemetry_recorded
from adk_yuxi.sessions import SessionWindow


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
