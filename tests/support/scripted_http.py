"""A scripted HTTP/1.1 server on a loopback port, for clients that open their own connections.

`scripted_server(answer)` serves until its context ends and yields a
`Scripted`: its `url` and what it saw (`connections` accepted, `requests`
as (path, body)). `answer(path, body)` returns an `Answer`: a status, body
parts (each sent as written, so a test can split a line across writes), and
what to do then: keep the connection, close it after the answer, or close
it before the answer ends (mid-body).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import AsyncIterator, Callable, Literal

import h11
import trio

__all__ = ["Answer", "Scripted", "scripted_server"]


@dataclass
class Answer:
    status: int = 200
    parts: list[bytes] = field(default_factory=lambda: [b"{}"])
    then: Literal["keep", "close", "cut"] = "keep"
    pause: float = 0.0  # seconds to wait between parts


@dataclass
class Scripted:
    url: str = ""
    connections: int = 0
    requests: list[tuple[str, bytes]] = field(default_factory=list)


async def _serve(answer: Callable[[str, bytes], Answer], seen: Scripted, stream: trio.SocketStream) -> None:
    seen.connections += 1
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            path, body = "", b""
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = await stream.receive_some(65536)
                    conn.receive_data(data)
                    if not data and conn.their_state is h11.IDLE:
                        return
                elif isinstance(event, h11.Request):
                    path = event.target.decode()
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
                else:
                    return
            seen.requests.append((path, body))
            reply = answer(path, body)
            headers = [(b"content-type", b"application/json")]
            if reply.then == "cut":  # promise more than is sent
                headers.append((b"content-length", str(sum(map(len, reply.parts)) + 100).encode()))
            else:
                headers.append((b"transfer-encoding", b"chunked"))
            await stream.send_all(conn.send(h11.Response(status_code=reply.status, headers=headers)))
            for part in reply.parts:
                await stream.send_all(conn.send(h11.Data(data=part)))
                await trio.sleep(reply.pause)
            if reply.then == "cut":
                return
            await stream.send_all(conn.send(h11.EndOfMessage()))
            if reply.then == "close":
                return
            conn.start_next_cycle()
    except (trio.BrokenResourceError, h11.ProtocolError):
        return
    finally:
        await trio.aclose_forcefully(stream)


@asynccontextmanager
async def scripted_server(answer: Callable[[str, bytes], Answer]) -> AsyncIterator[Scripted]:
    seen = Scripted()
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, partial(_serve, answer, seen), 0,
                                                host="127.0.0.1"))
        seen.url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}"
        yield seen
        nursery.cancel_scope.cancel()
