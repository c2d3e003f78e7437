"""Ed25519 signatures of run manifests, via `cryptography` (optional extra `sign`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.errors import BenchError

_INSTALL = "install it with pip install 'armbench[sign]' (cryptography)"


class SigningError(BenchError):
    """A key that cannot be used, or `cryptography` missing."""


def _serialization() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise SigningError(f"signing needs the cryptography package; {_INSTALL}") from None
    return serialization


def sign(data: bytes, private_key: Path) -> bytes:
    """The Ed25519 signature of `data` with the PEM private key at `private_key`."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = _load(private_key, private=True)
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"--key {private_key}: not an Ed25519 private key; pass one (PEM)")
    return key.sign(data)


def verify_signature(data: bytes, signature: bytes, public_key: Path) -> bool:
    """True when `signature` is a valid Ed25519 signature of `data` under the PEM public key."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = _load(public_key, private=False)
    if not isinstance(key, Ed25519PublicKey):
        raise SigningError(f"--public-key {public_key}: not an Ed25519 public key; pass one (PEM)")
    try:
        key.verify(signature, data)
    except InvalidSignature:
        return False
    return True


def _load(path: Path, *, private: bool) -> Any:
    serialization = _serialization()
    flag = "--key" if private else "--public-key"
    try:
        pem = path.read_bytes()
        if private:
            return serialization.load_pem_private_key(pem, password=None)
        return serialization.load_pem_public_key(pem)
    except (OSError, ValueError, TypeError) as exc:
        raise SigningError(f"{flag} {path}: unreadable key ({exc}); pass a PEM file") from None
