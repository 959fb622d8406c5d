"""The `RunConfig` a host passes to `Runner.run_async`: ADK's defaults, telemetry aside.

ADK builds its GenAI telemetry for every model call whether or not anything records
it. Its default (experimental) semantic conventions turn the whole request (messages,
system instruction, every tool declaration) into attribute values; the stable ones
cost about half. With no OpenTelemetry tracer or logger provider installed, neither
output goes anywhere, so a host asks for the cheaper one; once one is set (by the
operator, before or after start) runs get ADK's default again. A meter provider alone
does not count: ADK's metrics are the same under both conventions.

Every run also reads its session through a window (``SessionWindow``): from the latest
compaction on, so a turn reads O(window) events from ``SqlSessionService`` instead of
the whole history, and the model gets exactly the contents a full read would give it.

Runs that no host starts (``adk run``, ``adk web``, a user's ``Runner.run_async``
without a run config) get the same two things without a run config: the session
service windows the Runner's own reads (``SqlSessionService(window_runs=True)``), and
``RunDefaultsPlugin``, in every App ``build_app`` assembles, asks for the cheaper
telemetry for a run whose config leaves it unset, under the same condition.
"""

from __future__ import annotations

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.run_config import RunConfig
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.telemetry.context import TelemetryConfig
from google.genai import types
from opentelemetry import _logs, trace
from typing_extensions import override

from ...sessions import SessionWindow

__all__ = ["RunDefaultsPlugin", "host_run_config", "telemetry_recorded"]

_UNRECORDED = RunConfig(
    telemetry=TelemetryConfig(genai_semconv_stability_opt_in="stable"),
    get_session_config=SessionWindow(),
)


def _api_only(provider: object, api_module: str) -> bool:
    # The API's own providers (the proxy before one is set, the no-op) record nothing.
    return type(provider).__module__.startswith(api_module)


def telemetry_recorded() -> bool:
    """Whether this process has an OpenTelemetry tracer or logger provider (what the
    semconv choice changes)."""
    return not (
        _api_only(trace.get_tracer_provider(), "opentelemetry.trace")
        and _api_only(_logs.get_logger_provider(), "opentelemetry._logs")
    )


def host_run_config() -> RunConfig:
    """A fresh `RunConfig` for one run (ADK's callers may change the one they get)."""
    if telemetry_recorded():
        return RunConfig(get_session_config=SessionWindow())
    return _UNRECORDED.model_copy(deep=True)


class RunDefaultsPlugin(BasePlugin):
    """The host's telemetry choice for runs started without one (``adk run``, ``adk
    web``, a user's Runner): the stable GenAI semconv while nothing records it. A run
    config that sets ``telemetry`` keeps it; the caller's config object is not changed."""

    def __init__(self) -> None:
        super().__init__(name="yuxi_run_defaults")

    @override
    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        config = invocation_context.run_config
        if config is not None and config.telemetry is None and not telemetry_recorded():
            invocation_context.run_config = config.model_copy(
                update={"telemetry": _UNRECORDED.telemetry}
            )
        return None
