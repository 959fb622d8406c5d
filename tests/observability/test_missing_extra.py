"""Without the `observability` extra, asking for metrics is one line naming it; nothing
of the server starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging._blocked import run_without_extras

pytestmark = pytest.mark.slow

LINE = (
    "Error: Serving metrics for Prometheus needs the 'prometheus-client' package, which is"
    " not installed: pip install 'adk-yuxi[observability]'"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "api", "--agents", "agent.yaml", "--metrics-port", "9464"],
        ["serve", "knowledge", "--metrics-path", "/metrics"],
    ],
)
def test_metrics_without_the_extra_is_one_line(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "agent.yaml").write_text("name: helper\ndescription: Helps.\n")
    done = run_without_extras(
        f"""
        from adk_yuxi.cli import main
        main({argv!r}, prog_name="yuxi")
        """,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [LINE]
