"""Creating a review kind evaluates it, through either transport (the reviews are never stored)."""

from __future__ import annotations

import pytest

from runtime.client.kubeconfig import load_kubeconfig
from runtime.client.http import HTTPClient
from runtime.client.local import LocalClient
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from runtime.server.bootstrap import bootstrap as bootstrap_registry
from runtime.controller.testing import ADMIN
from tests.support.server import start_server


@pytest.fixture(params=["local", "http"])
async def client(request, nursery, tmp_path):
    if request.param == "local":
        registry = Registry(MemoryStore(), Scheme())
        await nursery.start(registry.run)
        await bootstrap_registry(registry)
        yield LocalClient(registry, ADMIN)
        return
    server = await start_server(nursery, tmp_path)
    http = HTTPClient(load_kubeconfig(server.kubeconfig), scheme=Scheme(server.domain))
    yield http
    await http.aclose()


async def test_a_subject_access_review_is_evaluated_not_stored(client):
    review = await client.create({
        "apiVersion": f"{client.scheme.authz_group}/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "nobody", "resourceAttributes": {"verb": "list", "resource": "namespaces"}}})
    assert review["status"]["allowed"] is False
    review = await client.create({
        "apiVersion": f"{client.scheme.authz_group}/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "root", "groups": ["system:masters"],
                 "resourceAttributes": {"verb": "list", "resource": "namespaces"}}})
    assert review["status"]["allowed"] is True


async def test_a_self_subject_access_review_answers_for_the_caller(client):
    review = await client.create({
        "apiVersion": f"{client.scheme.authz_group}/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "namespaces"}}})
    assert review["status"]["allowed"] is True  # both clients act as an admin
    if isinstance(client, LocalClient):
        nobody = client.with_user(UserInfo("nobody", groups=("system:authenticated",)))
        review = await nobody.create({
            "apiVersion": f"{client.scheme.authz_group}/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "delete", "resource": "namespaces"}}})
        assert review["status"]["allowed"] is False
