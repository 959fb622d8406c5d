"""`python -m tests.real_model`: the runtime's guarantees against a real model.

Without settings it installs Gemma 3 270M and llama-cpp-python's server into its cache
(`YUXI_REAL_MODEL_CACHE`, default ~/.cache/yuxi-real-model) and serves it on loopback.
`YUXI_REAL_MODEL_BASE_URL` (with `YUXI_REAL_MODEL_NAME`, `OPENAI_API_KEY` and
`YUXI_MODEL_CONTEXT` as needed) points it at any OpenAI-compatible server instead: vLLM,
Ollama, llama.cpp. `YUXI_REAL_MODEL_TURNS` sets the long conversation's length (8),
`YUXI_REAL_MODEL_MAX_TOKENS` the reply cap (128), `YUXI_REAL_MODEL_CTX` the context the
local server is started with (2048: the long conversation outgrows it in a few turns).

The shipped agents and the template talk through the ReAct form (`react/openai/<name>`)
when the local server is used (`YUXI_REAL_MODEL_REACT=0` for tools through the API, the
default for another server); the long conversation always uses tools through the API and
is not told the context, so it meets the server's refusal and learns the size from it.
Exits 1 when a guarantee did not hold.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path

from . import _server
from ._guarantees import Verdict

LOOP_STOPS = ("REPEATED_TOOL_FAILURE", "REPEATED_TOOL_CALL", "TOOL_FAILURES", "MAX_LLM_CALLS")


def _setting(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


_SAID = {
    "overflow_retries": "context overflow: compacted, retrying",
    "overflow_not_compacted": "context overflow: nothing could be compacted",
    "summaries_given_up": "Compaction skipped",
    "summaries_deferred": "Compaction deferred",
}


class _Counted(logging.Handler):
    """Counts the runtime's log lines that say a guarantee was exercised."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.counts = dict.fromkeys(_SAID, 0)
        self.given_up: list[str] = []
        """Why each summary was given up, for report.json."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        for name, said in _SAID.items():
            if said in message:
                self.counts[name] += 1
                if name == "summaries_given_up":
                    self.given_up.append(message[:300])


def _point_at(base_url: str, model: str, context: int | None, work: Path, react: bool) -> None:
    os.environ["YUXI_MODEL"] = f"{'react/' if react else ''}openai/{model}"
    os.environ["YUXI_REAL_MODEL_NATIVE"] = f"openai/{model}"
    os.environ["OPENAI_BASE_URL"] = base_url
    os.environ.setdefault("OPENAI_API_KEY", "local")
    if context is not None:
        os.environ.setdefault("YUXI_MODEL_CONTEXT", str(context))
    os.environ["YUXI_DATABASE_URL"] = f"sqlite+aiosqlite:///{work / 'yuxi.db'}"
    os.environ["YUXI_WORKSPACES"] = str(work / "workspaces")


async def _check(verdict: Verdict, work: Path) -> None:
    from ._scenarios import (
        forced_tool_loop,
        long_conversation,
        shipped_agents,
        template_in_adk_run,
    )

    max_tokens = _setting("YUXI_REAL_MODEL_MAX_TOKENS", 128)
    only = os.environ.get("YUXI_REAL_MODEL_ONLY")
    if only == "forced_tool_loop":
        await forced_tool_loop(verdict, max_tokens)
        return
    await shipped_agents(verdict, max_tokens)
    await forced_tool_loop(verdict, max_tokens)
    await asyncio.to_thread(template_in_adk_run, verdict, work)
    turns = _setting("YUXI_REAL_MODEL_TURNS", 8)
    await long_conversation(verdict, turns, max_tokens, work / "sessions.db")


def _summary(verdict: Verdict, seconds: float, counted: _Counted) -> dict[str, object]:
    codes: dict[str, int] = {}
    for turn in verdict.turns:
        codes[turn.error_code or "answered"] = codes.get(turn.error_code or "answered", 0) + 1
    return {
        "seconds": round(seconds, 1),
        "turns": len(verdict.turns),
        "turn_endings": codes,
        "tool_calls": sum(t.tool_calls for t in verdict.turns),
        "loops_stopped": sum(codes.get(code, 0) for code in LOOP_STOPS),
        "compactions_stored": verdict.compactions,
        **counted.counts,
        "longest_same_failure_run": max((t.same_failures for t in verdict.turns), default=0),
        "problems": verdict.problems,
    }


def main() -> int:
    started = time.monotonic()
    cache = _server.cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="yuxi-real-model-"))
    verdict = Verdict()
    counted = _Counted()
    for name in ("adk_yuxi.guards.overflow", "adk_yuxi.runtime.compaction"):
        logging.getLogger(name).addHandler(counted)
        logging.getLogger(name).setLevel(logging.INFO)
    with ExitStack() as stack:
        base_url = os.environ.get("YUXI_REAL_MODEL_BASE_URL")
        if base_url:
            name = os.environ.get("YUXI_REAL_MODEL_NAME", "default")
            _point_at(base_url, name, None, work, _setting("YUXI_REAL_MODEL_REACT", 0) == 1)
        else:
            python = _server.install(cache)
            gguf = _server.assemble(python, cache)
            n_ctx = _setting("YUXI_REAL_MODEL_CTX", 2048)
            served = stack.enter_context(_server.serve(python, gguf, n_ctx, cache / "server.log"))
            react = _setting("YUXI_REAL_MODEL_REACT", 1) == 1
            _point_at(served, _server.MODEL_NAME, None, work, react)
        checked = time.monotonic()
        asyncio.run(_check(verdict, work))
        report = _summary(verdict, time.monotonic() - checked, counted)
    report["setup_seconds"] = round(checked - started, 1)
    report["turns_detail"] = [asdict(t) for t in verdict.turns]
    report["summaries_given_up_why"] = counted.given_up
    (cache / "report.json").write_text(json.dumps(report, indent=2))
    shown = {k: v for k, v in report.items() if k != "turns_detail"}
    print(json.dumps(shown, indent=2))
    print("PASSED" if not verdict.problems else "FAILED", f"(report: {cache / 'report.json'})")
    return 0 if not verdict.problems else 1


if __name__ == "__main__":
    sys.exit(main())
