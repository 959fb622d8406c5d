"""What a `yuxi+…://` URL says when it reaches SQLAlchemy instead of our services.

ADK resolves service URIs through its registry, which learns our schemes only from a
`services.py` in the folder it is pointed at. Elsewhere ADK hands the URI to
SQLAlchemy, which would answer with a dialect error naming neither adk_yuxi nor a fix.
The `sqlalchemy.dialects` entry points `yuxi.sqlite`, `yuxi.postgresql` and
`yuxi.postgres` name `UnregisteredYuxiScheme`, so that error says what to do instead.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

from .._sql.errors import YuxiStorageError

__all__ = ["UnregisteredSchemeError", "UnregisteredYuxiScheme"]


class UnregisteredSchemeError(YuxiStorageError, ValueError):
    """A `yuxi+…://` URL was used where ADK's service registry did not know the scheme."""

    def __init__(self, scheme: str) -> None:
        self.scheme = scheme
        super().__init__(
            f"{scheme}:// is adk_yuxi's service URI scheme, but ADK has not registered it."
            " ADK registers extra schemes only from services.py in the directory given to"
            " `adk web` (or the agent folder given to `adk run`). Point ADK at the agents"
            " folder (e.g. `adk web agents`), or add a services.py there with these lines:"
            " `from adk_yuxi.storage import register_service_schemes;"
            " register_service_schemes()`. Host code passes the URL to"
            " adk_yuxi.storage.open_services instead of to SQLAlchemy."
        )


class UnregisteredYuxiScheme:
    """Stands where SQLAlchemy looks for a dialect; loading one always fails, clearly."""

    @classmethod
    def _refuse(cls, url: Any) -> NoReturn:
        scheme = str(getattr(url, "drivername", "yuxi+?")).replace(".", "+")
        error = UnregisteredSchemeError(scheme)
        # ADK wraps whatever engine creation raises in a generic ValueError; say it first.
        print(f"[adk_yuxi] {error}", file=sys.stderr, flush=True)
        raise error

    @classmethod
    def get_dialect_cls(cls, url: Any) -> NoReturn:
        cls._refuse(url)

    @classmethod
    def get_async_dialect_cls(cls, url: Any) -> NoReturn:
        cls._refuse(url)
