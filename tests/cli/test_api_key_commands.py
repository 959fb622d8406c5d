"""`yuxi api-key issue | list | revoke`, and the help texts of the operator commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from adk_yuxi.apikeys import ApiKeyStore, InvalidApiKey
from adk_yuxi.cli import main
from adk_yuxi.storage import open_services


def yuxi(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"YUXI_DATABASE_URL": ""})


def resolves(db: Path, token: str) -> bool:
    async def check() -> bool:
        async with open_services(f"sqlite:///{db}") as services:
            try:
                await ApiKeyStore(services.store).resolve(token)
            except InvalidApiKey:
                return False
            return True

    return asyncio.run(check())


def test_list_shows_ids_never_tokens_and_revoke_stops_the_key(tmp_path: Path) -> None:
    db = tmp_path / "yuxi.db"
    for user in ("ann", "bob"):
        assert yuxi("access", "user", "add", user, "--db", str(db)).exit_code == 0
    first = yuxi("api-key", "issue", "--user", "ann", "--label", "laptop", "--db", str(db))
    second = yuxi("api-key", "issue", "--user", "bob", "--db", str(db))
    tokens = [first.output.strip(), second.output.strip()]
    listed = yuxi("api-key", "list", "--db", str(db))
    assert listed.exit_code == 0
    rows = [line.split("\t") for line in listed.output.splitlines()]
    assert [(r[1], r[2], r[4]) for r in rows] == [
        ("bob", "active", ""),
        ("ann", "active", "laptop"),
    ]
    assert not any(token in listed.output for token in tokens)
    only_ann = yuxi("api-key", "list", "--user", "ann", "--db", str(db)).output.splitlines()
    assert len(only_ann) == 1 and only_ann[0].startswith(rows[1][0])
    assert resolves(db, tokens[0])

    revoked = yuxi("api-key", "revoke", rows[1][0], "--db", str(db))
    assert revoked.exit_code == 0, revoked.output
    assert revoked.output.startswith(f"{rows[1][0]}\tann\trevoked ")
    assert not resolves(db, tokens[0]) and resolves(db, tokens[1])
    again = yuxi("api-key", "revoke", rows[1][0], "--db", str(db))
    assert again.output == revoked.output  # the first revocation time is kept
    after = yuxi("api-key", "list", "--user", "ann", "--db", str(db)).output
    assert "\tann\trevoked " in after
    unknown = yuxi("api-key", "revoke", "no-such-key", "--db", str(db))
    assert unknown.exit_code == 1 and "no API key 'no-such-key'" in unknown.output


def test_api_key_help_says_what_it_does() -> None:
    text = yuxi("api-key", "--help").output
    assert "Issue, list and revoke" in text
    for command in ("issue", "list", "revoke"):
        assert f"  {command} " in text


def test_user_enable_has_help() -> None:
    text = yuxi("access", "user", "--help").output
    enable = next(line for line in text.splitlines() if line.strip().startswith("enable"))
    assert "Lets a disabled user in again" in enable


@pytest.mark.parametrize("command", [("serve", "api"), ("serve", "knowledge")])
def test_the_collector_threshold_is_not_a_user_option(command: tuple[str, ...]) -> None:
    assert "--gc-threshold" not in yuxi(*command, "--help").output
