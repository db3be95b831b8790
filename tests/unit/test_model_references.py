"""The built-in kinds name their models by reference (`KindInfo`, `runtime.models.catalog`): a model module is
imported when a kind's model is first asked for, so that a client (the controllers command) builds only the
models it uses. Importing the catalog built every model class (129; about 0.3 s of `miniplane controllers`'
start) before this rule.
"""

from __future__ import annotations

import sys

from runtime.machinery.kindinfo import KindInfo
from runtime.models import catalog
from runtime.models.core import Namespace
from runtime.models.rbac import Role
from tests.support.footprint import loaded_by


def test_importing_the_catalog_builds_no_kind_model():
    loaded = loaded_by("runtime.models.catalog")
    models = sorted(m for m in loaded if m.startswith("runtime.models.") and m != "runtime.models.catalog")
    assert models == [], models  # every kind's model (and their base) waits until it is asked for


def test_a_model_reference_resolves_to_its_class_once_asked_for():
    assert catalog.NAMESPACE.model_ref == "runtime.models.core:Namespace"
    assert catalog.NAMESPACE.model is Namespace and catalog.NAMESPACE.list_model.__name__ == "NamespaceList"
    assert catalog.WHO_CAN.model is sys.modules["runtime.models.insight"].WhoCan


def test_a_model_is_matched_to_its_reference_by_name_without_importing_it():
    info = KindInfo("", "Thing", "things", "thing", True, "some.unimported.module:Thing")
    assert not info.names_model(Namespace)
    assert "some.unimported.module" not in sys.modules
    assert catalog.ROLE.names_model(Role) and not catalog.ROLE.names_model(Namespace)
    assert KindInfo("", "Role", "roles", "role", True, Role).names_model(Role)  # a class: by identity
