"""Quantity arithmetic and quota's resource lists (runtime.machinery.quantity, runtime.machinery.quota.resources),
as Kubernetes' resource.Quantity Add/Sub and k8s.io/apiserver/pkg/quota/v1/resources.go."""

from __future__ import annotations

from runtime.machinery.quantity import ZERO, parse_quantity as q
from runtime.machinery.quota import add, less_than_or_equal, mask, parse_list, pretty, subtract, to_text


def test_a_sum_keeps_the_first_quantitys_format():
    assert str(q("1Gi") + q("512Mi")) == "1536Mi"
    assert str(q("500m") + q("1")) == "1500m"


def test_a_sum_from_zero_takes_the_other_quantitys_format():
    assert str(ZERO + q("128Mi")) == "128Mi"
    assert str(ZERO - q("1Gi")) == "-1Gi"


def test_a_difference_can_go_to_zero_and_below():
    assert str(q("1") - q("1")) == "0"
    assert str(q("100m") - q("300m")) == "-200m"
    assert str(-q("2")) == "-2"


def test_lists_add_and_subtract_key_by_key():
    a = parse_list({"pods": "1", "requests.cpu": "100m"})
    b = parse_list({"pods": "2", "requests.memory": "1Gi"})
    assert to_text(add(a, b)) == {"pods": "3", "requests.cpu": "100m", "requests.memory": "1Gi"}
    assert to_text(subtract(a, b)) == {"pods": "-1", "requests.cpu": "100m", "requests.memory": "-1Gi"}


def test_a_malformed_quantity_is_left_out_of_a_list():
    assert to_text(parse_list({"pods": "x1", "cpu": "1"})) == {"cpu": "1"}


def test_within_a_limit_names_what_exceeds_it_sorted():
    used = parse_list({"pods": "3", "cpu": "2", "memory": "1Gi"})
    hard = parse_list({"pods": "2", "cpu": "1", "memory": "2Gi"})
    assert less_than_or_equal(used, hard) == (False, ["cpu", "pods"])
    assert less_than_or_equal(mask(used, ["memory"]), hard) == (True, [])


def test_a_list_prints_as_quota_messages_print_it():
    assert pretty(parse_list({"requests.cpu": "500m", "pods": "1"})) == "pods=1,requests.cpu=500m"
