"""POST of a virtual kind (the access reviews, SelfSubjectReview): evaluated by its strategy, never stored.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from runtime.machinery.storedobject import StoredObject
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import WriteResult, claim_namespace
from runtime.server.registry.primitives import RegistryCore
from runtime.machinery.options import Body, WriteOptions
from runtime.machinery.scheme import ResourceType

__all__ = ["review"]


async def review(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, body: Body,
                 opts: WriteOptions) -> WriteResult:
    """The review `body` answered (201): its `status` filled in by the kind's `evaluate`.

    Every caller may create the kinds whose strategy says `anyone_may_create`
    (a user can always check themselves); RBAC decides for the others.
    Raises Forbidden, BadRequest (body), Invalid (the review's own rules).
    """
    if not rt.strategy.anyone_may_create:
        core.authorize_request(user, "create", rt, namespace)
    core.check_verb(rt, "create")
    obj, warnings = rt.strategy.decode(body, opts.field_validation)
    claim_namespace(rt, obj["metadata"], namespace)
    result = rt.strategy.evaluate(core, user, namespace, obj)
    return WriteResult(StoredObject("", result, 0), True, warnings)
