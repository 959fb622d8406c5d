"""The principal: a user plus what that user may use, resolved once per run assembly.

`prepare_runtime_context` is a pure function of a principal and an agent config, so the
principal carries the readable resource ids it needs. It is a snapshot for assembling a
run, not a grant for its lifetime: the authorization plugin re-reads the user and the
agent right from the repository at every model and tool call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ._models import ResourceKind, ResourceRecord, Role, User
from ._policy import can_read

__all__ = ["Principal"]


def _freeze(
    readable: Mapping[ResourceKind, Iterable[str]],
) -> Mapping[ResourceKind, frozenset[str]]:
    return MappingProxyType({kind: frozenset(readable.get(kind, ())) for kind in ResourceKind})


@dataclass(frozen=True)
class Principal:
    user: User
    readable: Mapping[ResourceKind, frozenset[str]] = field(default_factory=dict)

    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        readable = _freeze(self.readable)
        object.__setattr__(self, "readable", readable)
        # A value, so a runtime assembled for it can be cached and reused while it is
        # unchanged (the mapping proxy itself is not hashable). Computed once: a
        # principal with many readable resources is looked up at every run start.
        object.__setattr__(self, "_hash", hash((self.user, tuple(sorted(readable.items())))))

    def __hash__(self) -> int:
        return self._hash

    @classmethod
    def from_records(cls, user: User, records: Iterable[ResourceRecord]) -> Principal:
        """Evaluates the read rule over `records`; disabled resources are never usable,
        even by people who may manage them."""
        readable: dict[ResourceKind, set[str]] = {kind: set() for kind in ResourceKind}
        for record in records:
            if record.enabled and can_read(user, record):
                readable[record.kind].add(record.id)
        return cls(user=user, readable={k: frozenset(v) for k, v in readable.items()})

    @property
    def user_id(self) -> str:
        return self.user.id

    @property
    def is_admin(self) -> bool:
        return self.user.role.is_admin

    @property
    def is_superadmin(self) -> bool:
        return self.user.role is Role.SUPERADMIN

    def may_use(self, kind: ResourceKind, ident: str) -> bool:
        return self.user.active and ident in self.readable[kind]

    def usable(self, kind: ResourceKind) -> frozenset[str]:
        return self.readable[kind] if self.user.active else frozenset()
