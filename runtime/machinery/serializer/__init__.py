"""Wire codecs: Kubernetes JSON-form dicts to and from the bytes of a media type.

Each codec is pure (no I/O) and lives in its own module:

- `runtime.machinery.serializer.protobuf`: Kubernetes' Protobuf envelope
  (`application/vnd.kubernetes.protobuf`), for the kinds that have a Protobuf
  schema; lists item by item, watch frames.
- `runtime.machinery.serializer.cbor`: Kubernetes' CBOR (`application/cbor`): self-described,
  strings as byte strings, deterministic; its decoder's limits; watch streams
  as CBOR Sequences.
- `runtime.machinery.serializer.proto`: the generated message classes (Kubernetes'
  `generated.proto` copies, and gnostic's OpenAPI v2 document).

Codecs raise a `ValueError` subclass on bytes they cannot decode; the HTTP
layer answers those with 400 and picks the codec by media type.
"""

__all__: list[str] = []
