"""Answers a session already holds: a late duplicate resume is refused by them."""

from __future__ import annotations

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.genai import types

__all__ = ["answered_again"]


async def answered_again(ctx: InvocationContext, message: types.Content) -> list[str]:
    """The calls `message` answers whose latest request the session already holds an
    answer to: a resume that ran once (a late duplicate finds its run waiting at a newer
    point, which a claim alone would let in). A call asked again after an answer it
    refused (a direct answer outside the options) is open again. Concurrent duplicates
    are the claim's to refuse. A run reads its session through a window (from the
    latest compaction on): a call asked before it is looked up in the whole history."""
    answered = {
        part.function_response.id
        for part in message.parts or ()
        if part.function_response is not None and part.function_response.id
    }
    if not answered:
        return []
    closed = _closed_calls(ctx.session.events, answered)
    if answered - closed.keys():
        session = ctx.session
        full = await ctx.session_service.get_session(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id
        )
        if full is not None:
            closed = _closed_calls(full.events, answered)
    return sorted(call_id for call_id, done in closed.items() if done)


def _closed_calls(events: list[Event], answered: set[str]) -> dict[str, bool]:
    """For each call of `answered` asked in `events`: whether its latest request has
    an answer there."""
    closed: dict[str, bool] = {}
    for event in events:
        for asked in event.get_function_calls():
            if asked.id in answered:
                closed[asked.id] = False
        for response in event.get_function_responses():
            if response.id in answered and response.id in closed:
                closed[response.id] = True
    return closed
