"""A port name is an IANA service name (apimachinery's `IsValidPortName`), one rule for every kind that names
ports: each of its checks is made, so an upper-case name is told both that its characters are wrong and that it
has no (lower-case) letter, as kube-apiserver v1.28 says."""

from __future__ import annotations

from runtime.server.kinds.pods.podspec import default_pod_spec, validate_pod_spec

CHARSET = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
LETTER = "must contain at least one letter (a-z)"


def port_name_errors_of(name: str) -> list[str]:
    spec = {"containers": [{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80, "name": name}]}]}
    default_pod_spec(spec)
    return [str(e) for e in validate_pod_spec(spec, "spec")]


def test_an_upper_case_container_port_name_fails_the_charset_and_the_one_letter_rule():
    at = 'spec.containers[0].ports[0].name: Invalid value: "HTTP": '
    assert port_name_errors_of("HTTP") == [at + CHARSET, at + LETTER]


def test_a_container_port_name_of_digits_only_fails_the_one_letter_rule():
    assert port_name_errors_of("8080") == [f'spec.containers[0].ports[0].name: Invalid value: "8080": {LETTER}']
