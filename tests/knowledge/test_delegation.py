"""The verifier remembers verified tokens but never past their expiry or for other bytes."""

from __future__ import annotations

import time

import pytest

from adk_yuxi.knowledge import DelegationError, DelegationKeys


def test_a_remembered_token_still_expires() -> None:
    keys = DelegationKeys.generate()
    verifier = keys.verifier()
    # Minted 298.5 s ago with the longest life: 1.5 s are left.
    token = keys.signer(ttl_seconds=300).mint("ann", "s", ["kb"], now=time.time() - 298.5)
    first = verifier.verify(token)
    assert verifier.verify(token) is first  # remembered: no second signature check
    time.sleep(max(0.0, first.expires_at - time.time()) + 1.1)
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
