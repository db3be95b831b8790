"""Core `ConfigMap`: configuration as key-value maps (Kubernetes' `pkg/registry/core/configmap`).

- Decoding: a `null` value is an empty one (Go's decoder); `binaryData`
  values are base64 (Go's `[]byte`): one that is not is the 400 Kubernetes'
  decoder answers (`illegal base64 data at input byte N`; a patch's, the
  patchers' 422), and each is kept as Go writes it back.
- Validation (`ValidateConfigMap`): names are DNS subdomains; keys of `data`
  and `binaryData` are config keys, and none is in both; the values'
  bytes total at most 1 MiB.
- Update (`ValidateConfigMapUpdate`): once `immutable: true`, it cannot be
  unset and `data` and `binaryData` cannot change.
- A PUT of a missing ConfigMap is 404 (no create on update). Empty maps are
  left out, as Kubernetes' `omitempty` writes them.
- `kubectl get` prints NAME, DATA (the keys of both maps) and AGE.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, too_long
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.configdata import (
    MAX_SIZE, config_key_errors, decode_bytes, decoded_size, drop_empty_maps, immutable_errors, nulls_as_empty,
)
from runtime.server.kinds.subresources import Subresource

__all__ = ["ConfigMapStrategy"]

_DATA_DOC = ("Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or "
             "'.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must "
             "not overlap with the keys in the BinaryData field, this is enforced during validation process.")
_MAPS = ("data", "binaryData")


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    count = len(obj.get("data") or ()) + len(obj.get("binaryData") or ())
    return [meta.get("name", ""), count, age(meta.get("creationTimestamp"))]


class ConfigMapStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False  # a PUT of a missing one is 404, as Kubernetes' strategy says
    columns = Columns((NAME_COLUMN, column("Data", _DATA_DOC), AGE_COLUMN), _cells)

    def decode(self, body: Body, field_validation: str,
               extra_problems: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
        obj, warnings = super().decode(nulls_as_empty(body, _MAPS), field_validation, extra_problems)
        rt = self.rt
        decode_bytes(obj, "binaryData", f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}')
        return obj, warnings

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        drop_empty_maps(obj, _MAPS)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        drop_empty_maps(new, _MAPS)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        size = 0
        for key, value in data.items():
            errs += [invalid(f"data[{key}]", key, msg) for msg in config_key_errors(key)]
            if key in binary:
                errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
            size += len(value.encode("utf-8"))
        for key, value in binary.items():
            errs += [invalid(f"binaryData[{key}]", key, msg) for msg in config_key_errors(key)]
            size += decoded_size(value)  # canonical base64: decoding checked it
        if size > MAX_SIZE:
            errs.append(too_long("", MAX_SIZE))  # "" as Kubernetes: the error is the whole object's
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        return immutable_errors(new, old, _MAPS) + self.validate(new)
