"""The resource routes are data (`api.resources.ROUTES`): (verb, name in the path, subresource in the path)
-> the verb's handler, as kube-apiserver's route table; what the table lacks is 405 (`test_crud` checks the
answers over HTTP)."""

from __future__ import annotations

from api import resources
from api.resources import ROUTES


def test_a_collection_path_takes_no_put_or_patch_and_an_item_path_no_post():
    assert ("update", False, False) not in ROUTES
    assert ("patch", False, False) not in ROUTES
    assert ("create", True, False) not in ROUTES


def test_each_verb_has_one_handler_whatever_the_path():
    assert ROUTES[("get", True, False)] is ROUTES[("get", True, True)] is resources.get
    assert ROUTES[("create", False, False)] is resources.create
    assert ROUTES[("create", True, True)] is resources.create_subresource  # a subresource that is another kind
    assert {ROUTES[("watch", False, False)], ROUTES[("watch", True, False)]} == {resources.watch}
    assert ROUTES[("deletecollection", False, False)] is resources.delete_collection
