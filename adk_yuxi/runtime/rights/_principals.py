"""Where a run's principal comes from when one App serves many users.

A `PrincipalSource` maps the user id of a run to that user's principal, or raises
`NotFoundError` for an unknown user. `AccessRepository.load_principal` is one (rights
from the platform database); `LocalPrincipals` is another, for local development
without an access database.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from ...access import AccessRepository, Principal, ResourceRecord, Role, User

__all__ = [
    "Access",
    "AccessLike",
    "FixedPrincipal",
    "LocalPrincipals",
    "PrincipalSource",
]

PrincipalSource = Callable[[str], Awaitable[Principal]]
"""`async (user_id) -> Principal`; raises `NotFoundError` for an unknown user. Asked at
the start of every run, so it should read the current rights, not a snapshot."""


class FixedPrincipal:
    """A constant source: an App built for one principal asks this, so a fixed
    principal takes the same path as any other source (a run under another user id is
    refused, as the source answered for someone else)."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    async def __call__(self, user_id: str) -> Principal:
        return self.principal


class LocalPrincipals:
    """Every user id is an active user who may read `records` (nothing else).

    For `adk run` / `adk web` on a developer's machine, where any user id the tool sends
    must work and there is no access database. Never a production source: it admits
    anyone. The records are evaluated with the normal read rule, so give them a share
    config that reaches every user (`ShareConfig.public()`).
    """

    def __init__(self, records: Iterable[ResourceRecord] = (), *, role: Role = Role.USER) -> None:
        self._records = tuple(records)
        self._role = role

    async def __call__(self, user_id: str) -> Principal:
        return Principal.from_records(User(id=user_id, role=self._role), self._records)


@dataclass(frozen=True)
class Access:
    """Who runs an app and where their rights come from: `build_app`'s one access
    argument. `source` gives the principal of each run's user; with `repository`, every
    model and tool call is decided on the rights the access database holds as of that
    call (the agent itself must stay shared with the user); without it, on the source's
    answer (a fixed principal never changes).

    `build_app` also takes the usual sources as they are: an `AccessRepository` (its
    `load_principal`, with live rights), one `Principal`, or any `PrincipalSource`
    (`LocalPrincipals` for `adk run` / `adk web` without an access database)."""

    source: PrincipalSource
    repository: AccessRepository | None = None

    @classmethod
    def of(cls, given: AccessLike) -> Access:
        if isinstance(given, Access):
            return given
        if isinstance(given, AccessRepository):
            return cls(given.load_principal, given)
        if isinstance(given, Principal):
            return cls(FixedPrincipal(given))
        return cls(given)

    @classmethod
    def live(cls, who: Principal | PrincipalSource, repository: AccessRepository) -> Access:
        """`who` runs (one principal, or a source), every call decided on the rights
        `repository` holds as of that call."""
        source = FixedPrincipal(who) if isinstance(who, Principal) else who
        return cls(source, repository)

    @property
    def fixed(self) -> Principal | None:
        """The one principal of an app built for one, else None."""
        return self.source.principal if isinstance(self.source, FixedPrincipal) else None


AccessLike = Access | AccessRepository | Principal | PrincipalSource
"""What `build_app` accepts as its access: normalised by `Access.of`."""
