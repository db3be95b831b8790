"""TLS material and kubeconfig files: created once, reused, private, and usable by a TLS client."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from api.certs import ensure_pki, issue_client_cert, new_admin_token
from runtime.client.kubeconfig import KubeConfig, KubeConfigError, load_kubeconfig, ssl_context, write_kubeconfig


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _sans(pem: bytes) -> x509.SubjectAlternativeName:
    cert = x509.load_pem_x509_certificate(pem)
    return cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext, hostname: str) -> None:
    """Run a TLS handshake in memory; raises ssl.SSLError when the client rejects the server."""
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    c = client.wrap_bio(c_in, c_out, server_hostname=hostname)
    s = server.wrap_bio(s_in, s_out, server_side=True)
    done = {"c": False, "s": False}
    for _ in range(20):
        for name, end in (("c", c), ("s", s)):
            if not done[name]:
                try:
                    end.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if all(done.values()):
            return
    raise AssertionError("handshake did not finish")


def test_pki_is_created_once_and_reused(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path)
    second = ensure_pki(tmp_path)
    assert first == second
    assert {p.name for p in (tmp_path / "pki").iterdir()} == {"ca.crt", "ca.key", "serving.crt", "serving.key"}


def test_key_files_are_private(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    assert _mode(pki.serving_key_path) == 0o600
    assert _mode(pki.ca_cert_path.with_name("ca.key")) == 0o600


def test_keys_are_ecdsa_p256(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    for pem in (pki.ca_cert_pem, pki.serving_cert_pem):
        key = x509.load_pem_x509_certificate(pem).public_key()
        assert isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"


def test_serving_cert_names_local_addresses_and_the_host_name(tmp_path: Path) -> None:
    sans = _sans(ensure_pki(tmp_path, ["api.example.test", "10.0.0.7"]).serving_cert_pem)
    assert {"localhost", socket.gethostname(), "api.example.test"} <= set(sans.get_values_for_type(x509.DNSName))
    ips = set(sans.get_values_for_type(x509.IPAddress))
    assert {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"), ipaddress.ip_address("10.0.0.7")} <= ips


def test_serving_cert_is_issued_by_the_ca_for_server_auth(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    ca = x509.load_pem_x509_certificate(pki.ca_cert_pem)
    serving = x509.load_pem_x509_certificate(pki.serving_cert_pem)
    serving.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    usage = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in usage


def test_tls_client_trusting_the_ca_accepts_the_server(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pki.serving_cert_path, pki.serving_key_path)
    client = ssl.create_default_context(cadata=pki.ca_cert_pem.decode())
    _handshake(server, client, "localhost")
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(server, client, "not-this-host.example")


def _requiring_client_certs(pki) -> ssl.SSLContext:
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pki.serving_cert_path, pki.serving_key_path)
    server.load_verify_locations(cadata=pki.ca_cert_pem.decode())
    server.verify_mode = ssl.CERT_REQUIRED
    return server


def test_a_kubeconfigs_tls_context_trusts_its_ca_and_presents_its_client_certificate(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    cert_pem, key_pem = issue_client_cert(pki, "alice")
    server = _requiring_client_certs(pki)
    _handshake(server, ssl_context(KubeConfig("https://localhost", pki.ca_cert_pem, client_cert_pem=cert_pem,
                                              client_key_pem=key_pem)), "localhost")
    with pytest.raises(ssl.SSLError):  # no client certificate: the server refuses the handshake
        _handshake(server, ssl_context(KubeConfig("https://localhost", pki.ca_cert_pem, token="t")), "localhost")
    with pytest.raises(ssl.SSLCertVerificationError):  # the system's CAs do not know this server
        _handshake(server, ssl_context(KubeConfig("https://localhost", None, client_cert_pem=cert_pem,
                                                  client_key_pem=key_pem)), "localhost")


def test_an_insecure_kubeconfigs_tls_context_skips_verifying_the_server(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pki.serving_cert_path, pki.serving_key_path)
    context = ssl_context(KubeConfig("https://elsewhere", None, token="t", insecure=True))
    assert context.verify_mode == ssl.CERT_NONE and not context.check_hostname
    _handshake(server, context, "not-this-host.example")


def test_new_host_reissues_the_serving_cert_under_the_same_ca(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path)
    second = ensure_pki(tmp_path, ["new-name.example"])
    assert second.ca_cert_pem == first.ca_cert_pem and second.ca_key_pem == first.ca_key_pem
    assert second.serving_cert_pem != first.serving_cert_pem
    assert "new-name.example" in _sans(second.serving_cert_pem).get_values_for_type(x509.DNSName)


def test_client_cert_names_user_and_groups(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    cert_pem, key_pem = issue_client_cert(pki, "alice", ["dev", "ops"])
    cert = x509.load_pem_x509_certificate(cert_pem)
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(pki.ca_cert_pem))
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == ["alice"]
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["dev", "ops"]
    assert ExtendedKeyUsageOID.CLIENT_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert b"PRIVATE KEY" in key_pem


def test_admin_tokens_are_long_and_random() -> None:
    tokens = {new_admin_token() for _ in range(8)}
    assert len(tokens) == 8 and all(len(t) >= 40 for t in tokens)


def test_kubeconfig_round_trips_server_ca_and_token(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    path = write_kubeconfig(tmp_path / "kube" / "config", "https://127.0.0.1:6443", pki.ca_cert_pem, token="t0k")
    config = load_kubeconfig(path)
    assert (config.server, config.ca_pem, config.token) == ("https://127.0.0.1:6443", pki.ca_cert_pem, "t0k")
    assert config.client_cert_pem is None and config.insecure is False


def test_kubeconfig_round_trips_client_certificates(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    cert, key = issue_client_cert(pki, "bob", ["team"])
    path = write_kubeconfig(tmp_path / "config", "https://localhost:6443", pki.ca_cert_pem,
                            client_cert_pem=cert, client_key_pem=key, user_name="bob")
    config = load_kubeconfig(path, context="miniplane")
    assert (config.client_cert_pem, config.client_key_pem, config.token) == (cert, key, None)


def test_kubeconfig_is_private(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", "https://localhost:6443", b"ca", token="x")
    assert _mode(path) == 0o600


def test_kubeconfig_unknown_context_is_an_error(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", "https://localhost:6443", None, token="x")
    with pytest.raises(KubeConfigError):
        load_kubeconfig(path, context="elsewhere")


def test_kubeconfig_reads_referenced_files(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(b"CA-PEM")
    (tmp_path / "token").write_text("from-file\n")
    (tmp_path / "config").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://h:1', certificate-authority: ca.crt,"
        " insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {tokenFile: token}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n")
    config = load_kubeconfig(tmp_path / "config")
    assert (config.ca_pem, config.token, config.insecure) == (b"CA-PEM", "from-file", True)
