"""The real kubectl over HTTP/1.1 (`api.serving.http1`): kubectl speaks HTTP/2 by default (TLS's ALPN), and
client-go's `DISABLE_HTTP2` makes it speak HTTP/1.1, as older or proxied clients do."""

from __future__ import annotations

import os
import subprocess
from functools import partial

import trio

from tests.support.kubectl import KUBECTL, read_until

HTTP1 = {"DISABLE_HTTP2": "1"}

ROLE = b"""apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: over-http1
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list"]
"""


async def test_a_kubectl_session_over_http11_writes_reads_watches_and_deletes(kubectl, nursery):
    created = await kubectl("create", "namespace", "over-http1", env=HTTP1)
    assert "HTTP2 has been explicitly disabled" in created.err  # client-go says it speaks HTTP/1.1
    cmd = [KUBECTL, "--kubeconfig", str(kubectl.server.kubeconfig), "--cache-dir", kubectl.cache_dir,
           "get", "roles", "-n", "over-http1", "--watch"]
    proc = await nursery.start(partial(trio.run_process, cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       check=False, env={**os.environ, **HTTP1}))
    out: list[str] = []
    try:
        with trio.fail_after(60):  # a guard against a hang, not a timing assertion
            await kubectl("apply", "-f", "-", stdin=ROLE, env=HTTP1)  # a body in a POST (and a PATCH)
            await read_until(proc.stdout, "reader", out)  # the watch's chunked answer carries the event
    finally:
        proc.kill()
    got = await kubectl("get", "role", "reader", "-n", "over-http1", "-o", "jsonpath={.rules[0].verbs}", env=HTTP1)
    assert got.out == '["get","list"]'
    await kubectl("delete", "role", "reader", "-n", "over-http1", env=HTTP1)
    gone = await kubectl("get", "role", "reader", "-n", "over-http1", check=False, env=HTTP1)
    assert gone.code != 0 and "NotFound" in gone.err
