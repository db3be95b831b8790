"""Encryption at rest: kube-apiserver's `--encryption-provider-config`, as a wrapper of any `Store`.

- `config`: `EncryptionConfiguration` (apiserver.config.k8s.io/v1) parsed and
  validated with kube's messages (`load_config`, `ConfigError`), its rules
  resolved to storage key prefixes by name (a rule may name a kind not served).
- `providers`: the transformers `aesgcm`, `aescbc`, `secretbox`, `identity`
  and the prefix choice between them, in kube's formats.
- `store`: `EncryptingStore`, sealing values on write and opening them on
  read; a value no provider reads is `Unreadable` (a corrupt object upstream).
- `reload`: `run_reload`, the automatic reload of the file.

Contract: imports nothing of miniplane but storage (and cryptography, PyNaCl, PyYAML); no message echoes a key. Without the
flag nothing here runs: the assembly wraps the store only when given a file.
`is_stale(store, key)` is the question the registry asks before it skips a
write that changes nothing (kube's GuaranteedUpdate writes a stale value anyway).
"""

from __future__ import annotations

from typing import Any

from runtime.server.storage.encryption.config import ConfigError, EncryptionConfig, load_config, parse_config
from runtime.server.storage.encryption.providers import TransformError
from runtime.server.storage.encryption.reload import RELOAD_INTERVAL, reload_once, run_reload
from runtime.server.storage.encryption.store import EncryptingStore, Unreadable

__all__ = ["ConfigError", "EncryptionConfig", "load_config", "parse_config", "TransformError", "EncryptingStore",
           "Unreadable", "run_reload", "reload_once", "RELOAD_INTERVAL", "is_stale"]


async def is_stale(store: Any, key: str) -> bool:
    """Whether `store` holds `key`'s value sealed by other than its write key (False for a store without
    encryption): such a value is written again even when the object is unchanged (key rotation)."""
    stale = getattr(store, "stale", None)
    return stale is not None and await stale(key)
