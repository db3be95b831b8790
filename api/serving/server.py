"""`miniplane serve`: the control plane (`api.assembly`) behind Hypercorn, over HTTPS.

At first start the data directory gets a CA and a serving certificate (unless
`--tls-cert-file` names one), and `admin.kubeconfig` is written at every start
(the server's URL, its CA, the admin token of a user in `system:masters`).

A worker of `--workers N` (`options.worker` set, see `api.serving.workers`) serves
the listening socket it inherited, with its own TLS context; its parent
writes the kubeconfig and says where it serves. The worker says it is ready
on its ready descriptor (a worker started beside the primary first waits
for the parent's word that the primary serves), and stops when its parent
is gone (its lifeline reads end-of-file).

A port that cannot be bound (in use, not allowed, an address not of this
host) raises `ListenError`, an OSError saying `cannot listen on HOST:PORT:
REASON`.
"""

from __future__ import annotations

import logging
import os
import ssl

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.config import Sockets

from api import certs
from api.assembly import ServeOptions, open_control_plane
from api.authn import capture_peer_certificates
from api.serving.listener import serve_counted
from api.serving.memory_release import run_memory_release
from runtime.client.kubeconfig import write_kubeconfig

__all__ = ["ServeOptions", "serve", "ListenError"]

log = logging.getLogger("miniplane")


class ListenError(OSError):
    """The server's address cannot be bound: `ListenError(errno, "cannot listen on HOST:PORT: address already in use")`."""

    @classmethod
    def of(cls, exc: OSError, address: str) -> ListenError:
        """`exc`, raised binding `address` (HOST:PORT), in these words (bind's own name no address)."""
        # The errno's own words: socket.create_server's strerror appends the address as a tuple.
        reason = os.strerror(exc.errno) if exc.errno else (exc.strerror or str(exc))
        return cls(exc.errno, f"cannot listen on {address}: {reason[:1].lower()}{reason[1:]}")


class _TLSConfig(HypercornConfig):
    """Hypercorn's config, with the TLS context recording peer certificates for client-cert auth."""

    def create_ssl_context(self) -> ssl.SSLContext | None:
        ctx = super().create_ssl_context()
        return capture_peer_certificates(ctx) if ctx is not None else None

    def create_sockets(self) -> Sockets:
        try:
            return super().create_sockets()
        except OSError as exc:
            raise ListenError.of(exc, self.bind[0]) from exc


def _hypercorn_config(options: ServeOptions, cert_file: str, key_file: str) -> _TLSConfig:
    config = _TLSConfig()
    host = options.bind if ":" not in options.bind else f"[{options.bind}]"
    config.bind = [f"fd://{options.worker.listen_fd}" if options.worker else f"{host}:{options.port}"]
    config.certfile, config.keyfile = cert_file, key_file
    if options.client_ca_file:
        config.ca_certs = options.client_ca_file
        config.verify_mode = ssl.CERT_OPTIONAL
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.keep_alive_timeout = 75
    config.graceful_timeout = 2
    return config


async def serve(options: ServeOptions, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Run the server until cancelled; started() with the server URL once it accepts requests."""
    async with open_control_plane(options) as plane:
        pki = certs.ensure_pki(plane.data_dir)
        cert_file = options.tls_cert_file or str(pki.serving_cert_path)
        key_file = options.tls_private_key_file or str(pki.serving_key_path)
        ca_pem = pki.ca_cert_pem if not options.tls_cert_file else None
        config = _hypercorn_config(options, cert_file, key_file)
        if options.worker is not None and options.worker.start_fd >= 0:
            await trio.lowlevel.wait_readable(options.worker.start_fd)  # the primary has bootstrapped
            os.close(options.worker.start_fd)
            await plane.registry.cache.wait_fresh()  # its policy is in this worker's authorizer too
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(serve_counted, plane.app, config, plane.state.limits)
            limits = plane.state.limits  # freed memory back to the system once no request is in flight
            nursery.start_soon(run_memory_release, lambda: limits.read_only == 0 and limits.mutating == 0)
            url = (binds[0] if binds else f"https://{config.bind[0]}").replace("0.0.0.0", "127.0.0.1")
            plane.state.server_address = url.split("://", 1)[1]
            if options.worker is not None:
                nursery.start_soon(_stop_with_parent, options.worker.lifeline_fd, nursery.cancel_scope)
                with os.fdopen(options.worker.ready_fd, "w") as ready:
                    ready.write(f"{url}\n")
                log.info("worker %d serving at %s", options.worker.index, url)
                task_status.started(url)
                return
            kubeconfig = options.kubeconfig_path or str(plane.data_dir / "admin.kubeconfig")
            write_kubeconfig(kubeconfig, url, ca_pem, token=plane.admin_token)
            log.info("miniplane serving at %s; admin kubeconfig: %s", url, kubeconfig)
            print(f"miniplane serving at {url}\n  export KUBECONFIG={os.path.abspath(kubeconfig)}\n"
                  f"  kubectl get clusterroles", flush=True)
            task_status.started(url)


async def _stop_with_parent(lifeline_fd: int, scope: trio.CancelScope) -> None:
    """Cancel `scope` once `lifeline_fd` reads end-of-file: the parent is gone (even killed with -9)."""
    await trio.lowlevel.wait_readable(lifeline_fd)
    log.warning("the parent of this worker is gone; stopping")
    scope.cancel()
