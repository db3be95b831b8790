"""TLS material: a private CA, the server's serving certificate, client certificates, tokens.

kubectl sends bearer tokens only over HTTPS, so the server always serves TLS
with a certificate from its own CA; the CA goes into the kubeconfig.

`ensure_pki(data_dir, hosts)` creates the CA and the serving pair once under
`<data_dir>/pki/` (`ca.crt`, `ca.key`, `serving.crt`, `serving.key`) and reuses
them on later starts. The serving certificate is reissued from the same CA
when it lacks a requested host or is near expiry, so kubeconfigs already
handed out stay valid. Keys are ECDSA P-256, written with mode 0600.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import secrets
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["Pki", "ensure_pki", "issue_client_cert", "new_admin_token", "DEFAULT_HOSTS"]

DEFAULT_HOSTS = ("localhost", "127.0.0.1", "::1")
_CA_DAYS = 3650
_SERVING_DAYS = 3650
_RENEW_BEFORE = dt.timedelta(days=30)
_BACKDATE = dt.timedelta(minutes=5)  # tolerate small clock skew between server and clients


@dataclass(frozen=True)
class Pki:
    """The server's TLS material: PEM bytes and the files they live in."""

    ca_cert_pem: bytes
    ca_key_pem: bytes
    serving_cert_pem: bytes
    serving_key_pem: bytes
    ca_cert_path: Path
    serving_cert_path: Path
    serving_key_path: Path


def new_admin_token() -> str:
    """Return a fresh random bearer token (256 bits, URL-safe text)."""
    return secrets.token_urlsafe(32)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write atomically (temp file, then rename) so a crash never leaves half a key."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, mode)  # the umask may have narrowed or the file pre-existed
    os.replace(tmp, path)


def _san(hosts: Iterable[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
             days: int) -> x509.CertificateBuilder:
    now = _now()
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE).not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))


def _new_ca() -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"miniplane-ca@{int(_now().timestamp())}")])
    cert = (_builder(name, name, key.public_key(), _CA_DAYS)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def _leaf(ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, subject: x509.Name,
          usage: x509.ObjectIdentifier, days: int,
          san: x509.SubjectAlternativeName | None = None) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    builder = (_builder(subject, ca_cert.subject, key.public_key(), days)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=False, crl_sign=False,
                                            content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False,
                                            encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                              critical=False))
    if san is not None:
        builder = builder.add_extension(san, critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def _serving_covers(cert: x509.Certificate, hosts: Iterable[str]) -> bool:
    """True when the certificate names every host and is not close to expiry."""
    if cert.not_valid_after_utc - _RENEW_BEFORE < _now():
        return False
    try:
        have = set(cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    except x509.ExtensionNotFound:
        return False
    return set(_san(hosts)) <= have


def ensure_pki(data_dir: str | os.PathLike[str], hosts: Iterable[str] = ()) -> Pki:
    """Return the server's PKI, creating what is missing under `<data_dir>/pki/`.

    hosts: extra DNS names or IP addresses for the serving certificate, added
    to localhost, 127.0.0.1, ::1 and this machine's host name. An existing CA
    is always kept; raises ValueError if its files are unreadable.
    """
    pki_dir = Path(data_dir) / "pki"
    pki_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    ca_crt, ca_key_path = pki_dir / "ca.crt", pki_dir / "ca.key"
    srv_crt, srv_key = pki_dir / "serving.crt", pki_dir / "serving.key"
    all_hosts = [*DEFAULT_HOSTS, socket.gethostname(), *hosts]

    if ca_crt.exists() and ca_key_path.exists():
        ca_cert = x509.load_pem_x509_certificate(ca_crt.read_bytes())
        ca_key = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
        if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{ca_key_path}: not an ECDSA key")
        os.chmod(ca_key_path, 0o600)
    else:
        ca_cert, ca_key = _new_ca()
        _write(ca_key_path, _key_pem(ca_key), 0o600)
        _write(ca_crt, _cert_pem(ca_cert), 0o644)
        srv_crt.unlink(missing_ok=True)  # issued by a CA that is gone

    reuse = srv_crt.exists() and srv_key.exists()
    if reuse:
        serving = x509.load_pem_x509_certificate(srv_crt.read_bytes())
        reuse = serving.issuer == ca_cert.subject and _serving_covers(serving, all_hosts)
    if not reuse:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "miniplane")])
        serving, key = _leaf(ca_cert, ca_key, name, ExtendedKeyUsageOID.SERVER_AUTH, _SERVING_DAYS,
                             _san(all_hosts))
        _write(srv_key, _key_pem(key), 0o600)
        _write(srv_crt, _cert_pem(serving), 0o644)
    os.chmod(srv_key, 0o600)
    return Pki(ca_cert_pem=ca_crt.read_bytes(), ca_key_pem=ca_key_path.read_bytes(),
               serving_cert_pem=srv_crt.read_bytes(), serving_key_pem=srv_key.read_bytes(),
               ca_cert_path=ca_crt, serving_cert_path=srv_crt, serving_key_path=srv_key)


def issue_client_cert(pki: Pki, common_name: str, organizations: Iterable[str] = (),
                      *, days: int = 365) -> tuple[bytes, bytes]:
    """Return (cert_pem, key_pem) of a client certificate signed by the CA.

    The subject's CN is the user name and each O a group, as Kubernetes reads
    client certificates.
    """
    ca_cert = x509.load_pem_x509_certificate(pki.ca_cert_pem)
    ca_key = serialization.load_pem_private_key(pki.ca_key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key is not an ECDSA key")
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
                        + [x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert, key = _leaf(ca_cert, ca_key, subject, ExtendedKeyUsageOID.CLIENT_AUTH, days)
    return _cert_pem(cert), _key_pem(key)
