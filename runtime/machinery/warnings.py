"""Warning headers as kube-apiserver's warning recorder writes them (`endpoints/filters/warning.go` and
apimachinery's `net.NewWarningHeader`): one place for every answer's warnings, a webhook's included.

- `warning_header(text)`: `299 - "text"` (only `"` and `\\` escaped, as
  `makeQuotedString`; é stays é, UTF-8 on the wire), or None for a text
  with a control character or a lone surrogate, which the recorder drops.
- `warning_headers(texts)`: the headers of a request's warnings in order:
  empty and repeated texts dropped; once the texts pass `TOTAL_RUNES` runes in
  all, every warning (those before too) is cut to `ITEM_RUNES` runes, and
  those coming once the cut ones fill `TOTAL_RUNES` are dropped (kube's
  `truncateAtTotalRunes`, `truncateItemRunes`).
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["warning_header", "warning_headers", "TOTAL_RUNES", "ITEM_RUNES"]

TOTAL_RUNES = 4 * 1024
ITEM_RUNES = 256


def warning_header(text: str) -> str | None:
    """apimachinery's `net.NewWarningHeader(299, "-", text)` (see the module doc)."""
    if any(c < " " or "\x7f" <= c <= "\x9f" or "\ud800" <= c <= "\udfff" for c in text):
        return None
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def warning_headers(texts: Iterable[str]) -> list[str]:
    """kube's recorder fed `texts` one by one (see the module doc); a Python str's length is its runes."""
    seen: set[str] = set()
    ordered: list[str] = []
    headers: list[str] = []
    written, truncating = 0, False
    for text in texts:
        if not text or (truncating and written >= TOTAL_RUNES) or text in seen:
            continue
        seen.add(text)
        ordered.append(text)
        shown = text[:ITEM_RUNES] if truncating else text
        header = warning_header(shown)
        if header is None:
            continue
        if truncating or written + len(shown) <= TOTAL_RUNES:
            written += len(shown)
            headers.append(header)
            continue
        # Past the limit: replay every warning so far, cut.
        truncating, written, headers = True, 0, []
        for earlier in ordered:
            if (cut := warning_header(earlier[:ITEM_RUNES])) is not None:
                written += len(earlier[:ITEM_RUNES])
                headers.append(cut)
    return headers
