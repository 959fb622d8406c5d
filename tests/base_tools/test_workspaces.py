"""Per-user workspace folders: one per user on any file system, none outside the base."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from adk_yuxi.ledger import UnsafeUserId, per_user_workspaces, workspace_name


def test_plain_ids_keep_their_name() -> None:
    for user in ("mei", "user", "ann-2", "bo_x", "a.b", "42"):
        assert workspace_name(user) == user


def test_ids_a_file_system_could_fold_together_get_folders_of_their_own(tmp_path: Path) -> None:
    users = [
        "ann",
        "Ann",
        "ANN",
        "ａｎｎ",
        "ann\u200b",
        "José",
        unicodedata.normalize("NFD", "José"),
    ]
    names = [workspace_name(u) for u in users]
    # Case-insensitive and normalisation-insensitive file systems (macOS, Windows)
    # compare names folded: no two users may fold to one folder.
    folded = {unicodedata.normalize("NFKC", n).casefold() for n in names}
    assert len(folded) == len(users)
    workspace = per_user_workspaces(tmp_path)
    folders = [workspace(u) for u in users]
    assert all(f.parent == tmp_path.resolve() for f in folders)
    assert workspace("Ann") == workspace("Ann") != workspace("ann")


@pytest.mark.parametrize(
    "user", ["", ".", "..", ".hidden", "a/b", "a\\b", "a\x00b", "a\nb", "x" * 129]
)
def test_ids_that_cannot_name_a_folder_are_refused(tmp_path: Path, user: str) -> None:
    with pytest.raises(UnsafeUserId):
        per_user_workspaces(tmp_path)(user)
    assert list(tmp_path.iterdir()) == []
