"""The serving process, apart from request handling: what puts the app on a socket and keeps the process.

Contract: nothing here knows a resource or a verb; the app (`api.app`) knows
no socket, only the `over_connection_limit()` seam of `listener`.

- `server`: `miniplane serve`'s control plane behind Hypercorn, over HTTPS;
- `listener`: the accept loop, counting open connections (`--max-connections`);
- `http1`: HTTP/1.1 on one connection, parsed by llhttp, framed here;
- `http2`: HTTP/2 on one connection (`http2_frames` its wire format,
  `http2_request` a request's fields checked);
- `hypercorn_internals`: the one module that touches Hypercorn's internals
  (its caveats at the top);
- `workers`: `--workers N`, the parent that forks and keeps N workers;
- `gc_tuning`: Python's cycle collector set for a server (paused during
  start-up, then frozen);
- `memory_release`: freed heap pages back to the system once quiet.
"""

__all__: list[str] = []
