"""A control plane served in process on a trio loop of its own thread, for synchronous callers.

Contract: `with ThreadedPlane(tmp_path, **options) as plane:` starts
`tests.support.server.start_in_process(nursery, tmp_path, **options)` in a
new thread's `trio.run` and returns once it serves; leaving the block stops
it and joins the thread. Property-based tests (Hypothesis, schemathesis)
run their examples synchronously and share this one server across them.

- `plane.request(method, path, token="admin", **httpx_kwargs)` sends one
  request through the in-process ASGI transport and returns the answer,
  body read (and decoded, when gzipped). A watch (`watch` in the query) is read for at most
  `watch_read` seconds (trio time of the server's thread), then closed:
  only its head and first events matter to a caller that checks answers.
- `plane.revision()`: the store's current revision (every write moves it).
- `plane.session()`: a `requests.Session` whose `http://miniplane` URLs
  reach the app through `plane.request` (what schemathesis calls with);
  each answer has a urllib3 response as `raw`, where schemathesis reads headers.
- `plane.call(async_fn, *args)`: run any coroutine function in the server's
  loop (`trio.from_thread.run`).

Caveats: one request at a time per caller thread; the server's trio clock is
the real one (no MockClock in another thread).
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import httpx
import requests
import trio
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from urllib3 import HTTPHeaderDict, HTTPResponse

from tests.support.server import IN_PROCESS_URL, Server, start_in_process

__all__ = ["ThreadedPlane", "Answer"]

T = TypeVar("T")


class Answer:
    """An answer read whole: status, headers, body."""

    def __init__(self, status_code: int, headers: httpx.Headers, content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class ThreadedPlane:
    """See the module doc."""

    def __init__(self, tmp_path: Path, *, watch_read: float = 0.2, **options: Any) -> None:
        self._tmp_path = tmp_path
        self._options = options
        self._watch_read = watch_read
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="threaded-plane", daemon=True)
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._error: BaseException | None = None
        self.server: Server | None = None

    def __enter__(self) -> "ThreadedPlane":
        self._thread.start()
        self._ready.wait(120)
        if self._error is not None or self.server is None:
            raise RuntimeError("the threaded control plane did not start") from self._error
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None and self._stop is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(60)

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self.server = await start_in_process(nursery, self._tmp_path, **self._options)
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run `fn(*args)` in the server's loop; returns its result, raises what it raises."""
        return trio.from_thread.run(fn, *args, trio_token=self._token)

    def request(self, method: str, path: str, *, token: str | None = "admin", **kwargs: Any) -> Answer:
        server = self.server
        assert server is not None
        params = kwargs.get("params") or {}
        watching = "watch" in (params if isinstance(params, dict) else dict(params)) or "watch=" in path

        async def send() -> Answer:
            async with server.client(token=token, timeout=30) as client:
                async with client.stream(method, path, **kwargs) as response:
                    body = b""
                    with trio.move_on_after(self._watch_read if watching else 60):
                        async for chunk in response.aiter_bytes():  # decoded (gzip)
                            body += chunk
                    return Answer(response.status_code, response.headers, body)

        return self.call(send)

    def revision(self) -> int:
        assert self.server is not None and self.server.plane is not None
        return self.call(self.server.plane.store.current_revision)

    def session(self) -> requests.Session:
        session = requests.Session()
        session.mount(IN_PROCESS_URL, _Adapter(self))
        return session


class _Adapter(BaseAdapter):
    """requests -> the threaded plane's in-process app (no socket)."""

    def __init__(self, plane: ThreadedPlane) -> None:
        super().__init__()
        self._plane = plane

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        path = request.url[len(IN_PROCESS_URL):] if request.url else "/"
        headers = dict(request.headers)
        body = request.body.encode() if isinstance(request.body, str) else (request.body or b"")
        answer = self._plane.request(request.method or "GET", path, token=None, headers=headers, content=body)
        # The body is decoded already: its encoding and length no longer describe it.
        kept = HTTPHeaderDict([(k, v) for k, v in answer.headers.multi_items()
                               if k.lower() not in ("content-encoding", "content-length")])
        # A urllib3 answer under it, as requests' own adapter gives: schemathesis reads the headers from `raw`.
        raw = HTTPResponse(body=io.BytesIO(answer.content), headers=kept, status=answer.status_code,
                           version=11, preload_content=False, decode_content=False)
        response = requests.Response()
        response.raw = raw
        response.status_code = answer.status_code
        response.headers = CaseInsensitiveDict(kept)
        response.url = request.url or ""
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass
