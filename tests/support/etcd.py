"""A real etcd for tests: a child process on free loopback ports with its own data directory.

Contract: `EtcdServer(data_dir)` picks free client and peer ports (below the ephemeral range, so that no
outgoing connection takes one before etcd binds it); `start()`
launches etcd (returns at once), `await wait_healthy()` waits until its
`/health` answers (bounded by `trio.fail_after`; the only polling allowed in
tests: a real child process becoming ready), `stop()` terminates it and
waits for it to exit. The same object can start again on the same ports and
data (a restart). `start_etcd(data_dir)` does both from synchronous code (a
session fixture), `etcd_binary()` finds the binary. With `tls=make_tls(dir)`
etcd serves HTTPS and requires client certificates signed by that CA.
`fresh_prefix()` is a key prefix no other test uses (tests share one etcd);
`await raw_keys(endpoint, prefix)` reads what etcd holds under a prefix, with
a plain HTTP client.

etcd comes from Debian's `etcd-server`, installed by `make etcd` (a
prerequisite of `make test`); `MINIPLANE_ETCD` may name another binary. When
there is none, `etcd_binary()` raises EtcdNotFound saying so, and tests that
need etcd fail with that reason: they are never skipped.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import random
import shutil
import socket
import ssl
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import trio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["EtcdServer", "EtcdNotFound", "EtcdTLS", "etcd_binary", "make_tls", "start_etcd", "fresh_prefix",
           "raw_keys"]


class EtcdNotFound(RuntimeError):
    """No etcd binary: `make etcd` installs Debian's etcd-server."""


def etcd_binary() -> str:
    """The etcd binary to run: $MINIPLANE_ETCD, else `etcd` on PATH. Raises EtcdNotFound."""
    named = os.environ.get("MINIPLANE_ETCD")
    if named:
        if not os.access(named, os.X_OK):
            raise EtcdNotFound(f"MINIPLANE_ETCD={named} is not an executable")
        return named
    found = shutil.which("etcd") or next(
        (p for p in ("/usr/bin/etcd", "/usr/local/bin/etcd") if os.access(p, os.X_OK)), None)
    if found is None:
        raise EtcdNotFound("etcd is not installed: run `make etcd` (apt-get install etcd-server), "
                           "or set MINIPLANE_ETCD to an etcd binary")
    return found


@dataclass(frozen=True)
class EtcdTLS:
    """PEM files: a CA, etcd's serving pair (for 127.0.0.1) and a client pair, both signed by the CA."""

    cafile: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def client_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.cafile))
        ctx.load_cert_chain(str(self.client_cert), str(self.client_key))
        return ctx


def make_tls(directory: Path) -> EtcdTLS:
    """Write a fresh CA, a server pair for 127.0.0.1 and a client pair under `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def issue(name: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
              signer: ec.EllipticCurvePrivateKey, *, ca: bool = False,
              usage: list[x509.ObjectIdentifier] | None = None) -> x509.Certificate:
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(issuer).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if usage is not None:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usage), critical=False)
        if usage is not None and ExtendedKeyUsageOID.SERVER_AUTH in usage:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    def write(name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> tuple[Path, Path]:
        cert_path, key_path = directory / f"{name}.pem", directory / f"{name}-key.pem"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return cert_path, key_path

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "etcd test CA")])
    ca = issue("etcd test CA", ca_key, ca_name, ca_key, ca=True)
    cafile, _ = write("ca", ca, ca_key)
    server_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    # The server pair also for client auth: etcd's JSON gateway dials etcd's own gRPC port with it.
    both = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    server = write("server", issue("etcd", server_key, ca_name, ca_key, usage=both), server_key)
    client = write("client", issue("miniplane", client_key, ca_name, ca_key,
                                   usage=[ExtendedKeyUsageOID.CLIENT_AUTH]), client_key)
    return EtcdTLS(cafile, *server, *client)


def fresh_prefix() -> str:
    """`/test-<random>`: a key prefix of one test on the session's etcd."""
    return f"/test-{uuid.uuid4().hex[:12]}"


async def raw_keys(endpoint: str, prefix: str) -> dict[str, bytes]:
    """Every key under `prefix` (ending in '/') as etcd holds it, read with a plain HTTP client."""
    start = prefix.encode()
    end = start[:-1] + bytes([start[-1] + 1])
    async with httpx.AsyncClient(trust_env=False) as http:
        resp = await http.post(f"http://{endpoint}/v3/kv/range", json={
            "key": base64.b64encode(start).decode(), "range_end": base64.b64encode(end).decode()})
    resp.raise_for_status()
    return {base64.b64decode(kv["key"]).decode(): base64.b64decode(kv.get("value", ""))
            for kv in resp.json().get("kvs", [])}


#: Where etcd's ports are drawn from: below the kernel's ephemeral range, which outgoing connections take
#: their local ports from. A port the kernel picked (`bind(0)`) is ephemeral: another test's connection
#: could take it before etcd binds it, or while a stopped etcd is down ("bind: address already in use").
_PORTS = range(20000, 32768)


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _free_port() -> int:
    """A loopback port free now, outside the ephemeral range (see `_PORTS`)."""
    ports = range(_PORTS.start, min(_PORTS.stop, _ephemeral_low())) or range(1024, 65536)  # a range set low
    for _ in range(100):
        port = random.choice(ports)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free loopback port in {ports.start}-{ports.stop - 1} after 100 tries")


class EtcdServer:
    """One etcd member serving http://127.0.0.1:<port>, its data under `data_dir`."""

    def __init__(self, data_dir: Path, *, binary: str | None = None, tls: EtcdTLS | None = None) -> None:
        self.binary = binary or etcd_binary()
        self.tls = tls
        self.data_dir = Path(data_dir)
        self.client_port = _free_port()
        self.peer_port = _free_port()
        self.log_path = self.data_dir.with_name(self.data_dir.name + ".log")
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        """`127.0.0.1:PORT`, as `EtcdStore.open` and `etcd://` URLs take it."""
        return f"127.0.0.1:{self.client_port}"

    @property
    def pid(self) -> int | None:
        """The running etcd's process id."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.endpoint}"

    def start(self) -> None:
        """Launch etcd; returns at once (see wait_healthy)."""
        assert self._proc is None or self._proc.poll() is not None, "already running"
        peer = f"http://127.0.0.1:{self.peer_port}"
        tls = [] if self.tls is None else [
            "--cert-file", str(self.tls.server_cert), "--key-file", str(self.tls.server_key),
            "--trusted-ca-file", str(self.tls.cafile), "--client-cert-auth"]
        log = open(self.log_path, "ab")
        try:
            self._proc = subprocess.Popen(
                [self.binary, "--name", "test", "--data-dir", str(self.data_dir),
                 "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                 "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", f"test={peer}", "--log-level", "warn", *tls],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        finally:
            log.close()  # the child keeps its own descriptor

    async def wait_healthy(self, timeout: float = 60) -> None:
        """Wait until etcd answers `/health` with true. Raises AssertionError if it exits first."""
        verify: ssl.SSLContext | bool = self.tls.client_context() if self.tls else True
        async with httpx.AsyncClient(timeout=2, trust_env=False, verify=verify) as http:
            with trio.fail_after(timeout):
                while True:
                    if self._proc is None or self._proc.poll() is not None:
                        raise AssertionError(f"etcd exited early; its log:\n{self.log_tail()}")
                    try:
                        resp = await http.get(self.url + "/health")
                        if resp.status_code == 200 and resp.json().get("health") == "true":
                            return
                    except httpx.TransportError:
                        pass
                    await trio.sleep(0.05)  # a child process becoming ready: nothing to wait on

    def stop(self) -> None:
        """Terminate etcd (SIGTERM, then SIGKILL after 10 s) and wait for it to exit."""
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def start_etcd(data_dir: Path, *, timeout: float = 60) -> EtcdServer:
    """Start etcd from synchronous code and wait until it is healthy. Raises EtcdNotFound."""
    server = EtcdServer(data_dir)
    server.start()
    try:
        trio.run(server.wait_healthy, timeout)
    except BaseException:
        server.stop()
        raise
    return server
