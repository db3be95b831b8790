"""Content negotiation: Accept (types, q-values, `as`/`g`/`v`/`stream`) and Content-Type, as pure functions."""

from __future__ import annotations

import pytest

from api.negotiation import (Choice, content_media_type, negotiate, parse_accept, protobuf_types, request_codec,
                             wants_pretty)
from runtime.machinery import errors

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
POM = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def choose(accept: str | None, **kw) -> Choice:
    kw.setdefault("domain", "svc.io")
    return negotiate(accept, **kw)


def test_accept_ranges_are_ordered_by_q_then_specificity_then_position() -> None:
    ranges = parse_accept("*/*;q=0.8, application/yaml;q=0.9, application/*, text/plain, application/json")
    assert [r.type for r in ranges] == ["text/plain", "application/json", "application/*", "application/yaml",
                                        "*/*"]


def test_ranges_with_q_zero_or_malformed_are_dropped() -> None:
    assert [r.type for r in parse_accept("application/json;q=0, application/yaml;q=abc, garbage, ,")] == []


def test_parameters_are_kept_without_q() -> None:
    (r,) = parse_accept('application/json; as=Table ; g="meta.k8s.io";v=v1;q=0.5')
    assert r.params == (("as", "Table"), ("g", "meta.k8s.io"), ("v", "v1")) and r.q == 0.5


@pytest.mark.parametrize("accept", [None, "", "*/*", "application/*", "application/json",
                                    "application/json;charset=utf-8"])
def test_no_preference_or_any_type_is_answered_in_json(accept: str | None) -> None:
    assert choose(accept) == Choice("json", "application/json")


def test_the_first_range_the_server_can_produce_wins() -> None:
    assert choose("text/html, application/xml, application/yaml, application/json").codec == "yaml"


def test_a_higher_q_wins_over_header_order() -> None:
    assert choose("application/json;q=0.5, application/yaml").codec == "yaml"


def test_nothing_acceptable_is_406_naming_the_media_types_that_are() -> None:
    with pytest.raises(errors.NotAcceptable) as info:
        choose("text/html, application/xml")
    assert info.value.code == 406
    assert str(info.value) == ("only the following media types are accepted: application/json, application/yaml, "
                               "application/vnd.kubernetes.protobuf, application/vnd.svc.protobuf")


def test_protobuf_is_served_under_kubernetes_and_the_domains_media_type() -> None:
    assert protobuf_types("svc.io") == ("application/vnd.kubernetes.protobuf", "application/vnd.svc.protobuf",
                                        "application/vnd.svc.io.protobuf")
    assert protobuf_types("k8s.io")[0] == "application/vnd.kubernetes.protobuf"
    for media in protobuf_types("svc.io"):
        assert choose(media) == Choice("protobuf", media)


def test_protobuf_is_skipped_for_answers_without_a_protobuf_form() -> None:
    assert choose("application/vnd.kubernetes.protobuf, application/json", protobuf_ok=False).codec == "json"


def test_cbor_is_acceptable_only_while_its_gate_is_on() -> None:
    with pytest.raises(errors.NotAcceptable):
        choose("application/cbor")
    assert choose("application/cbor", cbor=True) == Choice("cbor", "application/cbor")
    assert "application/cbor" in str(pytest.raises(errors.NotAcceptable, choose, "text/html", cbor=True).value)


@pytest.mark.parametrize("g", ["meta.k8s.io", "meta.svc.io"])
@pytest.mark.parametrize("v", ["v1", "v1beta1"])
def test_table_is_served_for_the_metadata_group_under_either_domain(g: str, v: str) -> None:
    choice = choose(f"application/json;as=Table;g={g};v={v}")
    assert (choice.codec, choice.as_kind, choice.meta_api_version) == ("json", "Table", f"{g}/{v}")


@pytest.mark.parametrize("accept", ["application/json;as=Table;g=meta.example.com;v=v1",
                                    "application/json;as=Table;g=meta.k8s.io;v=v2",
                                    "application/json;as=Table;g=meta.k8s.io",
                                    "application/json;as=Bogus;g=meta.k8s.io;v=v1"])
def test_a_conversion_the_server_cannot_make_falls_back_to_the_next_range(accept: str) -> None:
    assert choose(f"{accept}, application/yaml") == Choice("yaml", "application/yaml")
    with pytest.raises(errors.NotAcceptable):
        choose(accept)


def test_table_has_no_protobuf_or_cbor_form() -> None:
    for media in ("application/vnd.kubernetes.protobuf", "application/cbor"):
        accept = f"{media};as=Table;g=meta.k8s.io;v=v1"
        with pytest.raises(errors.NotAcceptable):
            choose(accept, cbor=True)
        assert choose(f"{accept}, {TABLE}", cbor=True).codec == "json"
    assert choose("application/yaml;as=Table;g=meta.k8s.io;v=v1").as_kind == "Table"


@pytest.mark.parametrize("media,codec", [("application/json", "json"), ("application/yaml", "yaml"),
                                         ("application/vnd.kubernetes.protobuf", "protobuf"),
                                         ("application/cbor", "cbor")])
def test_partial_object_metadata_is_served_in_every_codec(media: str, codec: str) -> None:
    for kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
        choice = choose(f"{media};as={kind};g=meta.k8s.io;v=v1", cbor=True)
        assert (choice.codec, choice.as_kind, choice.media_type) == (codec, kind, media)


def test_endpoints_without_conversions_skip_conversion_ranges() -> None:
    assert choose(f"{TABLE}, {POM}, application/json", allowed_as=("",)) == Choice("json", "application/json")


def test_kubectl_get_accept_header_asks_table_v1() -> None:
    accept = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
              "application/json")
    assert choose(accept).meta_api_version == "meta.k8s.io/v1"


def test_watch_streams_have_no_yaml_form() -> None:
    with pytest.raises(errors.NotAcceptable) as info:
        choose("application/yaml", stream=True)
    assert "application/yaml" not in str(info.value)
    assert choose("application/yaml, application/json", stream=True).codec == "json"


def test_cbor_watch_streams_are_cbor_sequences() -> None:
    for media in ("application/cbor", "application/cbor-seq"):
        assert choose(media, stream=True, cbor=True) == Choice("cbor", "application/cbor-seq")
    with pytest.raises(errors.NotAcceptable):
        choose("application/cbor-seq", cbor=True)  # a single object is one item, not a sequence


def test_a_stream_parameter_other_than_watch_is_not_acceptable() -> None:
    assert choose("application/vnd.kubernetes.protobuf;stream=watch", stream=True).codec == "protobuf"
    assert choose("application/json;stream=other, application/yaml").codec == "yaml"


@pytest.mark.parametrize("content_type,codec", [
    (None, "json"), ("", "json"), ("application/json", "json"), ("application/json; charset=utf-8", "json"),
    ("application/yaml", "yaml"), ("application/vnd.kubernetes.protobuf", "protobuf"),
    ("application/vnd.svc.protobuf", "protobuf"), ("Application/CBOR", "cbor")])
def test_request_body_decoder_follows_content_type(content_type: str | None, codec: str) -> None:
    assert request_codec(content_media_type(content_type), domain="svc.io", cbor=True) == codec


@pytest.mark.parametrize("content_type,media_type", [
    (None, ""), ("", ""), ("application/json", "application/json"),
    (" Application/Apply-Patch+YAML ; charset=utf-8", "application/apply-patch+yaml")])
def test_the_content_type_is_parsed_once_into_its_media_type(content_type: str | None, media_type: str) -> None:
    assert content_media_type(content_type) == media_type


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "application/cbor-seq",
                                          "application/vnd.other.protobuf"])
def test_unsupported_request_content_type_is_415(content_type: str) -> None:
    with pytest.raises(errors.UnsupportedMediaType) as info:
        request_codec(content_media_type(content_type), domain="svc.io", cbor=True)
    assert info.value.code == 415
    assert str(info.value).startswith("the body of the request was in an unknown format - accepted media types "
                                      "include: application/json, application/yaml")


def test_cbor_request_bodies_are_415_while_the_gate_is_off() -> None:
    with pytest.raises(errors.UnsupportedMediaType):
        request_codec("application/cbor", domain="svc.io")


@pytest.mark.parametrize("pretty,agent,expected", [
    ("true", "", True), ("1", "", True), ("false", "curl/8.0", False), ("nonsense", "", False),
    (None, "curl/8.5.0", True), (None, "Wget/1.21", True), (None, "Mozilla/5.0 (X11)", True),
    (None, "kubectl/v1.32.0", False), ("", "python-httpx/0.27", False)])
def test_pretty_printing_follows_the_query_then_the_user_agent(pretty: str | None, agent: str, expected: bool
                                                               ) -> None:
    assert wants_pretty(pretty, agent) is expected
