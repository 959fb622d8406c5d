"""Identity and access: users, share configs, the read/manage rules and their SQL store.

Registration is never permission: what a run may use is decided here, from the user and
the share config of each resource, and re-checked at every call by the runtime.
"""

from ._errors import (
    AccessDenied,
    AccessError,
    AgentExecutionRevoked,
    NotFoundError,
    ShareConfigError,
)
from ._models import ResourceKind, ResourceRecord, Role, Scope, ShareConfig, User
from ._policy import can_manage, can_read
from ._principal import Principal
from ._repository import AccessRepository

__all__ = [
    "AccessDenied",
    "AccessError",
    "AccessRepository",
    "AgentExecutionRevoked",
    "NotFoundError",
    "Principal",
    "ResourceKind",
    "ResourceRecord",
    "Role",
    "Scope",
    "ShareConfig",
    "ShareConfigError",
    "User",
    "can_manage",
    "can_read",
]
