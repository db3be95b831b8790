"""`list_in_pages`: a collection read in pages of 500 at one resourceVersion; an expired token lists whole."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.client.interface import ObjectList
from runtime.controller.pager import PAGE_SIZE, list_in_pages
from runtime.machinery import errors


class PagedReader:
    """Answers `count` objects in pages at version "9"; `expire_at` fails that continue token with 410."""

    def __init__(self, count: int, expire_at: str = "") -> None:
        self.items = [{"metadata": {"name": f"o{i}"}} for i in range(count)]
        self.expire_at = expire_at
        self.calls: list[tuple[int, str]] = []

    async def list(self, kind: Any, *, namespace: str = "", label_selector: str = "", field_selector: str = "",
                   limit: int = 0, continue_token: str = "") -> ObjectList:
        self.calls.append((limit, continue_token))
        if continue_token and continue_token == self.expire_at:
            self.expire_at = ""
            raise errors.Expired("The provided continue parameter is too old")
        start = int(continue_token or 0)
        end = start + limit if limit else len(self.items)
        return ObjectList(self.items[start:end], "9", str(end) if end < len(self.items) else "")


async def test_a_collection_is_handed_on_page_by_page_at_its_first_version():
    reader, pages = PagedReader(1234), []
    assert await list_in_pages(reader, "Role", pages.append) == "9"
    assert [len(p) for p in pages] == [500, 500, 234]
    assert reader.calls == [(PAGE_SIZE, ""), (PAGE_SIZE, "500"), (PAGE_SIZE, "1000")]


async def test_an_empty_collection_is_one_empty_page():
    pages: list[list[Any]] = []
    assert await list_in_pages(PagedReader(0), "Role", pages.append) == "9"
    assert pages == [[]]


async def test_an_expired_continue_token_lists_the_whole_collection_once():
    reader, pages = PagedReader(1200, expire_at="1000"), []
    await list_in_pages(reader, "Role", pages.append)
    assert [len(p) for p in pages] == [500, 500, 1200]
    assert reader.calls[-1] == (0, "")


async def test_an_expired_first_page_is_the_callers_error():
    reader = PagedReader(10)
    reader.expire_at = ""

    async def expired(*args: Any, **kwargs: Any) -> ObjectList:
        raise errors.Expired("too old")
    reader.list = expired  # type: ignore[method-assign]
    with pytest.raises(errors.Expired):
        await list_in_pages(reader, "Role", lambda items: None)
