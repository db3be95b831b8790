"""Python's cycle collector, set for a server whose heap is mostly its caches.

Why: starting up, the server decodes every stored object into its watch
cache and its controllers' informers: at 100,000 objects, millions of
dicts and lists that live as long as the server. The collector runs at
every 700 new containers and, each time the heap has grown by a quarter,
walks all of it: about 45% of start-up went there, and freed nothing (the
objects are alive; reference counting frees what is not). Serving, every
collection of the old generations walks those caches again.

So a `miniplane serve` process (not a library user of `api.serving.server.serve`:
this is process-wide state) does what Instagram's Python servers do:

- `pause_for_startup()`: no cycle collection while the caches fill
  (reference counting still frees every acyclic object, which is almost
  all start-up garbage);
- `settle_after_startup()`, once serving: everything alive moves to the
  permanent generation (`gc.freeze()`: never walked again; still freed by
  reference counting), then collection resumes with a first-generation
  threshold of `YOUNG_THRESHOLD` containers instead of 700 (each request
  makes hundreds; a collection per few requests costed 5% of a write).

Cycles made during start-up and dropped are not collected (a one-time,
bounded cost); objects cached later are walked by the usual generations.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "pause_for_startup", "settle_after_startup"]

#: New containers between two first-generation collections while serving (CPython's default: 700).
YOUNG_THRESHOLD = 10_000


def pause_for_startup() -> None:
    """Stop cycle collection until `settle_after_startup()` (see the module doc)."""
    gc.disable()


def settle_after_startup() -> None:
    """Freeze what start-up built and collect cycles again, with a larger young generation."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    gc.enable()
