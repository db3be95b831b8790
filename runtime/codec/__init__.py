"""Wire codecs: Kubernetes JSON-form dicts to and from the bytes of a media type.

Each codec is pure (no I/O) and lives in its own module:

- `runtime.codec.protobuf`: Kubernetes' Protobuf envelope
  (`application/vnd.kubernetes.protobuf`), for the kinds that have a Protobuf
  schema.

Codecs raise a `ValueError` subclass on bytes they cannot decode; the HTTP
layer answers those with 400 and picks the codec by media type.
"""

__all__: list[str] = []
