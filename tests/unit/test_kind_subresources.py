"""Every subresource a kind serves is an object of its own (issue 36, point 1), as kube-apiserver's
StatusREST, ScaleREST, TokenREST, FinalizeREST: the registry asks that object, never the kind's
strategy with the subresource's name."""

from __future__ import annotations

from runtime.server.kinds import ActionSubresource, ObjectSubresource, ViewSubresource
from runtime.server.kinds.customresource import CustomKinds
from runtime.machinery.scheme import Scheme
from tests.support.crds import widget_crd


def scheme_with_widgets() -> Scheme:
    """The built-in kinds and a custom kind with `status` and `scale` (the Widget CRD, established)."""
    scheme = Scheme()
    crd = widget_crd()
    crd["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    CustomKinds(scheme).follow(crd)
    return scheme


def test_every_served_subresource_has_its_object():
    scheme = Scheme()
    listed = {(t.kind, name) for t in scheme.types for name, _ in t.info.subresources}
    assert ("Namespace", "finalize") in listed and ("ServiceAccount", "token") in listed
    missing = sorted((t.kind, name) for t in scheme.types for name, _ in t.info.subresources
                     if name not in t.strategy.subresources)
    assert missing == []


def test_each_subresource_is_one_of_the_three_shapes():
    scheme = Scheme()
    shapes = {(t.api_version, t.kind, name): type(part).__mro__ for t in scheme.types
              for name, part in t.strategy.subresources.items()}
    # Namespace status and finalize, ServiceAccount token, CRD status, the workload kinds' (issue 38), and a
    # ValidatingAdmissionPolicy's status (issue 39)
    assert len(shapes) == 4 + 22 + 1
    assert all({ObjectSubresource, ViewSubresource, ActionSubresource} & set(mro) for mro in shapes.values())
    kinds = {key[1:]: next(s for s in (ViewSubresource, ActionSubresource, ObjectSubresource) if s in mro)
             for key, mro in shapes.items()}
    assert kinds[("Deployment", "scale")] is ViewSubresource  # an autoscaling/v1 Scale
    assert kinds[("Pod", "binding")] is kinds[("Pod", "eviction")] is ActionSubresource
    assert kinds[("Pod", "ephemeralcontainers")] is kinds[("Pod", "status")] is ObjectSubresource


def test_a_namespace_finalize_write_changes_only_its_finalizers():
    finalize = Scheme().by_kind("Namespace").strategy.subresources["finalize"]
    old = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"finalizers": ["kubernetes"]},
           "status": {"phase": "Terminating"}}
    new = {"metadata": {"name": "a"}, "spec": {"finalizers": []}, "status": {"phase": "Active"}}
    finalize.keep(new, old)
    assert new == {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"finalizers": []},
                   "status": {"phase": "Terminating"}}


def test_each_subresource_knows_its_name_and_verbs_as_the_kind_lists_them():
    """The registry asks the object (authorization, managedFields, 405), discovery the kind's facts: the same."""
    scheme = scheme_with_widgets()
    assert scheme.by_kind("Widget") is not None
    known = {(t.kind, name): (part.name, part.verbs) for t in scheme.types
             for name, part in t.strategy.subresources.items()}
    listed = {(t.kind, name): (name, verbs) for t in scheme.types for name, verbs in t.info.subresources}
    assert ("Widget", "scale") in listed and ("Widget", "status") in listed
    assert known == listed
