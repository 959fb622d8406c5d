"""Every app `build_app` assembles carries the always-on guards, whichever way it is
built: call repair, the charging of returned tool errors with its stop for a repeated
failing call, and the retry of a call too long for the model's context."""

from __future__ import annotations

from pathlib import Path

from adk_yuxi.guards import CallRepairPlugin, ContextOverflowPlugin, ReturnedFailurePlugin
from adk_yuxi.runtime import AgentConfig, Limits, build_app
from adk_yuxi.testing import ScriptedLlm
from tests.runtime._kit import Kit


def test_every_built_app_has_the_always_on_guards(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    config = AgentConfig(name="a", tools=("echo",), limits=Limits(stop_after_same_failure=5))
    app = build_app(config, kit.principal(), registry=kit.registry, model=ScriptedLlm([]))
    kinds = [type(p) for p in app.plugins]
    for guard in (ContextOverflowPlugin, CallRepairPlugin, ReturnedFailurePlugin):
        assert kinds.count(guard) == 1, kinds
    [failures] = [p for p in app.plugins if isinstance(p, ReturnedFailurePlugin)]
    assert failures.repeat_limit == 5
    # After the authorization plugin, which decides every call first.
    assert kinds.index(ContextOverflowPlugin) > 0
