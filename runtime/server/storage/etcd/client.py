"""`EtcdClient`: the few etcd v3 calls `EtcdStore` makes, over etcd's JSON gateway, under trio.

Why not an etcd library: no maintained etcd v3 client runs under trio.
aetcd is asyncio-only; etcd3 (python-etcd3) runs grpcio's blocking stubs
and watch threads; grpcio's aio API needs an asyncio loop. etcd (3.4 and
later) serves its gRPC API as JSON over HTTP on the client port as well (the
grpc-gateway: `/v3/kv/range`, `/v3/kv/txn`, `/v3/kv/compaction`,
`/v3/watch`, `/v3/maintenance/status`), so this module speaks that: POST a
JSON request, read a JSON answer; a watch is one streaming POST answering
newline-delimited JSON messages, each `{"result": WatchResponse}`. The HTTP
is `runtime.server.storage.etcd.http` (httptools under trio; why not httpx: there);
the JSON is orjson's: 10-24% less of the client's CPU per create than `json`
(every call and every watch line pays it; the README has the figures).

The gateway's JSON is protobuf's: bytes (keys, values) are base64, int64
fields are strings, and zero values (0, false, empty, the first enum value
such as PUT) are left out, so readers use `.get` with the zero as default.

Contract:
- `call(path, body)` returns the decoded answer. Endpoints are tried in
  turn, starting from the last one that answered: a failure to connect moves
  on to the next; any other transport failure does too for an `idempotent`
  call (reads), while a write raises at once (it may have been applied).
- Every call is bounded by `timeout` seconds (connect, then the exchange); a
  watch stream has no read timeout once open (an idle watch is silent).
- Raises `StoreUnavailable` when no endpoint answers (or the cluster says it
  cannot serve: no leader, request timed out; or the gateway lost its own
  connection to etcd under the call, as when etcd stops: a 200 watch stream
  then ends with "grpc: the client connection is closing"), `EtcdRequestError` when etcd
  refuses the request (its `.message` is etcd's, e.g. "etcdserver: mvcc:
  required revision has been compacted"), ValueError for a bad endpoint.

Internal to `runtime.server.storage.etcd`: imported by its modules only.
"""

from __future__ import annotations

import base64
import ssl
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

import orjson

from runtime.server.storage.base import StoreError, StoreUnavailable
from runtime.server.storage.etcd.http import Broken, Endpoint, Streamed, Unreached

__all__ = [
    "EtcdClient", "EtcdRequestError", "JsonLines", "b64", "unb64", "parse_endpoints", "tls_context",
    "COMPACTED_MESSAGE", "FUTURE_MESSAGE",
]

#: etcd's messages for a read or watch below its compaction, and above its head.
COMPACTED_MESSAGE = "required revision has been compacted"
FUTURE_MESSAGE = "required revision is a future revision"

# gRPC codes meaning "try again later", as the gateway reports them. CANCELLED: the gateway's own
# gRPC connection to etcd went away under the call (etcd stopping answers a watch stream with
# "grpc: the client connection is closing", code 1), so the call's outcome is unknown.
_UNAVAILABLE_CODES = {1, 4, 14}  # CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE
_UNAVAILABLE_MESSAGES = ("no leader", "request timed out", "leader changed", "too many requests",
                         "not capable", "server stopped", "connection is closing", "transport is closing",
                         "error reading from server")


class EtcdRequestError(StoreError):
    """etcd refused a request: `code` is the gRPC status code, `message` etcd's words."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"etcd: {message} (code {code})")
        self.code = code
        self.message = message


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def parse_endpoints(spec: str, *, secure: bool) -> list[str]:
    """`host:port[,host:port...]` (each may also be a URL) as base URLs. Raises ValueError."""
    scheme = "https" if secure else "http"
    out = []
    for part in spec.split(","):
        part = part.strip().rstrip("/")
        if not part:
            continue
        if "://" not in part:
            part = f"{scheme}://{part}"
        try:
            url = urlsplit(part)
            port = url.port
        except ValueError as exc:  # a port that is not a number, or out of range
            raise ValueError(f"etcd endpoint {part!r}: expected HOST:PORT") from exc
        if url.scheme not in ("http", "https") or not url.hostname or port is None or \
                url.path or url.query or url.fragment or url.username is not None:
            raise ValueError(f"etcd endpoint {part!r}: expected HOST:PORT")
        out.append(f"{url.scheme}://{url.netloc}")
    if not out:
        raise ValueError("no etcd endpoint given")
    return out


def tls_context(cafile: str | None, certfile: str | None, keyfile: str | None) -> ssl.SSLContext:
    """A client TLS context: trust `cafile` (else the system's), present certfile/keyfile if given.

    The same three files as kube-apiserver's --etcd-cafile, --etcd-certfile, --etcd-keyfile.
    """
    if keyfile and not certfile:
        raise ValueError("an etcd keyfile needs its certfile")
    ctx = ssl.create_default_context(cafile=cafile)
    if certfile:
        ctx.load_cert_chain(certfile, keyfile)
    return ctx


def _refusal(status: int, text: str) -> StoreError:
    """The error an etcd error answer (HTTP status and body) stands for."""
    try:
        body = orjson.loads(text)
    except ValueError:
        body = {}
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):  # a stream's error message: {"error": {"grpc_code", "message"}}
        code, message = int(err.get("grpc_code", 2) or 2), str(err.get("message", ""))
    else:
        code = int(body.get("code", 2) or 2) if isinstance(body, dict) else 2
        message = str(body.get("message") or err or text[:200]) if isinstance(body, dict) else text[:200]
    if code in _UNAVAILABLE_CODES or status in (502, 503, 504) or \
            any(m in message for m in _UNAVAILABLE_MESSAGES):
        return StoreUnavailable(f"etcd: {message}")
    return EtcdRequestError(code, message)


class EtcdClient:
    """POSTs JSON to the first etcd endpoint that answers. Safe to share between trio tasks."""

    def __init__(self, endpoints: list[str], *, ssl_context: ssl.SSLContext | None = None,
                 timeout: float = 5.0) -> None:
        if not endpoints:
            raise ValueError("no etcd endpoint given")
        self.endpoints = list(endpoints)
        self.timeout = timeout
        self._current = 0  # the endpoint that answered last: tried first
        self._http = [Endpoint(url, ssl_context=ssl_context, timeout=timeout) for url in self.endpoints]

    @property
    def endpoint(self) -> str:
        """The endpoint tried first (the last one that answered)."""
        return self.endpoints[self._current]

    def _order(self) -> list[int]:
        n = len(self.endpoints)
        return [(self._current + i) % n for i in range(n)]

    async def call(self, path: str, body: dict[str, Any], *, idempotent: bool) -> dict[str, Any]:
        """POST `body` to `path`; returns the JSON answer. See the module contract for errors."""
        payload = orjson.dumps(body)
        failures = []
        for i in self._order():
            try:
                status, answer = await self._http[i].post(path, payload)
            except Unreached as exc:
                failures.append(str(exc))
                continue  # never reached the server: safe to send elsewhere
            except Broken as exc:
                if not idempotent:
                    raise StoreUnavailable(f"etcd {exc}; the write may have been applied") from exc
                failures.append(str(exc))
                continue
            if status != 200:
                err = _refusal(status, answer.decode(errors="replace"))
                if isinstance(err, StoreUnavailable) and idempotent:
                    failures.append(f"{self.endpoints[i]}: {err}")
                    continue
                raise err
            self._current = i
            try:
                return orjson.loads(answer)
            except ValueError as exc:
                raise StoreError(f"etcd {self.endpoints[i]}{path}: answer is not JSON") from exc
        raise StoreUnavailable(f"no etcd endpoint answered {path}: " + "; ".join(failures))

    @asynccontextmanager
    async def stream(self, path: str, body: dict[str, Any]) -> AsyncIterator[JsonLines]:
        """POST `body` to `path` and yield the answer's JSON lines (see `JsonLines`).

        Opening tries the endpoints in turn; raises StoreUnavailable when none
        answers, or the error etcd answered.
        """
        payload = orjson.dumps(body)
        failures = []
        for i in self._order():
            try:
                async with self._http[i].stream(path, payload) as answer:
                    if answer.status != 200:
                        text = (await answer.read_all()).decode(errors="replace")
                        raise _refusal(answer.status, text)
                    self._current = i
                    yield JsonLines(answer, self.endpoints[i])
                    return
            except (Unreached, Broken) as exc:
                failures.append(str(exc))
        raise StoreUnavailable(f"no etcd endpoint answered {path}: " + "; ".join(failures))

    async def aclose(self) -> None:
        """Close every idle connection."""
        for endpoint in self._http:
            await endpoint.aclose()


class JsonLines:
    """The JSON messages of a streaming answer, one per line, each unwrapped from `{"result": ...}`."""

    def __init__(self, answer: Streamed, endpoint: str) -> None:
        self._answer = answer
        self._endpoint = endpoint

    async def next(self) -> dict[str, Any] | None:
        """The next message, or None when the server ended the stream.

        Raises StoreUnavailable when the connection breaks, the StoreError an
        error message stands for, StoreError for a line that is not JSON.
        """
        while True:
            try:
                line = await self._answer.next_line()
            except Broken as exc:
                raise StoreUnavailable(f"etcd {self._endpoint}: {exc}") from exc
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                message = orjson.loads(line)
            except ValueError as exc:
                raise StoreError(f"etcd {self._endpoint}: a stream line is not JSON") from exc
            if "error" in message:
                raise _refusal(200, line.decode(errors="replace"))
            return message.get("result") or {}
