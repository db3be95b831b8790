"""Watch cache: current objects and recent events of every kind, fed by one store watch.

One task reads the store's log (a single ordered stream of every key), so
all kinds share one revision: when the cache has applied revision R, a list
of any kind from it is exactly the state at R. It serves watches,
`resourceVersion=0` reads, and consistent lists once it has caught up with
the store's current revision.
"""

from runtime.watchcache.cache import CacheEvent, KindCache, TooOld, WatchCache, Watcher

__all__ = ["CacheEvent", "KindCache", "TooOld", "WatchCache", "Watcher"]
