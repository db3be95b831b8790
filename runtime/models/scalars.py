"""Kubernetes' scalar types with JSON rules of their own: `Quantity` and `IntOrString`.

Both are annotations for model fields (`cpu: Quantity`), strict as the
built-in models are (a boolean is neither):

- `Quantity` (`k8s.io/apimachinery/pkg/api/resource`): a JSON string
  (`"500m"`, `"1Gi"`) or a JSON number (`2`, `0.5`), both of which Kubernetes'
  decoder accepts (`Quantity.UnmarshalJSON`). The value is kept as given:
  Kubernetes answers with its canonical string (`"2"`), which this model does
  not compute.
- `IntOrString` (`k8s.io/apimachinery/pkg/util/intstr`): a JSON integer in
  int32's range or a string (`targetPort: 8080` or `targetPort: http`).

Caveats:
    A Quantity's text is not parsed here (`"12 apples"` passes the model);
    the kind's validation is where a bad quantity is refused.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

__all__ = ["Quantity", "IntOrString"]

#: A resource quantity: `"100Mi"`, `"250m"`, `2`, `0.5` (kept as given; see the module doc).
Quantity = Union[str, int, float]

#: An int32 or a string, as Go's `intstr.IntOrString` decodes.
IntOrString = Union[Annotated[int, Field(ge=-(1 << 31), le=(1 << 31) - 1)], str]
