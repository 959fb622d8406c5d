"""What the ledger's spans say: the run, the worker and the outcome of each claim,
renewal, close, take-over and expiry (`traced` on the store methods calls these only
when a span records). A refusal (`LeaseHeld`, `RunInProgress`…) is the span's
`error.type`. Never a message, a question or an answer."""

from __future__ import annotations

from typing import Any

from ..observability._tracing import Attributes, db_system

__all__ = [
    "claimed",
    "expired",
    "held",
    "on_run",
    "on_session",
    "outcome",
    "resumed",
    "took_over",
]


def on_session(_self: Any, *_args: Any, **kw: Any) -> Attributes:
    """A claim of the session's next run (keyword arguments only)."""
    return {
        "db.system.name": db_system(_self),
        "gen_ai.conversation.id": kw.get("session_id"),
        "gen_ai.agent.name": kw.get("agent_name") or None,
        "yuxi.ledger.worker": kw.get("worker"),
    }


def on_run(_self: Any, run: Any, worker: Any = None, *args: Any, **kw: Any) -> Attributes:
    """An operation on one run: its id (or record) and the worker acting."""
    status = args[0] if args else kw.get("status")
    return {
        "db.system.name": db_system(_self),
        "yuxi.run.id": getattr(run, "run_id", run),
        "yuxi.ledger.worker": kw.get("worker", worker),
        "yuxi.run.status": status if isinstance(status, str) else None,
    }


def claimed(found: Any) -> Attributes:
    record, resumed_ = found if isinstance(found, tuple) else (found, False)
    return {
        "yuxi.run.id": record.run_id,
        "yuxi.ledger.outcome": "resumed" if resumed_ else "claimed",
    }


def resumed(record: Any) -> Attributes:
    return {"yuxi.run.id": record.run_id, "yuxi.ledger.outcome": "resumed"}


def took_over(record: Any) -> Attributes:
    return {"yuxi.ledger.outcome": "taken_over", "gen_ai.conversation.id": record.session_id}


def held(done: bool) -> Attributes:
    """A renewal: this worker still holds the run, or lost it (taken over)."""
    return {"yuxi.ledger.outcome": "renewed" if done else "lost"}


def outcome(done: bool) -> Attributes:
    """A close: done, or refused because this worker no longer holds the run."""
    return {"yuxi.ledger.outcome": "closed" if done else "lost"}


def expired(done: bool) -> Attributes:
    return {"yuxi.ledger.outcome": "expired" if done else "held"}
