"""The share-scope rule table, evaluated without a database."""

from __future__ import annotations

import pytest

from adk_yuxi.access import (
    ResourceKind,
    ResourceRecord,
    Role,
    Scope,
    ShareConfig,
    ShareConfigError,
    User,
    can_manage,
    can_read,
)

ALICE = User(id="alice", role=Role.USER, department_id="sales")
BOB = User(id="bob", role=Role.USER, department_id="eng")
ADMIN = User(id="ada", role=Role.ADMIN, department_id="eng")
ROOT = User(id="root", role=Role.SUPERADMIN, department_id=None)
CREATOR = User(id="carol", role=Role.ADMIN, department_id="ops")


def record(read: Scope, manage: Scope, kind: ResourceKind = ResourceKind.AGENT) -> ResourceRecord:
    return ResourceRecord(
        kind=kind,
        id="r1",
        creator_id="carol",
        share=ShareConfig(read_scope=read, manage_scope=manage),
    )


@pytest.mark.parametrize(
    ("read", "manage", "user", "reads", "manages"),
    [
        (Scope.everyone(), Scope.users(), ALICE, True, False),
        (Scope.everyone(), Scope.everyone(), BOB, True, True),
        (Scope.departments("sales"), Scope.users(), ALICE, True, False),
        (Scope.departments("sales"), Scope.users(), BOB, False, False),
        (Scope.departments("sales", "eng"), Scope.departments("eng"), BOB, True, True),
        (Scope.departments("sales", "eng"), Scope.departments("eng"), ALICE, True, False),
        (Scope.users("alice"), Scope.users("alice"), ALICE, True, True),
        (Scope.users("alice"), Scope.users(), BOB, False, False),
        (Scope.users(), Scope.users(), CREATOR, True, True),  # the creator always
        (Scope.users(), Scope.users(), ROOT, True, True),  # a superadmin always
        (Scope.users(), Scope.users(), ADMIN, False, False),  # admin is not superadmin
    ],
)
def test_scope_table(read: Scope, manage: Scope, user: User, reads: bool, manages: bool) -> None:
    resource = record(read, manage)
    assert can_read(user, resource) is reads
    assert can_manage(user, resource) is manages


def test_plain_user_at_most_reads_a_knowledge_base() -> None:
    kb = record(Scope.everyone(), Scope.everyone(), ResourceKind.KNOWLEDGE_BASE)
    assert can_read(ALICE, kb) and not can_manage(ALICE, kb)
    assert can_manage(ADMIN, kb)
    own = kb.model_copy(update={"creator_id": "alice"})
    assert not can_manage(ALICE, own)


def test_inactive_user_gets_nothing() -> None:
    gone = ALICE.model_copy(update={"active": False})
    resource = record(Scope.everyone(), Scope.everyone())
    assert not can_read(gone, resource) and not can_manage(gone, resource)
    root_gone = ROOT.model_copy(update={"active": False})
    assert not can_read(root_gone, resource)


def test_disabled_resource_only_visible_to_managers() -> None:
    resource = record(Scope.everyone(), Scope.users()).model_copy(update={"enabled": False})
    assert not can_read(ALICE, resource)
    assert can_read(CREATOR, resource)


@pytest.mark.parametrize(
    ("read", "manage"),
    [
        (Scope.users("alice"), Scope.everyone()),
        (Scope.departments("sales"), Scope.everyone()),
        (Scope.departments("sales"), Scope.departments("sales", "eng")),
        (Scope.users("alice"), Scope.users("alice", "bob")),
        (Scope.users("alice"), Scope.departments("sales")),
    ],
)
def test_manage_outside_read_is_rejected(read: Scope, manage: Scope) -> None:
    with pytest.raises(ShareConfigError):
        ShareConfig(read_scope=read, manage_scope=manage).check()


@pytest.mark.parametrize(
    ("read", "manage"),
    [
        (Scope.everyone(), Scope.everyone()),
        (Scope.everyone(), Scope.departments("eng")),
        (Scope.everyone(), Scope.users("bob")),
        (Scope.departments("sales", "eng"), Scope.departments("eng")),
        (Scope.users("alice", "bob"), Scope.users("bob")),
    ],
)
def test_manage_inside_read_is_accepted(read: Scope, manage: Scope) -> None:
    ShareConfig(read_scope=read, manage_scope=manage).check()


def test_user_manage_under_department_read_needs_departments() -> None:
    share = ShareConfig(read_scope=Scope.departments("eng"), manage_scope=Scope.users("bob"))
    with pytest.raises(ShareConfigError):
        share.check()
    share.check({"bob": "eng"}.get)
    with pytest.raises(ShareConfigError, match="alice"):
        ShareConfig(read_scope=Scope.departments("eng"), manage_scope=Scope.users("alice")).check(
            {"alice": "sales"}.get
        )


def test_global_scope_takes_no_ids() -> None:
    with pytest.raises(ValueError):
        Scope(kind="global", ids=("x",))
