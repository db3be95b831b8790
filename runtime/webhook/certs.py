"""A webhook server's TLS: a self-signed CA of its own and the serving certificate it signs.

`self_signed(hosts)` makes both, in memory, for the given host names and
addresses (ECDSA P-256, a year's validity): the CA's PEM is the
`caBundle` the server writes into its webhook configurations (as kopf's
`WebhookServer` does when given no certificate). `write_files(tls, folder)`
writes the serving pair where an ssl context loads it from.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["ServingTLS", "self_signed", "write_files"]

_DAYS = 365
_BACKDATE = dt.timedelta(minutes=5)  # tolerate a little clock skew with the API server


@dataclass(frozen=True)
class ServingTLS:
    """PEM bytes: the CA that clients trust, the serving certificate and its key."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    @property
    def ca_bundle(self) -> str:
        """The CA as a webhook's `clientConfig.caBundle` takes it (base64 of the PEM)."""
        return base64.b64encode(self.ca_pem).decode()


def _usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=True, key_cert_sign=ca, crl_sign=ca, content_commitment=False,
                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                         encipher_only=False, decipher_only=False)


def _san(hosts: Iterable[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def self_signed(hosts: Iterable[str]) -> ServingTLS:
    """A new CA and a serving certificate it signs for `hosts` (names and IP addresses)."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"miniplane-webhook-ca@{int(now.timestamp())}")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(now - _BACKDATE).not_valid_after(now + dt.timedelta(days=_DAYS))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(_usage(ca=True), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    hosts = list(hosts)
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0] if hosts else "webhook")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE).not_valid_after(now + dt.timedelta(days=_DAYS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(ca=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .add_extension(_san(hosts), critical=False)
            .sign(ca_key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return ServingTLS(ca.public_bytes(serialization.Encoding.PEM), leaf.public_bytes(serialization.Encoding.PEM),
                      key_pem)


def write_files(tls: ServingTLS, folder: Path) -> tuple[Path, Path]:
    """Write the serving certificate and key into `folder` (the key readable by its owner only); returns
    (certificate path, key path)."""
    cert, key = folder / "tls.crt", folder / "tls.key"
    cert.write_bytes(tls.cert_pem)
    key.touch(mode=0o600)
    key.write_bytes(tls.key_pem)
    return cert, key
