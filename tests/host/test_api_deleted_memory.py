"""A session deleted through the host API stays deleted in memory: a memory job that
read the session before the DELETE cannot ingest it afterwards (the last turn included,
which was never ingested), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from adk_yuxi.memory import SessionDeletedError
from adk_yuxi.storage import open_services

from .conftest import Api, parse_sse
from .test_api_control import api_on, runs_path
from .test_api_session_delete import SESSIONS, create, recalled

__all__ = ["api_on"]


async def test_a_stale_session_is_refused_after_the_api_delete(api_on: Api) -> None:
    api, sid = api_on, "stale-one"
    await create(api, sid)
    api.llm.extend(["The courier arrives at cobalt gate."])
    ran = await api.client.post(runs_path(sid), json={"text": "when?"}, headers=api.auth("mei"))
    assert parse_sse(ran.text)[-1]["data"]["status"] == "completed"
    services = open_services(api.url)
    try:
        app = "planner"
        stale = await services.session_service.get_session(
            app_name=app, user_id="mei", session_id=sid
        )
        assert stale is not None and stale.events  # what the memory job read
        deleted = await api.client.delete(f"{SESSIONS}/{sid}", headers=api.auth("mei"))
        assert deleted.status_code == 204, deleted.text
        with pytest.raises(SessionDeletedError):
            await services.memory_service.add_session_to_memory(stale)
    finally:
        await services.close()
    assert await recalled(api.url, "cobalt") == []
