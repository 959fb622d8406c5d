"""Users, resources and share configs: plain values, validated on construction.

A share config says who may read a resource and who may manage it. Keeping the rule
"manage lies inside read" in the value itself means no code path can store or evaluate
a config that grants management to someone who cannot even see the resource.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._errors import ShareConfigError

__all__ = [
    "ResourceKind",
    "ResourceRecord",
    "Role",
    "Scope",
    "ShareConfig",
    "User",
]


class Role(StrEnum):
    SUPERADMIN = "superadmin"
    ADMIN = "admin"
    USER = "user"

    @property
    def is_admin(self) -> bool:
        return self in (Role.SUPERADMIN, Role.ADMIN)

    def may_act_for(self, other: Role) -> bool:
        """Whether an account of this role may act for (issue keys as, revoke keys of)
        an account of role ``other``: an admin for users and admins, only a superadmin
        for a superadmin, so no account can mint itself a higher role's credential."""
        return self.is_admin and (other is not Role.SUPERADMIN or self is Role.SUPERADMIN)


class ResourceKind(StrEnum):
    AGENT = "agent"
    KNOWLEDGE_BASE = "knowledge_base"
    SKILL = "skill"
    MCP_SERVER = "mcp_server"


_FROZEN = ConfigDict(frozen=True, extra="forbid")
_ID = Field(min_length=1, max_length=200)


class User(BaseModel):
    model_config = _FROZEN

    id: str = _ID
    name: str = ""
    role: Role = Role.USER
    department_id: str | None = None
    active: bool = True


class Scope(BaseModel):
    """`global`: every active user; `department`: members of `ids`; `user`: exactly `ids`."""

    model_config = _FROZEN

    kind: Literal["global", "department", "user"]
    ids: tuple[str, ...] = ()

    @field_validator("ids")
    @classmethod
    def _ids(cls, ids: tuple[str, ...]) -> tuple[str, ...]:
        if any(not isinstance(i, str) or not i.strip() for i in ids):
            raise ValueError("scope ids must be non-empty strings")
        return tuple(sorted(set(ids)))

    @model_validator(mode="after")
    def _global_has_no_ids(self) -> Scope:
        if self.kind == "global" and self.ids:
            raise ValueError("a global scope takes no ids")
        return self

    @classmethod
    def everyone(cls) -> Scope:
        return cls(kind="global")

    @classmethod
    def departments(cls, *ids: str) -> Scope:
        return cls(kind="department", ids=ids)

    @classmethod
    def users(cls, *ids: str) -> Scope:
        return cls(kind="user", ids=ids)

    def includes(self, user: User) -> bool:
        if self.kind == "global":
            return True
        if self.kind == "department":
            return user.department_id is not None and user.department_id in self.ids
        return user.id in self.ids


def _manage_within_read(
    read: Scope, manage: Scope, department_of: Callable[[str], str | None] | None
) -> str | None:
    """Why `manage` is not inside `read`, or None when it is."""
    if read.kind == "global":
        return None
    if manage.kind == "global":
        return "a global manage scope needs a global read scope"
    if manage.kind == read.kind:
        extra = set(manage.ids) - set(read.ids)
        return f"manage scope names {sorted(extra)} outside the read scope" if extra else None
    if manage.kind == "department":
        return "a department manage scope needs a global or wider department read scope"
    # manage by users, read by departments: every user must belong to a read department.
    if department_of is None:
        return "user manage scope inside a department read scope needs the users' departments"
    outside = [u for u in manage.ids if department_of(u) not in read.ids]
    return f"users {outside} are outside the read departments" if outside else None


class ShareConfig(BaseModel):
    """Who may read and who may manage a resource. Private (creator only) by default."""

    model_config = _FROZEN

    read_scope: Scope = Field(default_factory=lambda: Scope.users())
    manage_scope: Scope = Field(default_factory=lambda: Scope.users())

    def check(self, department_of: Callable[[str], str | None] | None = None) -> None:
        """Raises `ShareConfigError` unless manage lies inside read.

        `department_of` resolves user ids to departments; it is only needed for a user
        manage scope under a department read scope, and without it that case is refused.
        """
        problem = _manage_within_read(self.read_scope, self.manage_scope, department_of)
        if problem is not None:
            raise ShareConfigError(f"invalid share config: {problem}")

    @classmethod
    def private(cls) -> ShareConfig:
        return cls()

    @classmethod
    def public(cls, manage: Scope | None = None) -> ShareConfig:
        return cls(read_scope=Scope.everyone(), manage_scope=manage or Scope.users())


class ResourceRecord(BaseModel):
    """An agent, knowledge base, skill or MCP server as the access layer sees it."""

    model_config = _FROZEN

    kind: ResourceKind
    id: str = _ID
    creator_id: str = _ID
    share: ShareConfig = Field(default_factory=ShareConfig)
    enabled: bool = True
