"""The verifier remembers verified tokens but never past their expiry or for other bytes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_yuxi.cli import main
from adk_yuxi.knowledge import DelegationError, DelegationKeys, load_verifier


def test_a_remembered_token_still_expires() -> None:
    keys = DelegationKeys.generate()
    clock = [time.time()]
    verifier = keys.verifier(clock=lambda: clock[0])
    # Minted 298.5 s ago with the longest life: 1.5 s are left.
    token = keys.signer(ttl_seconds=300).mint("ann", "s", ["kb"], now=clock[0] - 298.5)
    first = verifier.verify(token)
    assert verifier.verify(token) is first  # remembered: no second signature check
    clock[0] = max(clock[0], first.expires_at) + 1.1  # the verifier's clock, not a sleep
    with pytest.raises(DelegationError, match="expired"):
        verifier.verify(token)
    with pytest.raises(DelegationError, match="expired"):
        verifier.verify(token)  # and stays refused


def test_remembering_grants_nothing_to_other_bytes_or_other_verifiers() -> None:
    keys = DelegationKeys.generate()
    verifier = keys.verifier()
    token = keys.signer().mint("ann", "s", ["kb"])
    verifier.verify(token)
    with pytest.raises(DelegationError, match="bad_signature"):
        verifier.verify(token[:-6] + "AAAAAA")
    with pytest.raises(DelegationError, match="bad_signature"):
        DelegationKeys.generate().verifier().verify(token)
    with pytest.raises(DelegationError, match="invalid_claim"):
        keys.verifier(audience="another-service").verify(token)


def test_the_memory_is_bounded() -> None:
    keys = DelegationKeys.generate()
    verifier = keys.verifier()
    signer = keys.signer()
    tokens = [signer.mint(f"u{i}", "s", ["kb"]) for i in range(4200)]
    for token in tokens:
        verifier.verify(token)
    assert len(verifier._verified) <= 4096
    assert verifier.verify(tokens[0]).user_id == "u0"  # forgotten ones verify afresh


def test_a_verifier_from_the_public_key_file_alone(tmp_path: Path) -> None:
    keys = DelegationKeys.generate()
    public = tmp_path / "public.jwk"
    public.write_text(json.dumps(keys.public_jwk()))
    private = tmp_path / "private.jwk"
    DelegationKeys.load_or_create(private)
    token = keys.signer().mint("ann", "s1", ["hb"])
    assert load_verifier(public).verify(token).user_id == "ann"
    # A private key file serves too, for its public half; it does not verify other keys.
    with pytest.raises(DelegationError):
        load_verifier(private).verify(token)
    with pytest.raises(DelegationError, match="public key only"):
        DelegationKeys.load_or_create(public)  # signing needs the private half


@pytest.mark.parametrize(
    "content", ["", "{not json", "[1, 2]", '{"kty": "oct", "k": "AAAA"}', '{"kty": "EC"}']
)
def test_a_broken_key_file_is_one_clear_error(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.jwk"
    bad.write_text(content)
    with pytest.raises(DelegationError, match=r"bad\.jwk is not an EC key in JWK form"):
        load_verifier(bad)
    result = CliRunner().invoke(
        main, ["serve", "knowledge", "--db", str(tmp_path / "k.db"), "--key", str(bad)]
    )
    assert result.exit_code == 1 and "is not an EC key in JWK form" in result.output
    assert "Traceback" not in result.output
