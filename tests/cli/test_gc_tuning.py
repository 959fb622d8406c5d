"""The server processes' collector settings, each checked in a fresh interpreter
(freezing the test process's heap would change every later test)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from adk_yuxi.cli import main

PROBE = """
import gc, json, sys
from adk_yuxi.cli._gc import tune_for_serving
before = gc.get_threshold()
tune_for_serving(int(sys.argv[1]))
print(json.dumps({"before": before, "after": gc.get_threshold(), "frozen": gc.get_freeze_count()}))
"""


def _probe(threshold: int) -> dict[str, list[int] | int]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(threshold)], capture_output=True, text=True, check=True
    )
    result: dict[str, list[int] | int] = json.loads(out.stdout)
    return result


def test_serving_freezes_the_startup_heap_and_raises_the_threshold() -> None:
    probed = _probe(50_000)
    assert probed["after"] == [50_000, 50, 100]
    assert isinstance(probed["frozen"], int) and probed["frozen"] > 1000


def test_zero_keeps_cpythons_defaults() -> None:
    probed = _probe(0)
    assert probed["after"] == probed["before"]
    assert probed["frozen"] == 0


def test_a_negative_threshold_is_refused() -> None:
    from adk_yuxi.cli._gc import tune_for_serving

    with pytest.raises(ValueError, match="threshold"):
        tune_for_serving(-1)


@pytest.mark.parametrize("command", [["serve", "api", "--agents", "."], ["serve", "knowledge"]])
def test_the_serve_commands_refuse_a_negative_threshold(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--gc-threshold", "-5"])
    assert result.exit_code == 2
    assert "--gc-threshold" in result.output
