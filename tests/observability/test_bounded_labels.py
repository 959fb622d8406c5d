"""Label values cannot be multiplied from outside: tool names a model made up become
`_unknown`, invented HTTP methods `_OTHER`, in adk_yuxi's instruments and in ADK's own
(`gen_ai.execute_tool.duration`, recorded through the global provider in a fresh
process); scraped over HTTP."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from adk_yuxi.observability import OTHER_METHOD, UNKNOWN_TOOL
from adk_yuxi.observability._http import HttpServerMetrics
from adk_yuxi.testing import ScriptedLlm, call
from tests.guards._kit import app_for, guard_kit, turn

from ._scrape import Scrape, scrape

MADE_UP = [f"made_up_tool_{i}" for i in range(40)]


def labels(scraped: Scrape, label: str) -> set[str]:
    return {found[label] for _, found, _ in scraped.samples if label in found}


async def test_made_up_tool_names_are_one_label_value(tmp_path: Path, metrics_url: str) -> None:
    kit = guard_kit(tmp_path)
    llm = ScriptedLlm([call("ping"), *(call(name) for name in MADE_UP), *["done"] * 8])
    await turn(app_for(kit, llm), "go")
    scraped = await asyncio.to_thread(scrape, metrics_url)
    names = labels(scraped, "gen_ai_tool_name")
    assert UNKNOWN_TOOL in names and not names & set(MADE_UP)
    assert scraped.value("yuxi_tool_repairs_total", gen_ai_tool_name=UNKNOWN_TOOL) >= 1
    assert not any(name in scraped.text for name in MADE_UP)
    assert scraped.value("yuxi_refusals_total", gen_ai_tool_name=UNKNOWN_TOOL) >= 1


async def test_invented_http_methods_are_other(metrics_url: str) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def noop_receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def noop_send(message: Any) -> None:
        return None

    timed = HttpServerMetrics(app)
    for method in [f"M{i}" for i in range(60)] + ["GET", "PATCH"]:
        await timed({"type": "http", "method": method}, noop_receive, noop_send)
    scraped = await asyncio.to_thread(scrape, metrics_url)
    assert labels(scraped, "http_request_method") == {OTHER_METHOD, "GET", "PATCH"}
    assert scraped.value("http_server_request_duration_seconds_count") == 62
    assert (
        scraped.value(
            "http_server_request_duration_seconds_count", http_request_method=OTHER_METHOD
        )
        == 60
    )


_ADK_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path

    from adk_yuxi.observability import enable_prometheus
    from adk_yuxi.testing import ScriptedLlm, call
    from tests.guards._kit import app_for, guard_kit, turn

    exposition = enable_prometheus("labels-test")  # the global provider: ADK's too
    kit = guard_kit(Path(sys.argv[1]))
    names = [f"made_up_tool_{i}" for i in range(6)]
    llm = ScriptedLlm([call("ping"), *(call(n) for n in names), *["done"] * 8])
    asyncio.run(turn(app_for(kit, llm), "go"))
    sys.stdout.write(exposition.scrape().decode())
    """
)


@pytest.mark.slow
def test_adks_own_tool_duration_is_bounded_too(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _ADK_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    scraped = Scrape(done.stdout)
    names = labels(scraped, "gen_ai_tool_name")
    assert "made_up_tool_0" not in done.stdout
    duration = "gen_ai_execute_tool_duration_seconds_count"
    assert scraped.value(duration, gen_ai_tool_name="ping") == 1
    assert scraped.value(duration, gen_ai_tool_name=UNKNOWN_TOOL) >= 1
    assert names - {""} <= {UNKNOWN_TOOL, "ping"}  # "": a series without the label
