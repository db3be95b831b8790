"""The runtime's HTTP client over a scripted server: httpx's MockTransport.

Contract: `mock_client(handler, **kw)` is an `HTTPClient` (default scheme,
server `http://miniplane.test`) whose every request is answered by
`handler(request) -> httpx.Response`; `kw` goes to `HTTPClient`.
"""

from __future__ import annotations

from typing import Any, Callable

import httpx

from runtime.client.http import HTTPClient
from runtime.client.kubeconfig import KubeConfig
from runtime.machinery.scheme import Scheme

__all__ = ["mock_client", "CONFIG"]

CONFIG = KubeConfig("http://miniplane.test")


def mock_client(handler: Callable[[httpx.Request], httpx.Response], **kw: Any) -> HTTPClient:
    return HTTPClient(CONFIG, scheme=Scheme(), transport=httpx.MockTransport(handler), **kw)
