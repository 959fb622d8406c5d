"""`SqlSessionService.events_after`: what a follower polls, the rows after the last seq
it saw, on both backends."""

from __future__ import annotations

from adk_yuxi.storage import YuxiServices

from .test_session_window import said

APP = "chat"


async def test_a_poll_reads_only_what_was_appended_since(services: YuxiServices) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name=APP, user_id="u", session_id="s")
    for i in range(3):
        await sessions.append_event(session, said(f"m{i}", 1.0 + i))
    key = {"app_name": APP, "user_id": "u", "session_id": "s"}
    everything = await sessions.events_after(**key)
    assert everything is not None
    assert [e.content.parts[0].text for e in everything.events if e.content] == ["m0", "m1", "m2"]
    nothing = await sessions.events_after(**key, after_seq=everything.last_seq)
    assert nothing is not None and nothing.events == []
    assert nothing.last_seq == everything.last_seq
    await sessions.append_event(session, said("m3", 9.0))
    fresh = await sessions.events_after(**key, after_seq=everything.last_seq)
    assert fresh is not None
    assert [e.content.parts[0].text for e in fresh.events if e.content] == ["m3"]
    assert fresh.last_seq > everything.last_seq and fresh.row_id == everything.row_id
    whole = await sessions.get_session(**key)
    assert whole is not None and [e.id for e in whole.events][-1] == fresh.events[0].id
    # Another user's session of the same id is not this one; a deleted one is gone, and
    # one made again under the same id is another stored session.
    assert await sessions.events_after(app_name=APP, user_id="v", session_id="s") is None
    await sessions.delete_session(**key)
    assert await sessions.events_after(**key) is None
    await sessions.create_session(**key)
    again = await sessions.events_after(**key, after_seq=fresh.last_seq)
    assert again is not None and again.events == [] and again.row_id != fresh.row_id
