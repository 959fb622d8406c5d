"""The model request as a conversation grows: compaction on (the default policy) vs off.

A conversation of N prior events is built in chunks of synthetic turns (a user message,
a tool call, its result, an answer: what a tool-using assistant writes), with one real
turn through the Runner after each chunk, so compaction happens along the way as in a
live conversation. Then one more real turn is measured: the contents the model is sent
(their number, and tokens at about four characters each), and the largest prompt the
demo model reported over the whole conversation. The anchor is the same stack with
compaction off at the same N, measured in the same run (it takes no turns in between:
there is nothing for them to do).

    python -m bench.bench_context [--sizes 0,1000,10000] [--chunk 500] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.genai import types
from pydantic import Field

from adk_yuxi.access import Principal, Role, User
from adk_yuxi.models import DemoLlm
from adk_yuxi.models._request import contents_chars
from adk_yuxi.runtime import AgentConfig, ContextPolicy, Toolbox, build_app
from adk_yuxi.tools import ToolRegistry, tool
from bench._timing import format_table

USER = "u"
QUESTION = "How is the planning going?"


class MeasuredDemo(DemoLlm):
    """The demo model, keeping the size of every request it is sent."""

    sent: list[tuple[int, int, int]] = Field(default_factory=list)

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
        async for response in super().generate_content_async(llm_request, stream):
            reported = response.usage_metadata.prompt_token_count if response.usage_metadata else 0
            chars = contents_chars(llm_request.contents)
            self.sent.append((len(llm_request.contents), chars, reported or 0))
            yield response


def _app(policy: ContextPolicy, model: MeasuredDemo) -> App:
    registry = ToolRegistry()

    @tool(registry=registry)
    def lookup(room: int) -> dict[str, Any]:
        """Looks a meeting room up."""
        return {"room": room}

    config = AgentConfig(name="bench", tools=("lookup",), context=policy)
    principal = Principal.from_records(User(id=USER, role=Role.ADMIN), [])
    return build_app(config, principal, model=model, toolbox=Toolbox(registry=registry))


class HeldSessions(BaseSessionService):
    """One session held as it is, never copied: what is measured is the request, and
    ADK's in-memory service would copy 10,000 events at every read (and scan them at
    every append)."""

    def __init__(self) -> None:
        self.held: dict[str, Session] = {}

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        sid = session_id or Event.new_id()
        session = Session(id=sid, app_name=app_name, user_id=user_id, state=state or {})
        self.held[sid] = session
        return session

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        return self.held.get(session_id)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        return ListSessionsResponse(sessions=list(self.held.values()))

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self.held.pop(session_id, None)


class _Clock:
    """Increasing timestamps never ahead of the wall clock: compaction orders by them."""

    last = 0.0

    def __call__(self) -> float:
        self.last = max(time.time(), self.last + 1e-6)
        return self.last


def _turn(i: int, invocation: str, clock: _Clock) -> list[Event]:
    """One synthetic turn of four events (about 400 characters)."""
    said = f"Note {i}: meeting room {i} is on floor {i % 7} and opens at {8 + i % 4}:00."
    call = types.FunctionCall(id=f"c{i}", name="lookup", args={"room": i})
    result = {"room": i, "floor": i % 7, "free": i % 3 == 0, "seats": 4 + i % 9}
    reply = types.FunctionResponse(id=f"c{i}", name="lookup", response=result)
    state = "free" if i % 3 == 0 else "booked"
    answer = f"Room {i} is on floor {i % 7}; it seats {4 + i % 9} and is {state} now."
    return [
        Event(
            author="user",
            invocation_id=invocation,
            timestamp=clock(),
            content=types.Content(role="user", parts=[types.Part(text=said)]),
        ),
        Event(
            author="bench",
            invocation_id=invocation,
            timestamp=clock(),
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        ),
        Event(
            author="bench",
            invocation_id=invocation,
            timestamp=clock(),
            content=types.Content(role="user", parts=[types.Part(function_response=reply)]),
        ),
        Event(
            author="bench",
            invocation_id=invocation,
            timestamp=clock(),
            content=types.Content(role="model", parts=[types.Part(text=answer)]),
        ),
    ]


async def _real_turn(runner: Runner, text: str) -> None:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id=USER, session_id="s", new_message=message):
        pass


async def measure(policy: ContextPolicy, prior: int, chunk: int) -> dict[str, int]:
    """The request of one turn after `prior` events, and what the session holds."""
    model = MeasuredDemo()
    app = _app(policy, model)
    sessions = HeldSessions()
    session = await sessions.create_session(app_name=app.name, user_id=USER, session_id="s")
    runner = Runner(app=app, session_service=sessions)
    clock = _Clock()
    written = 0
    try:
        while written < prior:
            target = min(prior, written + chunk)
            while written < target:
                invocation = Event.new_id()
                for event in _turn(written // 4, invocation, clock):
                    await sessions.append_event(session, event)
                written += 4
            if policy.compaction:  # a turn now and then, where compaction happens
                await _real_turn(runner, QUESTION)
                written += 2
        await _real_turn(runner, QUESTION)
    finally:
        await runner.close()
    final = await sessions.get_session(app_name=app.name, user_id=USER, session_id="s")
    assert final is not None and model.sent
    contents, chars, _ = model.sent[-1]
    summaries = sum(1 for e in final.events if e.actions.compaction is not None)
    return {
        "events": len(final.events) - summaries,
        "summaries": summaries,
        "contents": contents,
        "chars": chars,
        "largest": max(reported for _, _, reported in model.sent),
    }


async def run(sizes: list[int], chunk: int) -> list[list[str]]:
    policy = ContextPolicy()
    rows: list[list[str]] = []
    for prior in sizes:
        anchor = await measure(ContextPolicy.off(), prior, chunk)  # the whole history
        started = time.perf_counter()
        on = await measure(policy, prior, chunk)
        rows.append(
            [
                f"{prior:,}",
                f"{anchor['contents']:,}",
                f"{anchor['chars'] // 4:,}",
                f"{on['contents']:,}",
                f"{on['chars'] // 4:,}",
                str(on["summaries"]),
                f"{on['largest']:,}",
                f"{on['largest'] / policy.budget_tokens:.0%}",
                f"{on['chars'] / max(anchor['chars'], 1):.3f}",
                f"{time.perf_counter() - started:.1f}",
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,1000,10000", help="prior events, comma-separated")
    parser.add_argument("--chunk", type=int, default=500, help="events between real turns")
    parser.add_argument("--quick", action="store_true", help="the same sizes (already quick)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    os.environ.setdefault("ADK_DISABLE_TELEMETRY", "1")
    rows = asyncio.run(run(sizes, args.chunk))
    policy = ContextPolicy()
    print(
        f"Model request after N prior events, demo model. Default policy: budget"
        f" {policy.budget_tokens:,} tokens, compaction at {policy.threshold_tokens:,}, last"
        f" {policy.keep_recent_events} events verbatim. Anchor: the same stack with"
        " compaction off (the whole history), same N, same run."
    )
    headers = [
        "prior events",
        "off: contents",
        "off: ~tokens",
        "on: contents",
        "on: ~tokens",
        "summaries",
        "on: largest prompt",
        "of budget",
        "on/off",
        "s (on)",
    ]
    print(format_table(headers, rows))


if __name__ == "__main__":
    main()
