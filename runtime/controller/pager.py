"""`list_in_pages`: a whole collection read page by page, each page handed on before the next is read.

client-go's `tools/pager` as its reflector uses it: pages of `PAGE_SIZE`
(500) following the continue token, all at the first page's resourceVersion;
a continue token that expired meanwhile (410) starts one full list instead
(the pager's FullListIfExpired). What a caller keeps of a page (an
informer's transform of it) is all that outlives it, so reading 100,000
objects never holds them all at once.
"""

from __future__ import annotations

from typing import Any, Callable

from runtime.client.interface import Kind, Reader
from runtime.machinery import errors

__all__ = ["PAGE_SIZE", "list_in_pages"]

#: Objects per page (client-go's reflector default).
PAGE_SIZE = 500


async def list_in_pages(reader: Reader, kind: Kind, each: Callable[[list[Any]], None], *, namespace: str = "",
                        label_selector: str = "", field_selector: str = "", page_size: int = PAGE_SIZE) -> str:
    """Call `each(items)` for every page of the collection; return its resourceVersion. Raises what the
    reads raise (StatusError, ClientError); on an expired continue token the pages seen so far are
    followed by the whole collection again, so `each` must tolerate objects given twice."""
    token = ""
    while True:
        try:
            page = await reader.list(kind, namespace=namespace, label_selector=label_selector,
                                     field_selector=field_selector, limit=page_size, continue_token=token)
        except errors.Expired:
            if not token:
                raise
            page = await reader.list(kind, namespace=namespace, label_selector=label_selector,
                                     field_selector=field_selector)
            token = ""
        each(page.items)
        if not page.continue_token:
            return page.resource_version  # a continued page has its first page's version
        token = page.continue_token
