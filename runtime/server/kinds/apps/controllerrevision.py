"""apps/v1 `ControllerRevision` (Kubernetes' `pkg/registry/apps/controllerrevision`): an immutable snapshot
of a controller's state, which StatefulSet and DaemonSet controllers keep their history in.

- Names are DNS subdomains; a PUT of a missing one is 404 (no create on update).
- `revision` is always written (0 when not given: Go has no `omitempty` there).
- Validation (`ValidateControllerRevision`): `data` is required (`data:
  Required value: data is mandatory`), `revision` >= 0.
- Update (`ValidateControllerRevisionUpdate`): `data` cannot change (`data:
  Invalid value: ...: field is immutable`); `revision` may.
- No generation, no status.
- `kubectl get`: NAME, CONTROLLER (the controller owner as `kind.group/name`,
  `<none>` without one), REVISION, AGE.
"""

from __future__ import annotations

import json
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, nonnegative, required
from runtime.machinery.validation.gofmt import GoText
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column

__all__ = ["ControllerRevisionStrategy"]


def _controller(meta: dict[str, Any]) -> str:
    """`metav1.GetControllerOf` as printers' formatResourceName writes it: `statefulset.apps/web`."""
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            api_version = ref.get("apiVersion") or ""
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = ref.get("kind") or ""
            qualified = f"{kind}.{group}" if group else kind
            return f"{qualified.lower()}/{ref.get('name') or ''}" if qualified else ref.get("name") or ""
    return "<none>"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), _controller(meta), obj.get("revision") or 0, age(meta.get("creationTimestamp"))]


_COLUMNS = Columns((NAME_COLUMN, column("Controller", "Controller of the object"),
                    column("Revision", "Revision indicates the revision of the state represented by Data."),
                    AGE_COLUMN), _cells)


class ControllerRevisionStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    columns = _COLUMNS

    def default(self, obj: dict[str, Any]) -> None:
        obj.setdefault("revision", 0)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any], subresource: Any = None) -> None:
        new.setdefault("revision", 0)
        super().prepare_for_update(new, old, subresource)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs = [] if obj.get("data") is not None else [required("data", "data is mandatory")]
        return errs + nonnegative(obj.get("revision"), "revision")

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = self.validate(new)
        if new.get("data") != old.get("data"):
            errs.append(invalid("data", _raw_data(new.get("data")), "field is immutable"))
        return errs


def _raw_data(data: Any) -> GoText | None:
    """`%#v` of the internal `*runtime.Unknown` the data decodes to: its JSON bytes (here compact JSON:
    Kubernetes keeps the bytes as sent)."""
    if data is None:
        return None
    raw = ", ".join(f"0x{b:x}" for b in json.dumps(data, separators=(",", ":")).encode())
    return GoText(f'runtime.Unknown{{TypeMeta:runtime.TypeMeta{{APIVersion:"", Kind:""}}, Raw:[]uint8{{{raw}}}, '
                  f'ContentEncoding:"", ContentType:"application/json"}}')
