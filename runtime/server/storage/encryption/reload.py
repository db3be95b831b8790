"""Automatic reload of the encryption configuration (`--encryption-provider-config-automatic-reload`).

As kube-apiserver's `DynamicEncryptionConfigContent` controller: the file is
read again every `interval` seconds; when its content hash differs from the
one in force and it parses, the store swaps to it; a file that does not read
or parse is logged and the configuration in force stays.

Internal to `runtime.server.storage.encryption`: imported by its modules only.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import trio

from runtime.server.storage.encryption.config import ConfigError, load_config
from runtime.server.storage.encryption.store import EncryptingStore

__all__ = ["run_reload", "RELOAD_INTERVAL"]

log = logging.getLogger(__name__)

#: Seconds between two reads of the file (kube's: a minute).
RELOAD_INTERVAL = 60.0


def _digest_changed(store: EncryptingStore, path: str) -> bool:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return True  # said by the load that follows
    return hashlib.sha256(data).hexdigest() != store.config.digest


def reload_once(store: EncryptingStore, path: str) -> bool:
    """Read `path` again; swap when its content changed and parses. Returns whether it swapped."""
    if not _digest_changed(store, path):
        return False
    try:
        config = load_config(path, store.config.domain)
    except ConfigError as exc:
        log.error("encryption config %s: not reloaded, the one in force stays: %s", path, exc)
        return False
    if config.digest == store.config.digest:
        return False
    store.swap(config)
    log.info("encryption config %s reloaded (sha256 %s)", path, config.digest[:12])
    return True


async def run_reload(store: EncryptingStore, path: str, interval: float = RELOAD_INTERVAL, *,
                     task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Reload `path` into `store` every `interval` seconds, forever (see the module doc)."""
    task_status.started()
    while True:
        await trio.sleep(interval)
        reload_once(store, path)
