"""Whether a `kubernetes.io/tls` Secret's certificate and key make a pair, in Go's `tls.X509KeyPair` words.

Kubernetes warns (never refuses) when they do not (`warningsForSecret` in
`pkg/registry/core/secret/strategy.go`): `key_pair_problem(cert, key)` is the
text of Go's error, None when the key matches the first certificate's
public key. PEM blocks are read as Go's `pem.Decode` finds them; the
certificate and key are parsed with `cryptography`.

Caveat: a certificate that does not parse is Go's generic
`x509: malformed certificate`, not each of Go's finer x509 messages.
"""

from __future__ import annotations

import base64
import binascii
import re

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

__all__ = ["key_pair_problem"]

_BLOCK = re.compile(rb"-----BEGIN ([^\r\n-]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)
_PUBLIC = {rsa.RSAPublicKey: rsa.RSAPrivateKey, ec.EllipticCurvePublicKey: ec.EllipticCurvePrivateKey,
           ed25519.Ed25519PublicKey: ed25519.Ed25519PrivateKey}


def _blocks(data: bytes) -> list[tuple[str, bytes]]:
    """The (type, DER bytes) of each PEM block Go's `pem.Decode` would return, in order (headers skipped)."""
    found = []
    for match in _BLOCK.finditer(data):
        body = match.group(2)
        if b":" in body.split(b"\n\n", 1)[0] and b"\n\n" in body:
            body = body.split(b"\n\n", 1)[1]  # RFC 1421 headers
        try:
            found.append((match.group(1).decode("latin-1"), base64.b64decode(b"".join(body.split()), validate=True)))
        except (binascii.Error, ValueError):
            continue  # Go skips a block whose body is not base64
    return found


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


def _certificate(cert_pem: bytes) -> bytes | str:
    blocks = _blocks(cert_pem)
    certs = [der for kind, der in blocks if kind == "CERTIFICATE"]
    if certs:
        return certs[0]
    skipped = [kind for kind, _ in blocks]
    if not skipped:
        return "tls: failed to find any PEM data in certificate input"
    if len(skipped) == 1 and skipped[0].endswith("PRIVATE KEY"):
        return ("tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM "
                "inputs may have been switched")
    return ('tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping PEM blocks of the '
            f"following types: {_go_list(skipped)}")


def _key(key_pem: bytes) -> bytes | str:
    skipped = []
    for kind, der in _blocks(key_pem):
        if kind == "PRIVATE KEY" or kind.endswith(" PRIVATE KEY"):
            return der
        skipped.append(kind)
    if not skipped:
        return "tls: failed to find any PEM data in key input"
    if skipped == ["CERTIFICATE"]:
        return "tls: found a certificate rather than a key in the PEM for the private key"
    return ('tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after skipping PEM blocks '
            f"of the following types: {_go_list(skipped)}")


def key_pair_problem(cert_pem: bytes, key_pem: bytes) -> str | None:
    """Go's `tls.X509KeyPair(cert_pem, key_pem)` error text, or None when they make a pair."""
    cert_der = _certificate(cert_pem)
    if isinstance(cert_der, str):
        return cert_der
    key_der = _key(key_pem)
    if isinstance(key_der, str):
        return key_der
    try:
        public = x509.load_der_x509_certificate(cert_der).public_key()
    except ValueError:
        return "x509: malformed certificate"
    try:
        private = serialization.load_der_private_key(key_der, password=None)
    except (ValueError, TypeError):
        return "tls: failed to parse private key"
    wanted = next((priv for pub, priv in _PUBLIC.items() if isinstance(public, pub)), None)
    if wanted is None:
        return "tls: unknown public key algorithm"
    if not isinstance(private, wanted):
        return "tls: private key type does not match public key type"
    raw = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if private.public_key().public_bytes(*raw) != public.public_bytes(*raw):
        return "tls: private key does not match public key"
    return None
