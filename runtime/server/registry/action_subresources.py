"""POST of a subresource that is another kind, an action on an object (a ServiceAccount's `token`).

Nothing is stored: the subresource's object (`ActionSubresource`, in the
kind strategy's `subresources`) decodes the body as its own kind
(`decode`), passes the admission chain as a create of the subresource (the action's
object, e.g. a Binding), then answers it (`create`), reading the object it acts on through `load`
(404 when missing). The answer is 201, given once the watch cache holds the
object as it was read, so that what the answer grants (a token) is usable
at once on this server.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.storedobject import StoredObject
from runtime.server.rbac.user import UserInfo
from runtime.server.kinds.base import AdmissionRequest
from runtime.server.kinds.subresources import ActionSubresource, Subresource
from runtime.server.registry.answers import WriteResult, claim_namespace, method_not_allowed, not_found
from runtime.server.registry.primitives import RegistryCore
from runtime.machinery.options import Body, WriteOptions
from runtime.machinery.scheme import ResourceType

__all__ = ["create_on"]


async def create_on(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                    subresource: Subresource, body: Body, opts: WriteOptions) -> WriteResult:
    """The answer of `rt`'s strategy to a POST of `body` to `subresource` of object `name` (201).

    Raises Forbidden (create on the subresource, as RBAC names it:
    `serviceaccounts/token`), MethodNotAllowed (the subresource takes no
    create), BadRequest (body, namespace), NotFound (object), and what the
    strategy raises.
    """
    core.authorize_request(user, "create", rt, namespace, name, subresource)
    core.check_verb(rt, "create", subresource)
    if not isinstance(subresource, ActionSubresource):
        raise method_not_allowed()
    request, warnings = subresource.decode(body, opts.field_validation)
    claim_namespace(rt, request["metadata"], namespace)
    key = rt.storage_key(namespace if rt.namespaced else None, name)
    read: list[StoredObject] = []

    async def load() -> dict[str, Any]:
        current = await core.read_current(rt, key, name)
        if current is None:
            raise not_found(rt, name)
        read.append(current)
        return current.copy_dict()

    # Admission sees the action's own object (kube: CREATE of pods/binding with a Binding).
    admission = AdmissionRequest(user, rt, "create", request, None, opts.dry_run, subresource=subresource.name,
                                 options=opts, kind=subresource.kind, name=name,
                                 namespace=namespace if rt.namespaced else "")
    await core.admission_chain.mutate(admission)
    request = admission.obj
    await core.admission_chain.validate(admission)
    warnings += [w for w in admission.warnings if w not in warnings]
    answer, more = await subresource.create(core, user, namespace, name, request, load)
    if read:
        await core.cache.wait_for(read[-1].revision)
    return WriteResult(StoredObject("", answer, 0), True, warnings + more)
