"""What a waiting point's spans say: its id, session, call and how many questions,
and its status after; never a question or an answer."""

from __future__ import annotations

from typing import Any

from ..observability._tracing import Attributes, db_system

__all__ = ["on_open", "on_point", "settled"]


def on_open(_self: Any, **kw: Any) -> Attributes:
    return {
        "db.system.name": db_system(_self),
        "gen_ai.conversation.id": kw.get("session_id"),
        "gen_ai.tool.call.id": kw.get("call_id"),
        "yuxi.waitpoint.questions": len(kw.get("questions") or ()),
    }


def on_point(_self: Any, waitpoint_id: str, *_args: Any, **kw: Any) -> Attributes:
    return {
        "db.system.name": db_system(_self),
        "yuxi.waitpoint.id": waitpoint_id,
        "user.id": kw.get("user_id"),
    }


def settled(point: Any) -> Attributes:
    return {"yuxi.waitpoint.id": point.id, "yuxi.waitpoint.status": point.status}
