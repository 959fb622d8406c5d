"""How the suite shares two workers: the longest tests start first, one test at a time.

With two workers the wall time is bounded by whatever runs last: a four-minute test that
starts near the end makes the run four minutes longer. So the known-slow files (measured
with ``--durations``, heaviest first, in ``SLOW_FIRST``) are moved to the front of the
collection, and under ``-n`` the scheduler (``Scheduler``, in place of xdist's default
``load``, which hands each worker a quarter of the suite at once) gives each worker the
next test in that order when it is free. The files of ``ONE_WORKER`` share an expensive
module fixture (a real ``adk web`` process) and go whole to one worker instead of
starting it on both. (xdist's own ``xdist_group`` mark does nothing under pytest 9.)
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

SLOW_FIRST = (
    # file: summed seconds of its tests on a loaded machine (5 engineers on 2 cores)
    "tests/packaging/test_wheel_install.py",  # 256, one test: a wheel, a venv, serve
    "tests/docs/test_executable_docs.py",  # 481 over five pages; their venv is shared
    "tests/e2e/test_adk_run_knowledge.py",  # 138
    "tests/test_import_graph.py",  # 84
    "tests/e2e/test_web_ui_browser.py",  # 69
    "tests/artifacts/test_artifact_crashes.py",  # 60
    "tests/runtime/test_run_config.py",  # 58
    "tests/e2e/test_adk_run.py",  # 56
    "tests/documents/test_ocr.py",  # 54
    "tests/e2e/test_adk_web.py",  # 53
    "tests/packaging/test_core_without_extras.py",  # 52
    "tests/knowledge/test_server.py",  # 51
    "tests/host/test_exactly_once.py",  # 49
    "tests/samples/test_samples.py",  # 47
    "tests/host/test_api_agent_tree.py",  # 40
    "tests/base_tools/test_restart.py",  # 38
    "tests/e2e/test_adk_run_sql.py",  # 35
    "tests/e2e/test_adk_run_skilled.py",  # 34
    "tests/observability/test_serve_metrics.py",  # 31
    "tests/sessions/test_multiprocess.py",  # 29
    "tests/knowledge/test_index.py",  # 21
    "tests/e2e/test_adk_run_team.py",  # 20
    "tests/cli/test_yuxi_command.py",  # 19
    "tests/cli/test_operator_commands.py",  # 19
    "tests/host/test_api_serve.py",  # 18
    "tests/documents/test_ocr_parse_file.py",  # 17
    "tests/cli/test_yuxi_create.py",  # 17
    "tests/host/test_api_heartbeats.py",  # 16
    "tests/host/test_api_workers.py",  # 16
    "tests/host/test_api_serve_knowledge.py",  # 15
    "tests/e2e/test_adk_run_model_faults.py",  # 15
    "tests/e2e/test_adk_run_limits.py",  # 15
)


def slow_first(items: list[pytest.Item]) -> None:
    """Reorders ``items`` in place: files of ``SLOW_FIRST`` first, in its order, the rest
    as collected. The order is the same on every worker, as xdist requires."""
    rank = {path: index for index, path in enumerate(SLOW_FIRST)}
    last = len(SLOW_FIRST)
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], last))


ONE_WORKER = ("tests/e2e/test_adk_web.py",)


class Scheduler(LoadScopeScheduling):
    """One test a unit (a whole file for ``ONE_WORKER``), units in collection order."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return path if path in ONE_WORKER else nodeid


def make_scheduler(config: pytest.Config, log: object) -> Scheduler | None:
    """``Scheduler`` for ``-n``'s default ``--dist load``; another ``--dist`` is kept."""
    if config.getvalue("dist") != "load":
        return None
    config.option.loadscopereorder = False
    return Scheduler(config, log)
