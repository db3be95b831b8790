"""The builder and the informer factory name kinds as the client does: a `ResourceType` or a model class.

A built-in model (`runtime.models`), a custom one bound by `bind_kind`, a
generated one (`runtime.models.k8s`) each resolve to their kind, and name the
same shared informer as its ResourceType; `informers.typed(Model)` reads it as
models (issue 40).
"""

from __future__ import annotations

import pytest
import trio

from runtime import models
from runtime.client.interface import ObjectKey
from runtime.client.typed import CustomResource, bind_kind
from runtime.controller.testing import open_test_env
from runtime.models.k8s.apps_v1 import Deployment

__all__: list[str] = []


class Gadget(CustomResource):
    pass


GADGETS = bind_kind(Gadget, "example.com/v1", "gadgets")


class Unbound(CustomResource):
    pass


async def test_for_owns_and_the_informers_take_model_classes_and_share_the_kinds_informer(autojump_clock):
    async with open_test_env(domain="k8s.io") as env:
        manager = env.manager()
        informers, namespaces = manager.informers, env.scheme.by_kind("Namespace")
        assert informers.informer(models.Namespace) is informers.informer(namespaces)
        cache = informers.typed(models.Namespace)
        reconciled: list[str] = []

        async def reconcile(key: ObjectKey) -> None:
            reconciled.append(key.name)

        manager.controller().for_(models.Namespace).owns(models.ConfigMap).complete(reconcile)
        assert list(manager.controllers) == ["namespace"]
        await env.start(manager)
        default = cache.get("default")
        assert isinstance(default, models.Namespace) and default.metadata.name == "default"
        owner = {"apiVersion": "v1", "kind": "Namespace", "name": "default", "uid": default.metadata.uid,
                 "controller": True}
        with trio.fail_after(30):
            while "default" not in reconciled:
                await trio.sleep(0.1)  # trio's clock: autojump_clock makes it instant
            reconciled.clear()
            await env.client.create(models.ConfigMap(metadata=models.ObjectMeta(
                name="owned", namespace="default", owner_references=[owner])))
            while "default" not in reconciled:  # owns(models.ConfigMap): the owner's key
                await trio.sleep(0.1)


def test_a_bound_custom_model_and_a_generated_model_resolve_to_their_kinds():
    from runtime.controller.informerfactory import InformerFactory
    from runtime.machinery.scheme import Scheme

    class Reader:
        scheme = Scheme("k8s.io")

    informers = InformerFactory(Reader())  # type: ignore[arg-type]
    assert informers.resource(Gadget) is GADGETS
    assert informers.informer(Gadget).kind is GADGETS
    deployments = informers.resource(Deployment)
    assert (deployments.api_version, deployments.plural, deployments.namespaced) == ("apps/v1", "deployments", True)
    assert informers.typed(Deployment).model is Deployment
    with pytest.raises(ValueError, match="bind_kind"):
        informers.informer(Unbound)


def test_a_kind_given_by_its_name_is_refused_with_what_to_give_instead():
    # A string reached the model lookup and failed there: AttributeError, 'str' object has no '__module__'.
    from runtime.client.local import LocalClient
    from runtime.controller.informerfactory import InformerFactory
    from runtime.controller.testing import ADMIN
    from runtime.machinery.scheme import Scheme
    from runtime.server.registry import Registry
    from runtime.server.storage import MemoryStore

    client = LocalClient(Registry(MemoryStore(), Scheme("k8s.io")), ADMIN)
    for resolve in (client.resource, InformerFactory(client).resource):
        with pytest.raises(TypeError, match=r"a kind is a ResourceType or a model class, not str 'Role' "
                                            r"\(scheme.by_kind\('Role'\) gives"):
            resolve("Role")  # type: ignore[arg-type]
