"""What the server, the clients and the controllers share: kube's apimachinery.

Modules: `scheme` (kinds as served under one API domain: `Scheme`,
`ResourceType`), `kindinfo` (a kind's facts: `KindInfo`; the built-in
kinds' are `runtime.models.catalog`), `errors` (one class per Status
reason), `storedobject` (an object at one resourceVersion, encoded once per
media type),
`options` (what a request carries besides its path), `resourceversion`, `wellknown` (the
finalizer and field manager names the API fixes), `crds` (what a CRD defines, read as facts),
`rbacaggregation` (ClusterRole aggregation, pure), `celtypecheck` (a ValidatingAdmissionPolicy's
expressions checked for undefined fields, pure);
packages `selectors`, `patch` (JSON, merge, strategic merge, apply),
`validation` (ObjectMeta and name rules, field errors, Go formatting),
`quota` (what objects charge to resource quota, pure) and `serializer` (Protobuf and CBOR).

Contract: imports nothing of `runtime.server`, `runtime.client` or
`runtime.controller` (checked), but one import made late: the scheme's of
`runtime.server.kinds`, when a built-in kind's strategy is first asked for
(a client never asks); each module is public.
"""

__all__: list[str] = []
