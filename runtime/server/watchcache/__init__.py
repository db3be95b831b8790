"""Watch cache: current objects and recent events of every kind, fed by one store watch.

One task reads the store's log (a single ordered stream of every key), so
all kinds share one revision: when the cache has applied revision R, a list
of any kind from it is exactly the state at R. It serves watches,
`resourceVersion=0` reads, consistent lists once it has caught up with the
store's current revision, and lists at older revisions from snapshots
(the current state rolled back through the history). Consistent reads
share the store calls that learn its current revision (`SharedRevisionReads`).
"""

from runtime.server.watchcache.cache import DEFAULT_CAPACITY, INITIAL_LIST_CHUNK, SNAPSHOT_FRESH_SECONDS, KindCache, WatchCache
from runtime.server.watchcache.watchers import CacheEvent, Matcher, TooOld, Watcher, as_seen
from runtime.server.watchcache.pages import SortedObjects
from runtime.server.watchcache.fresh import SharedRevisionReads

__all__ = [
    "CacheEvent", "KindCache", "TooOld", "WatchCache", "Watcher", "Matcher", "as_seen", "SortedObjects",
    "SharedRevisionReads",
    "DEFAULT_CAPACITY", "SNAPSHOT_FRESH_SECONDS", "INITIAL_LIST_CHUNK",
]
