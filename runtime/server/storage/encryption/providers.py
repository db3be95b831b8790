"""The value transformers of kube-apiserver's encryption at rest, byte for byte.

A transformer turns a stored value into plaintext and back; the storage key
is its context (authenticated data where the mode has any). Formats, as
`k8s.io/apiserver/pkg/storage/value/encrypt`:

- `aesgcm`: 12-byte random nonce + AES-GCM ciphertext and 16-byte tag, the
  storage key as additional authenticated data (a value copied under another
  key does not open).
- `aescbc`: 16-byte random IV + AES-CBC ciphertext of the PKCS#7-padded
  value; no authentication (kube's too: CBC has none).
- `secretbox`: 24-byte random nonce + NaCl secretbox (XSalsa20-Poly1305).
- `identity`: the value itself; reading a value that carries `k8s:enc:` fails.

Primitives: AES-GCM and AES-CBC come from `cryptography` (OpenSSL's
constant-time, hardware-accelerated AES: the same primitives as Go's
crypto/aes); secretbox from PyNaCl (libsodium's `crypto_secretbox`, the
XSalsa20-Poly1305 construction Go's x/crypto/nacl/secretbox implements, which
`cryptography` does not offer). Randomness is `os.urandom`. Nothing here is
hand-rolled cryptography: the modes, tags and nonce sizes are the libraries',
only PKCS#7 padding is spelled out, as kube spells it.

`PrefixTransformers` chooses by prefix, as kube's `NewPrefixTransformers`:
the first entry writes, the first entry whose prefix matches and opens the
value reads; a read by any but the first entry is stale (the object should
be written again). Errors are `TransformError`, with kube's words.

Internal to `runtime.server.storage.encryption`: imported by its modules only.
"""

from __future__ import annotations

import os
from typing import Protocol, Sequence

import nacl.exceptions
import nacl.secret
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as _AESGCM

__all__ = ["TransformError", "Transformer", "AESGCMTransformer", "AESCBCTransformer", "SecretboxTransformer",
           "IdentityTransformer", "PrefixTransformers", "ENCRYPTED_PREFIX"]

#: What every encrypted value starts with (the identity transformer refuses to read it).
ENCRYPTED_PREFIX = b"k8s:enc:"

_SHORT = "the stored data was shorter than the required size"


class TransformError(Exception):
    """A stored value no transformer could read (kube's words as the message)."""


class Transformer(Protocol):
    """Turns plaintext into a stored value and back; `context` is the storage key (as bytes)."""

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        """(plaintext, stale). Raises TransformError."""

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        """The stored form of `data`."""


class AESGCMTransformer:
    """AES-GCM with a random 96-bit nonce and the key as authenticated data (kube's `aes.NewGCMTransformer`)."""

    NONCE = 12

    def __init__(self, key: bytes) -> None:
        self._aead = _AESGCM(key)

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < self.NONCE:
            raise TransformError(_SHORT)
        try:
            return self._aead.decrypt(data[:self.NONCE], data[self.NONCE:], context), False
        except InvalidTag:
            raise TransformError("cipher: message authentication failed") from None

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        nonce = os.urandom(self.NONCE)
        return nonce + self._aead.encrypt(nonce, data, context)


class AESCBCTransformer:
    """AES-CBC with a random IV and PKCS#7 padding, no authentication (kube's `aes.NewCBCTransformer`)."""

    BLOCK = 16

    def __init__(self, key: bytes) -> None:
        self._algorithm = algorithms.AES(key)

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < self.BLOCK:
            raise TransformError(_SHORT)
        body = data[self.BLOCK:]
        if len(body) % self.BLOCK:
            raise TransformError("the stored data is not a multiple of the block size")
        decryptor = Cipher(self._algorithm, modes.CBC(data[:self.BLOCK])).decryptor()
        plain = decryptor.update(body) + decryptor.finalize()
        pad = plain[-1] if plain else 0
        if pad == 0 or pad > len(plain):
            raise TransformError("invalid PKCS7 data (empty or not padded)")
        if plain[-pad:] != bytes([pad]) * pad:
            raise TransformError("invalid padding on input")
        return plain[:-pad], False

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        pad = self.BLOCK - len(data) % self.BLOCK
        iv = os.urandom(self.BLOCK)
        encryptor = Cipher(self._algorithm, modes.CBC(iv)).encryptor()
        return iv + encryptor.update(data + bytes([pad]) * pad) + encryptor.finalize()


class SecretboxTransformer:
    """NaCl secretbox (XSalsa20-Poly1305) with a random 24-byte nonce first (kube's `secretbox`)."""

    NONCE = nacl.secret.SecretBox.NONCE_SIZE

    def __init__(self, key: bytes) -> None:
        self._box = nacl.secret.SecretBox(key)

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < self.NONCE + nacl.secret.SecretBox.MACBYTES:
            raise TransformError(_SHORT)
        try:
            return self._box.decrypt(data[self.NONCE:], data[:self.NONCE]), False
        except nacl.exceptions.CryptoError:
            # kube's words for a box that does not open (secretbox.Open's false).
            raise TransformError("output array was not large enough for encryption") from None

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        nonce = os.urandom(self.NONCE)
        return nonce + self._box.encrypt(data, nonce).ciphertext


class IdentityTransformer:
    """The value as it is; reading encrypted data is an error (kube's `identity.NewEncryptCheckTransformer`)."""

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if data.startswith(ENCRYPTED_PREFIX):
            raise TransformError("identity transformer tried to read encrypted data")
        return data, False

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        return data


class PrefixTransformers:
    """Transformers chosen by the prefix of the stored value (kube's `value.NewPrefixTransformers`).

    `entries` are (prefix, transformer), the first one writing; `no_match` is
    the error when no prefix matches. A prefix that matches but whose
    transformer fails does not stop the search (two keys of one provider share
    its prefix); when none opens the value, the errors found are the error.
    """

    def __init__(self, entries: Sequence[tuple[bytes, Transformer]], no_match: str) -> None:
        if not entries:
            raise ValueError("PrefixTransformers needs at least one transformer")
        self.entries = tuple(entries)
        self.no_match = no_match
        #: Whether a read may be stale: more than one way to read, here or below (more keys, providers).
        self.rotating = len(self.entries) > 1 or any(getattr(t, "rotating", False) for _, t in self.entries)

    @property
    def write_prefix(self) -> bytes:
        return self.entries[0][0]

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        errors: list[str] = []
        for i, (prefix, transformer) in enumerate(self.entries):
            if data.startswith(prefix):
                try:
                    plain, stale = transformer.from_storage(data[len(prefix):], context)
                except TransformError as exc:
                    if prefix:  # identity's failure (empty prefix) says nothing: it is the fallback
                        errors.append(str(exc))
                    continue
                return plain, stale or i != 0
        if errors:
            raise TransformError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
        raise TransformError(self.no_match)

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        prefix, transformer = self.entries[0]
        return prefix + transformer.to_storage(data, context)
