"""The read and manage rules, as pure functions over values.

Pure so the same answer comes out in the repository, in `prepare_runtime_context` and
in the per-call checks, and so the rule table can be tested without a database.
"""

from __future__ import annotations

from ._models import ResourceKind, ResourceRecord, Role, User

__all__ = ["can_manage", "can_read"]


def can_read(user: User, resource: ResourceRecord) -> bool:
    """Inactive users read nothing; disabled resources are readable only by those who
    can manage them, so they can be repaired and re-enabled."""
    if not user.active:
        return False
    if not resource.enabled:
        return can_manage(user, resource)
    if user.role is Role.SUPERADMIN or user.id == resource.creator_id:
        return True
    return resource.share.read_scope.includes(user)


def can_manage(user: User, resource: ResourceRecord) -> bool:
    """Superadmins and creators always manage, except that a plain user never manages a
    knowledge base: the platform gives users at most read access to knowledge."""
    if not user.active:
        return False
    if user.role is Role.SUPERADMIN:
        return True
    if resource.kind is ResourceKind.KNOWLEDGE_BASE and user.role is Role.USER:
        return False
    if user.id == resource.creator_id:
        return True
    share = resource.share
    return share.read_scope.includes(user) and share.manage_scope.includes(user)
