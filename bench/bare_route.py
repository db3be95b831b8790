"""The floor of the HTTP figures: one Hypercorn + quart-trio route over HTTPS, doing nothing else.

`GET /x` answers a ClusterRole's JSON (the bytes are made once); `POST /x`
reads the JSON body, decodes it, and answers 201 with the bytes it read. It
runs with the server's TLS certificate and the same Hypercorn settings as
`miniplane serve` (`api.serving.server`), so the difference to a miniplane figure is
miniplane's own work.

With `--listener miniplane` it serves through miniplane's own listener
(`api.serving.listener.serve_counted`: its HTTP/1.1 is `api.serving.http1`, llhttp's, where
Hypercorn's is h11), so that a figure can be held against the same HTTP
layer as well; the floor of the targets stays Hypercorn's own.

Run: `python bench/bare_route.py --cert CERT --key KEY [--port 0] [--listener hypercorn|miniplane]`;
prints `bare route at https://127.0.0.1:PORT` once it serves; SIGINT or SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from pathlib import Path

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from quart import Response, request
from quart_trio import QuartTrio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from api.limits import RequestLimits  # noqa: E402
from api.serving.listener import serve_counted  # noqa: E402

__all__ = ["make_app", "main"]

ROLE = json.dumps({
    "apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
    "metadata": {"name": "floor", "uid": "00000000-0000-0000-0000-000000000000", "resourceVersion": "1",
                 "creationTimestamp": "2024-01-01T00:00:00Z"},
    "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}]},
    separators=(",", ":")).encode()


def make_app() -> QuartTrio:
    """The bare app: GET and POST on `/x` (see the module docs)."""
    app = QuartTrio(__name__)

    @app.route("/x", methods=["GET"])
    async def get_x() -> Response:
        return Response(ROLE, status=200, content_type="application/json")

    @app.route("/x", methods=["POST"])
    async def post_x() -> Response:
        body = await request.get_data()
        json.loads(body)
        return Response(body, status=201, content_type="application/json")

    return app


async def _serve(cert: str, key: str, port: int, listener: str) -> None:
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.certfile, config.keyfile = cert, key
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.keep_alive_timeout = 75
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            if listener == "miniplane":
                binds = await nursery.start(serve_counted, make_app(), config, RequestLimits())
            else:
                binds = await nursery.start(serve, make_app(), config)
            print(f"bare route at {binds[0]}", flush=True)
            async for _ in signals:
                nursery.cancel_scope.cancel()
                break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--listener", choices=["hypercorn", "miniplane"], default="hypercorn")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    trio.run(_serve, args.cert, args.key, args.port, args.listener)
    return 0


if __name__ == "__main__":
    sys.exit(main())
