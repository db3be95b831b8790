"""`InformerFactory.informer_keeping(kind, transform)` hands a reader that needs only what `transform` keeps an
informer created already that keeps at least that (the fullest), else the one of `transform`; never one
keeping less, nor one of other selectors or another namespace. `keeps_at_least` is the order it follows:
whole objects, without managed fields, partial metadata, ownership metadata; a transform outside it only
itself. The builder's `keeping=` is the same choice for a source, and refuses to be given with `transform=`.
"""

from __future__ import annotations

import pytest

from runtime.controller.controller import Builder
from runtime.controller.informerfactory import InformerFactory
from runtime.controller.testing import open_test_env
from runtime.controller.transforms import keeps_at_least, ownership_metadata, partial_metadata, without_managed_fields

CHAIN = [None, without_managed_fields, partial_metadata, ownership_metadata]


def labels_only(obj):
    return {"metadata": {"labels": (obj.get("metadata") or {}).get("labels")}}


@pytest.mark.parametrize("have", range(len(CHAIN)))
@pytest.mark.parametrize("want", range(len(CHAIN)))
def test_a_transform_keeps_at_least_those_after_it(have: int, want: int) -> None:
    assert keeps_at_least(CHAIN[have], CHAIN[want]) == (have <= want)


def test_a_transform_outside_the_order_keeps_only_itself() -> None:
    assert keeps_at_least(labels_only, labels_only)
    assert not keeps_at_least(labels_only, ownership_metadata) and not keeps_at_least(None, labels_only)
    assert not keeps_at_least(ownership_metadata, labels_only)


async def test_a_reader_of_less_is_handed_the_fullest_informer_created_already(autojump_clock) -> None:
    async with open_test_env(controllers=False) as env:
        rt = env.scheme.by_kind("Role")
        factory = InformerFactory(env.client)
        owned = factory.informer_keeping(rt, ownership_metadata)  # none yet: its own
        assert owned.transform is ownership_metadata and owned is factory.informer(rt, transform=ownership_metadata)
        lean = factory.informer(rt, transform=without_managed_fields)
        assert factory.informer_keeping(rt, ownership_metadata) is lean  # keeps more: shared
        assert factory.informer_keeping(rt, partial_metadata) is lean
        whole = factory.informer(rt)
        assert factory.informer_keeping(rt, ownership_metadata) is whole  # the fullest
        assert factory.informer_keeping(rt, without_managed_fields) is whole
        # Never one of other selectors or namespace, nor a transform keeping other things.
        labelled = factory.informer_keeping(rt, ownership_metadata, label_selector="app=x")
        assert labelled not in (owned, lean, whole) and labelled.label_selector == "app=x"
        assert factory.informer_keeping(rt, ownership_metadata, namespace="team").namespace == "team"
        odd = factory.informer_keeping(rt, labels_only)
        assert odd.transform is labels_only and odd is not whole


async def test_a_thinner_informer_never_serves_a_reader_of_more(autojump_clock) -> None:
    async with open_test_env(controllers=False) as env:
        rt = env.scheme.by_kind("Role")
        factory = InformerFactory(env.client)
        owned = factory.informer(rt, transform=ownership_metadata)
        lean = factory.informer_keeping(rt, without_managed_fields)
        assert lean is not owned and lean.transform is without_managed_fields


async def test_the_builders_keeping_shares_an_informer_and_refuses_a_transform_beside_it(autojump_clock) -> None:
    async with open_test_env(controllers=False) as env:
        rt = env.scheme.by_kind("Role")
        factory = InformerFactory(env.client)
        whole = factory.informer(rt)
        builder = Builder(factory, lambda controller: None, "c")
        builder.for_(rt, keeping=ownership_metadata).watches(rt, lambda event: [], keeping=partial_metadata)

        async def reconcile(key):
            return None
        controller = builder.build(reconcile)
        assert [s.informer for s in controller.sources] == [whole, whole]
        with pytest.raises(ValueError, match="keeping="):
            Builder(factory, lambda controller: None, "d").for_(rt, keeping=ownership_metadata,
                                                                 transform=without_managed_fields)
        with pytest.raises(ValueError, match="keeping="):
            Builder(factory, lambda controller: None, "e").watches(rt, lambda event: [], metadata_only=True,
                                                                   keeping=ownership_metadata)
