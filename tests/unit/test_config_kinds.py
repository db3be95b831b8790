"""ConfigMap and Secret rules (Kubernetes' `ValidateConfigMap`, `ValidateSecret`, their updates, the secret
strategy's decoding and defaulting, `SecretToSelectableFields`, `printConfigMap`/`printSecret`).

Messages and field paths are kube-apiserver's word for word; base64 errors are Go's `base64.StdEncoding`'s.
"""

from __future__ import annotations

import base64
import cProfile
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from runtime.machinery.errors import BadRequest
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import CONFIG_MAP, SECRET
from runtime.server.kinds.configdata import config_key_errors, go_base64

SCHEME = Scheme("k8s.io")
CM = next(t for t in SCHEME.types if t.info is CONFIG_MAP)
SEC = next(t for t in SCHEME.types if t.info is SECRET)
KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
           "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
MIB = 1024 * 1024
IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def cm(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ci"}, **fields}


def secret(type_: str | None = "Opaque", annotations: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "s", "namespace": "ci"}
    if annotations:
        meta["annotations"] = annotations
    obj = {"apiVersion": "v1", "kind": "Secret", "metadata": meta, **fields}
    if type_ is not None:
        obj["type"] = type_
    return obj


def decoded(rt: Any, obj: dict[str, Any]) -> dict[str, Any]:
    return rt.strategy.decode(Body(obj), "Strict")[0]


def errors_of(rt: Any, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(obj)]


def update_errors(rt: Any, new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate_update(new, old)]


# ---- the kinds --------------------------------------------------------------------------------------

def test_configmap_and_secret_are_core_v1_namespaced_and_only_configmap_has_a_short_name():
    assert (CM.api_version, CM.plural, CM.namespaced, CM.info.short_names) == ("v1", "configmaps", True, ("cm",))
    assert (SEC.api_version, SEC.plural, SEC.namespaced, SEC.info.short_names) == ("v1", "secrets", True, ())


# ---- IsConfigMapKey ---------------------------------------------------------------------------------

def test_config_key_is_alphanumerics_dash_underscore_dot():
    assert config_key_errors("a-b_c.D9") == []
    assert config_key_errors("a/b") == [KEY_MSG]
    assert config_key_errors("") == [KEY_MSG]


def test_config_key_is_at_most_253_characters():
    assert config_key_errors("k" * 253) == []
    assert config_key_errors("k" * 254) == ["must be no more than 253 characters"]


def test_config_key_length_counts_utf8_bytes_as_gos_len():
    # Go's len(value) counts bytes: 127 two-byte characters are 254 bytes, too long besides not a config key.
    assert config_key_errors("é" * 127) == ["must be no more than 253 characters", KEY_MSG]
    assert config_key_errors("é" * 126) == [KEY_MSG]


def test_config_key_is_not_dot_or_dotdot_nor_starts_with_dotdot():
    assert config_key_errors(".") == ["must not be '.'"]
    assert config_key_errors("..") == ["must not be '..'"]
    assert config_key_errors("..a") == ["must not start with '..'"]
    assert config_key_errors(".a") == []


def test_configmap_keys_of_data_and_binary_data_are_config_keys():
    assert errors_of(CM, cm(data={"a b": "x"}, binaryData={"c/d": b64("y")})) == [
        f'data[a b]: Invalid value: "a b": {KEY_MSG}', f'binaryData[c/d]: Invalid value: "c/d": {KEY_MSG}']


def test_secret_data_keys_are_config_keys_including_string_data_ones():
    obj = decoded(SEC, secret(stringData={"..x": "v"}))
    assert errors_of(SEC, obj) == ["data[..x]: Invalid value: \"..x\": must not start with '..'"]


# ---- ConfigMap ---------------------------------------------------------------------------------------

def test_configmap_name_is_a_dns_subdomain():
    obj = cm()
    obj["metadata"]["name"] = "Upper"
    assert [e.split(":")[0] for e in errors_of(CM, obj)] == ["metadata.name"]


def test_configmap_key_in_both_data_and_binary_data_is_a_duplicate():
    assert errors_of(CM, cm(data={"k": "x"}, binaryData={"k": b64("y")})) == [
        'data[k]: Invalid value: "k": duplicate of key present in binaryData']


def test_configmap_total_size_is_at_most_1_mib_of_both_maps():
    half = "x" * (MIB // 2)
    assert errors_of(CM, cm(data={"a": half}, binaryData={"b": b64(half)})) == []
    assert errors_of(CM, cm(data={"a": half}, binaryData={"b": b64(half + "x")})) == [
        ": Too long: must have at most 1048576 bytes"]


def test_configmap_size_counts_utf8_bytes_of_data():
    assert errors_of(CM, cm(data={"a": "é" * (MIB // 2 + 1)})) == [": Too long: must have at most 1048576 bytes"]


def test_immutable_configmap_freezes_data_and_binary_data():
    old = cm(immutable=True, data={"a": "1"}, binaryData={"b": b64("2")})
    new = cm(immutable=True, data={"a": "changed"}, binaryData={"b": b64("3")})
    assert update_errors(CM, new, old) == [f"data: {IMMUTABLE}", f"binaryData: {IMMUTABLE}"]
    assert update_errors(CM, cm(immutable=True, data={"a": "1"}, binaryData={"b": b64("2")}), old) == []


def test_immutable_configmap_cannot_be_unset():
    old = cm(immutable=True, data={"a": "1"})
    assert update_errors(CM, cm(data={"a": "1"}), old) == [f"immutable: {IMMUTABLE}"]
    assert update_errors(CM, cm(immutable=False, data={"a": "1"}), old) == [f"immutable: {IMMUTABLE}"]


def test_mutable_configmap_may_become_immutable_and_change_at_once():
    assert update_errors(CM, cm(immutable=True, data={"a": "2"}), cm(immutable=False, data={"a": "1"})) == []


# ---- base64 ([]byte) ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "offset"), [("YWJ", 0), ("YW=j", 2), ("YWJj=", 4), ("Y===", 1), ("YW*j", 2),
                                              ("YWJjZA", 4)])
def test_base64_errors_name_the_byte_go_names(text: str, offset: int):
    with pytest.raises(ValueError, match=f"^illegal base64 data at input byte {offset}$"):
        go_base64(text)


def test_a_bad_base64_value_is_walked_from_its_failing_group_only():
    # A value refused at its last byte costs what an accepted one does: Go's offset is found by counting,
    # then one group of four is walked (not the 350,000 groups before it): a few dozen Python calls.
    value = b64("x" * (MIB - 1)) + "\n*"
    profile = cProfile.Profile()
    with pytest.raises(ValueError, match=f"^illegal base64 data at input byte {len(value) - 1}$"):
        profile.runcall(go_base64, value)
    calls = sum(stat.callcount for stat in profile.getstats())
    assert calls < 100


def test_validation_sizes_the_decoded_values_without_decoding_them_again():
    # Decoding left each value canonical base64, so validation counts its bytes from its length: a 512 KiB
    # value decoded a second time cost about a tenth of its create.
    value = b64(b"\x01" * (MIB // 2))
    secret_obj = decoded(SEC, secret(data={"a": value, "b": b64("xy")}))
    cm_obj = decoded(CM, cm(binaryData={"a": value}))
    profile = cProfile.Profile()
    assert profile.runcall(SEC.strategy.validate, secret_obj) == []
    assert profile.runcall(CM.strategy.validate, cm_obj) == []
    assert [str(stat.code) for stat in profile.getstats() if "a2b_base64" in str(stat.code)] == []


def test_base64_skips_newlines_and_keeps_unstrict_padding_bits():
    assert go_base64("YW\nJj\r\n") == b"abc"
    assert go_base64("YR==") == b"a"


def test_binary_data_that_is_not_base64_is_kubes_decode_error():
    with pytest.raises(BadRequest) as caught:
        decoded(CM, cm(binaryData={"b": "not base64"}))
    assert caught.value.message == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 '
                                    'data at input byte 3')


def test_secret_data_that_is_not_base64_is_kubes_decode_error():
    with pytest.raises(BadRequest) as caught:
        decoded(SEC, secret(data={"k": "YWJ"}))
    assert caught.value.message == ('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at '
                                    'input byte 0')


def test_secret_data_of_the_wrong_json_type_names_gos_byte_slice():
    with pytest.raises(BadRequest) as caught:
        decoded(SEC, secret(data={"k": 1}))
    assert caught.value.message.endswith("json: cannot unmarshal number into Go struct field Secret.data of type "
                                         "[]uint8")


def test_a_null_map_value_is_an_empty_one_as_gos_decoder_leaves_it():
    assert decoded(CM, cm(data={"a": None}, binaryData={"b": None}))["data"] == {"a": ""}
    assert decoded(CM, cm(binaryData={"b": None}))["binaryData"] == {"b": ""}
    assert decoded(SEC, secret(data={"a": None}, stringData={"s": None}))["data"] == {"a": "", "s": ""}


def test_base64_values_are_kept_as_go_writes_them_back():
    assert decoded(CM, cm(binaryData={"b": "YR==\n"}))["binaryData"] == {"b": "YQ=="}
    assert decoded(SEC, secret(data={"k": "YW\nJj"}))["data"] == {"k": "YWJj"}


# ---- Secret: decoding and defaulting ----------------------------------------------------------------

def test_secret_string_data_is_merged_into_data_and_never_kept():
    obj = decoded(SEC, secret(data={"a": b64("old"), "b": b64("kept")}, stringData={"a": "new", "c": "é"}))
    assert obj["data"] == {"a": b64("new"), "b": b64("kept"), "c": b64("é")}
    assert "stringData" not in obj


def test_secret_type_defaults_to_opaque():
    assert decoded(SEC, secret(type_=None))["type"] == "Opaque"
    assert decoded(SEC, secret(type_=""))["type"] == "Opaque"


# ---- Secret: validation ------------------------------------------------------------------------------

def test_secret_name_is_a_dns_subdomain():
    obj = secret()
    obj["metadata"]["name"] = "a_b"
    assert [e.split(":")[0] for e in errors_of(SEC, obj)] == ["metadata.name"]


def test_secret_data_total_is_at_most_1_mib():
    assert errors_of(SEC, secret(data={"a": b64("x" * MIB)})) == []
    assert errors_of(SEC, secret(data={"a": b64("x" * MIB), "b": b64("y")})) == [
        "data: Too long: must have at most 1048576 bytes"]


def test_service_account_token_secret_needs_the_service_account_name_annotation():
    token = "kubernetes.io/service-account-token"
    assert errors_of(SEC, secret(token)) == [
        "metadata.annotations[kubernetes.io/service-account.name]: Required value"]
    assert errors_of(SEC, secret(token, {"kubernetes.io/service-account.name": "robot"})) == []


@pytest.mark.parametrize(("type_", "key"), [("kubernetes.io/dockercfg", ".dockercfg"),
                                            ("kubernetes.io/dockerconfigjson", ".dockerconfigjson")])
def test_docker_secrets_need_their_key_holding_a_json_object(type_: str, key: str):
    assert errors_of(SEC, secret(type_)) == [f"data[{key}]: Required value"]
    assert errors_of(SEC, secret(type_, data={key: b64('{"auths": {}}')})) == []
    assert errors_of(SEC, secret(type_, data={key: b64("xyz")})) == [
        f"data[{key}]: Invalid value: \"<secret contents redacted>\": invalid character 'x' looking for beginning "
        "of value"]
    assert errors_of(SEC, secret(type_, data={key: b64("[1]")})) == [
        f'data[{key}]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of '
        "type map[string]interface {}"]
    assert errors_of(SEC, secret(type_, data={key: b64('{"a":')})) == [
        f'data[{key}]: Invalid value: "<secret contents redacted>": unexpected end of JSON input']


def test_a_docker_config_with_nan_or_infinity_is_not_json_as_go_reads_it():
    # Python's decoder takes NaN and Infinity; Go's scanner refuses them where they start.
    key = ".dockerconfigjson"
    refused = [errors_of(SEC, secret("kubernetes.io/dockerconfigjson", data={key: b64(text)}))
               for text in ('{"auths": NaN}', '{"auths": -Infinity}')]
    assert refused == [
        [f'data[{key}]: Invalid value: "<secret contents redacted>": invalid character \'N\' looking for beginning '
         "of value"],
        [f'data[{key}]: Invalid value: "<secret contents redacted>": invalid character \'I\' in numeric literal']]


def test_basic_auth_secret_needs_a_username_or_a_password():
    assert errors_of(SEC, secret("kubernetes.io/basic-auth")) == [
        "data[username]: Required value", "data[password]: Required value"]
    assert errors_of(SEC, secret("kubernetes.io/basic-auth", data={"password": ""})) == []


def test_ssh_auth_secret_needs_a_non_empty_ssh_privatekey():
    assert errors_of(SEC, secret("kubernetes.io/ssh-auth", data={"ssh-privatekey": ""})) == [
        "data[ssh-privatekey]: Required value"]
    assert errors_of(SEC, secret("kubernetes.io/ssh-auth", data={"ssh-privatekey": b64("k")})) == []


def test_tls_secret_needs_tls_crt_and_tls_key():
    assert errors_of(SEC, secret("kubernetes.io/tls", data={"tls.crt": ""})) == ["data[tls.key]: Required value"]
    assert errors_of(SEC, secret("kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""})) == []


def test_bootstrap_token_and_custom_types_have_no_server_rule():
    assert errors_of(SEC, secret("bootstrap.kubernetes.io/token")) == []
    assert errors_of(SEC, secret("example.com/anything at all")) == []


# ---- Secret: update ------------------------------------------------------------------------------------

def test_secret_type_is_immutable():
    assert update_errors(SEC, secret("Opaque"), secret("kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""})) == [
        'type: Invalid value: "Opaque": field is immutable']


def test_immutable_secret_freezes_data_and_cannot_be_unset():
    old = secret(immutable=True, data={"a": b64("1")})
    assert update_errors(SEC, secret(immutable=True, data={"a": b64("2")}), old) == [f"data: {IMMUTABLE}"]
    assert update_errors(SEC, secret(data={"a": b64("1")}), old) == [f"immutable: {IMMUTABLE}"]
    assert update_errors(SEC, secret(immutable=True, data={"a": b64("1")}), old) == []


# ---- selection and columns ------------------------------------------------------------------------------

def test_secret_field_selector_type():
    assert "type" in SEC.strategy.field_labels and "type" not in CM.strategy.field_labels
    assert SEC.strategy.selectable_fields(secret("kubernetes.io/tls")) == {
        "metadata.name": "s", "metadata.namespace": "ci", "type": "kubernetes.io/tls"}


def test_configmap_columns_are_name_data_age_counting_both_maps():
    columns = CM.strategy.columns
    assert [c["name"] for c in columns.definitions] == ["Name", "Data", "Age"]
    assert columns.cells(cm(data={"a": "1"}, binaryData={"b": ""}))[:2] == ["c", 2]


def test_secret_columns_are_name_type_data_age():
    columns = SEC.strategy.columns
    assert [c["name"] for c in columns.definitions] == ["Name", "Type", "Data", "Age"]
    assert columns.cells(secret("kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""}))[:3] == [
        "s", "kubernetes.io/tls", 2]


# ---- a TLS Secret's key pair (warningsForSecret: Go's tls.X509KeyPair) -----------------------------------

def _pem_pair() -> tuple[bytes, bytes, bytes]:
    """A self-signed EC certificate, its key, and another EC key."""
    key, other = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "example.com")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + timedelta(days=1))
            .sign(key, hashes.SHA256()))

    def pem(k: ec.EllipticCurvePrivateKey) -> bytes:
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), pem(key), pem(other)


def tls_secret(cert: bytes, key: bytes) -> dict[str, Any]:
    return secret("kubernetes.io/tls", data={"tls.crt": b64(cert), "tls.key": b64(key)})


def test_tls_secret_whose_key_does_not_match_its_certificate_is_warned_in_gos_words():
    cert, key, other = _pem_pair()
    assert SEC.strategy.warnings(None, tls_secret(cert, key), "m") == []
    assert SEC.strategy.warnings(None, tls_secret(cert, other), "m") == ["tls: private key does not match public key"]
    assert SEC.strategy.warnings(None, tls_secret(b"", key), "m") == [
        "tls: failed to find any PEM data in certificate input"]
    assert SEC.strategy.warnings(None, tls_secret(key, cert), "m") == [
        "tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may "
        "have been switched"]
    assert SEC.strategy.warnings(None, tls_secret(cert, cert), "m") == [
        "tls: found a certificate rather than a key in the PEM for the private key"]
    assert SEC.strategy.warnings(None, secret("Opaque", data={"tls.crt": ""}), "m") == []
