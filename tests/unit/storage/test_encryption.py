"""Encryption at rest (`runtime.server.storage.encryption`): kube's EncryptionConfiguration validation, the
providers' formats and prefixes, the prefix choice (reading with a second key, stale), the wrapping store
(ciphertext below, plaintext above, own writes' origin kept, an unreadable value), and the automatic reload."""

from __future__ import annotations

import base64
import json
import logging

import pytest
import trio

from runtime.machinery.storedobject import CorruptObject, ObjectEncoder, decode_stored
from runtime.server.storage import MemoryStore, StoreEvent
from runtime.server.storage.encryption import (
    ConfigError, EncryptingStore, Unreadable, is_stale, load_config, parse_config, reload_once, run_reload,
)
from runtime.server.storage.encryption.providers import (
    AESCBCTransformer, AESGCMTransformer, IdentityTransformer, SecretboxTransformer, TransformError,
)

DOMAIN = "svc.io"
KEY1 = base64.b64encode(b"1" * 32).decode()
KEY2 = base64.b64encode(b"2" * 32).decode()


def config_text(resources: list[str], *providers: dict) -> str:
    return json.dumps({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
                       "resources": [{"resources": resources, "providers": list(providers)}]})


def aes(kind: str, *keys: tuple[str, str]) -> dict:
    return {kind: {"keys": [{"name": n, "secret": s} for n, s in keys]}}


IDENTITY = {"identity": {}}


def config_error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, DOMAIN)
    return str(info.value)


# --- the configuration: kube's validation messages ---

def test_config_parses_yaml_as_kube_writes_it():
    text = f"""
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets, configmaps]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: {KEY1}
      - identity: {{}}
"""
    config = parse_config(text, DOMAIN)
    assert config.encrypts("/core/secrets/") and config.encrypts("/core/configmaps/")
    assert not config.encrypts("/core/serviceaccounts/")


def test_config_of_an_unknown_kind_or_version_is_kubes_no_kind_registered():
    assert config_error('{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "Nope", "resources": []}') == \
        'no kind "Nope" is registered for version "apiserver.config.k8s.io/v1"'
    assert config_error('{"apiVersion": "v9", "kind": "EncryptionConfiguration"}') == \
        'no kind "EncryptionConfiguration" is registered for version "v9"'


def test_config_that_is_not_yaml_is_one_line():
    message = config_error("resources: [unclosed\n  x: {")
    assert message.startswith("error converting YAML to JSON: ") and "\n" not in message


def test_config_that_is_not_yaml_names_the_line_never_its_text():
    # PyYAML's message quotes the offending line, which may hold a key; Go's yaml says only its number.
    secret = base64.b64encode(b"s" * 32).decode()
    text = f"kind: EncryptionConfiguration\nresources:\n- providers:\n  - aesgcm:\n      keys:\n" \
           f"      - name: k\n        secret: {secret}: [\n"
    message = config_error(text)
    assert secret not in message
    assert message == "error converting YAML to JSON: yaml: line 7: mapping values are not allowed here"


def test_config_that_is_not_an_object_names_its_json_type_never_its_text():
    # The key file passed by mistake: kube's decoder names the JSON type it met, not the value.
    assert config_error(KEY1) == (
        "couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type "
        'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    assert "cannot unmarshal array into" in config_error("[a, b]")


def test_config_provider_without_keys_is_required_keys():
    assert config_error(config_text(["secrets"], {"aesgcm": {"keys": []}})) == \
        "resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required"


@pytest.mark.parametrize("kind, size, sizes", [("aesgcm", 8, "[16 24 32]"), ("aescbc", 16, "[32]"),
                                                ("secretbox", 24, "[32]")])
def test_config_key_of_a_wrong_size_names_the_sizes_and_redacts_the_secret(kind, size, sizes):
    secret = base64.b64encode(b"x" * size).decode()
    assert config_error(config_text(["secrets"], aes(kind, ("k", secret)))) == (
        f'resources[0].providers[0].{kind}.keys[0].secret: Invalid value: "REDACTED": secret is not of the '
        f'expected length, got {size}, expected one of {sizes}')


def test_config_key_that_is_not_base64_is_kubes_must_be_base64():
    assert config_error(config_text(["secrets"], aes("aesgcm", ("k", "not base64!")))) == \
        'resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded'


def test_config_key_without_a_name_is_mandatory_name():
    assert config_error(config_text(["secrets"], aes("aesgcm", ("", KEY1)))) == \
        "resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key"


def test_config_naming_a_resource_twice_is_kubes_duplicate():
    assert config_error(config_text(["secrets", "secrets"], IDENTITY)) == (
        'resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same resource cannot be '
        'specified multiple times')


@pytest.mark.parametrize("resources, duplicate, overlap", [
    (["secrets", "*."], False, True), (["*.*", "configmaps.example.com"], False, True),
    (["*.*", "*.*"], True, True), (["secrets", "configmaps"], False, False)])
def test_config_resources_overlap_as_kube_counts_them(resources, duplicate, overlap):
    text = config_text(resources, IDENTITY)
    if not (duplicate or overlap):
        assert parse_config(text, DOMAIN).rules
        return
    message = config_error(text)
    assert ("the same resource cannot be specified multiple times" in message) is duplicate
    assert ("using overlapping resources such as 'secrets' and '*.' in the same resource list" in message) is overlap


def test_config_provider_of_two_kinds_is_one_per_element():
    assert "more than one provider specified in a single element" in config_error(
        config_text(["secrets"], {**aes("aesgcm", ("k", KEY1)), "identity": {}}))


def test_config_errors_never_echo_a_secret():
    secret = base64.b64encode(b"s" * 32).decode()
    misspelled = {"aesgcmm": {"keys": [{"name": "k", "secret": secret}]}}
    assert secret not in config_error(config_text(["secrets"], misspelled))
    assert secret not in config_error(json.dumps({"apiVersion": "apiserver.config.k8s.io/v1", "resources": [
        {"resources": ["secrets"], "providers": [aes("aesgcm", ("k", secret))]}]}))


def test_config_star_alone_says_to_use_star_dot():
    assert config_error(config_text(["*"], IDENTITY)) == (
        "resources[0].resources[0]: Invalid value: \"*\": use '*.' to encrypt all the resources from core API "
        "group or *.* to encrypt all resources")


def test_config_several_errors_are_kubes_aggregate_on_one_line():
    message = config_error(config_text(["Secrets"], {"aesgcm": {"keys": []}}))
    assert message.startswith("[resources[0].resources[0]: Invalid value: \"Secrets\": resource name should not")
    assert message.endswith("at least one keys is required]")


def test_config_resource_masked_by_an_earlier_wildcard_is_kubes_masked():
    doc = json.loads(config_text(["*."], IDENTITY))
    doc["resources"].append({"resources": ["secrets"], "providers": [aes("aesgcm", ("k", KEY1))]})
    assert config_error(json.dumps(doc)) == 'resource "secrets" is masked by earlier rule "*."'


def test_config_file_that_does_not_read_is_kubes_error_opening(tmp_path):
    with pytest.raises(ConfigError, match=r'^error opening encryption provider configuration file ".*nope": '
                                          r"No such file or directory$"):
        load_config(str(tmp_path / "nope"), DOMAIN)


def test_config_file_that_is_empty_is_kubes_empty(tmp_path):
    (tmp_path / "e").write_text("")
    with pytest.raises(ConfigError, match="is empty$"):
        load_config(str(tmp_path / "e"), DOMAIN)


# --- resources resolved to storage keys by name ---

@pytest.mark.parametrize("resource, prefix", [
    ("secrets", "/core/secrets/"), ("configmaps", "/core/configmaps/"),
    ("leases.coordination.svc.io", "/coordination/leases/"), ("widgets.example.com", "/example.com/widgets/"),
    ("*.", "/core/serviceaccounts/"), ("*.*", "/rbac.authorization/roles/"),
    ("*.coordination.svc.io", "/coordination/leases/"),
])
def test_resource_resolves_to_its_storage_prefix_by_name(resource, prefix):
    config = parse_config(config_text([resource], aes("aesgcm", ("k", KEY1))), DOMAIN)
    assert config.encrypts(prefix)


def test_core_wildcard_leaves_other_groups_alone():
    config = parse_config(config_text(["*."], aes("aesgcm", ("k", KEY1))), DOMAIN)
    assert not config.encrypts("/coordination/leases/")


# --- providers: formats and prefixes ---

CONTEXT = b"/core/secrets/default/s"


@pytest.mark.parametrize("transformer, overhead", [
    (AESGCMTransformer(b"k" * 16), 12 + 16), (AESCBCTransformer(b"k" * 32), 16 + 16),
    (SecretboxTransformer(b"k" * 32), 24 + 16)])
def test_provider_round_trips_with_its_nonce_and_tag(transformer, overhead):
    sealed = transformer.to_storage(b"x" * 32, CONTEXT)
    assert len(sealed) == 32 + overhead and b"x" * 8 not in sealed
    assert transformer.from_storage(sealed, CONTEXT) == (b"x" * 32, False)


def test_aesgcm_takes_the_storage_key_as_authenticated_data():
    gcm = AESGCMTransformer(b"k" * 32)
    with pytest.raises(TransformError, match="^cipher: message authentication failed$"):
        gcm.from_storage(gcm.to_storage(b"v", CONTEXT), b"/core/secrets/default/other")


def test_aescbc_is_iv_then_pkcs7_cbc_without_authenticated_data():
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    sealed = AESCBCTransformer(b"k" * 32).to_storage(b"abc", CONTEXT)
    decryptor = Cipher(algorithms.AES(b"k" * 32), modes.CBC(sealed[:16])).decryptor()
    assert decryptor.update(sealed[16:]) + decryptor.finalize() == b"abc" + bytes([13]) * 13
    assert AESCBCTransformer(b"k" * 32).from_storage(sealed, b"another key")[0] == b"abc"


def test_secretbox_is_nonce_then_nacl_box():
    import nacl.secret
    sealed = SecretboxTransformer(b"k" * 32).to_storage(b"abc", CONTEXT)
    assert nacl.secret.SecretBox(b"k" * 32).decrypt(sealed[24:], sealed[:24]) == b"abc"


def test_identity_refuses_encrypted_data():
    with pytest.raises(TransformError, match="^identity transformer tried to read encrypted data$"):
        IdentityTransformer().from_storage(b"k8s:enc:aesgcm:v1:k:...", CONTEXT)


@pytest.mark.parametrize("kind", ["aesgcm", "aescbc", "secretbox"])
def test_written_value_carries_kubes_prefix_with_the_key_name(kind):
    config = parse_config(config_text(["secrets"], aes(kind, ("key1", KEY1)), IDENTITY), DOMAIN)
    sealed = config.transformer_for("/core/secrets/").to_storage(b"{}", CONTEXT)
    assert sealed.startswith(f"k8s:enc:{kind}:v1:key1:".encode())


def test_identity_first_writes_plaintext_and_still_reads_encrypted():
    encrypting = parse_config(config_text(["secrets"], aes("aesgcm", ("key1", KEY1))), DOMAIN)
    sealed = encrypting.transformer_for("/core/secrets/").to_storage(b"{}", CONTEXT)
    migrating = parse_config(config_text(["secrets"], IDENTITY, aes("aesgcm", ("key1", KEY1))), DOMAIN)
    transformer = migrating.transformer_for("/core/secrets/")
    assert transformer.to_storage(b"{}", CONTEXT) == b"{}"
    assert transformer.from_storage(sealed, CONTEXT) == (b"{}", True)


def test_a_second_key_reads_and_is_stale():
    old = parse_config(config_text(["secrets"], aes("aesgcm", ("key1", KEY1))), DOMAIN)
    sealed = old.transformer_for("/core/secrets/").to_storage(b"{}", CONTEXT)
    rotated = parse_config(config_text(["secrets"], aes("aesgcm", ("key2", KEY2), ("key1", KEY1))), DOMAIN)
    transformer = rotated.transformer_for("/core/secrets/")
    assert transformer.from_storage(sealed, CONTEXT) == (b"{}", True)
    assert transformer.from_storage(transformer.to_storage(b"{}", CONTEXT), CONTEXT) == (b"{}", False)


def test_value_of_no_provider_is_kubes_no_matching_prefix():
    config = parse_config(config_text(["secrets"], aes("aesgcm", ("key1", KEY1))), DOMAIN)
    with pytest.raises(TransformError, match="^no matching prefix found$"):
        config.transformer_for("/core/secrets/").from_storage(b"k8s:enc:secretbox:v1:key1:xxxx", CONTEXT)


def test_value_of_an_unknown_key_name_is_kubes_no_matching_key():
    config = parse_config(config_text(["secrets"], aes("aesgcm", ("key1", KEY1))), DOMAIN)
    with pytest.raises(TransformError, match="^no matching key was found for the provided AES transformer$"):
        config.transformer_for("/core/secrets/").from_storage(b"k8s:enc:aesgcm:v1:key9:" + b"x" * 40, CONTEXT)


# --- the encrypting store ---

def store_over(raw: MemoryStore, *providers: dict, resources: tuple[str, ...] = ("serviceaccounts",)
               ) -> EncryptingStore:
    return EncryptingStore(raw, parse_config(config_text(list(resources), *providers), DOMAIN))


SA = "/core/serviceaccounts/default/robot"
OBJ = {"metadata": {"name": "robot", "namespace": "default"}, "secrets": [{"name": "plaintext-marker"}]}


async def test_store_holds_ciphertext_and_reads_back_plaintext():
    raw = MemoryStore()
    store = store_over(raw, aes("aesgcm", ("key1", KEY1)))
    entry = await store.create(SA, ObjectEncoder(OBJ))
    stored = (await raw.get(SA)).value
    assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:") and b"plaintext-marker" not in stored
    assert b"plaintext-marker" in entry.value and b"plaintext-marker" in (await store.get(SA)).value
    page = await store.list("/core/serviceaccounts/")
    assert [e.value for e in page.entries] == [(await store.get(SA)).value]


async def test_store_leaves_resources_the_config_does_not_name():
    raw = MemoryStore()
    store = store_over(raw, aes("aesgcm", ("key1", KEY1)))
    await store.create("/coordination/leases/default/l", lambda rev: b'{"metadata":{}}')
    assert (await raw.get("/coordination/leases/default/l")).value == b'{"metadata":{}}'


async def test_store_own_write_event_keeps_the_registry_encoder_as_origin():
    raw = MemoryStore()
    store = store_over(raw, aes("aesgcm", ("key1", KEY1)))
    seen: list[StoreEvent] = []
    events = store.follow("/", after_revision=0, sink=seen.append)
    async with trio.open_nursery() as nursery:
        async def drain():
            async for event in events:
                seen.append(event)
        nursery.start_soon(drain)
        await trio.testing.wait_all_tasks_blocked()
        encoder = ObjectEncoder(OBJ)
        await store.create(SA, encoder)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert len(seen) == 1 and seen[0].origin is encoder and b"plaintext-marker" in seen[0].value


async def test_store_watch_from_the_log_is_plaintext():
    raw = MemoryStore()
    store = store_over(raw, aes("secretbox", ("key1", KEY1)))
    await store.create(SA, ObjectEncoder(OBJ))
    events = store.watch("/core/", after_revision=0)
    event = await events.__anext__()
    await events.aclose()
    assert b"plaintext-marker" in event.value and event.origin is None


async def test_store_update_and_delete_events_carry_the_plaintext_prev_value():
    raw = MemoryStore()
    store = store_over(raw, aes("aesgcm", ("key1", KEY1)))
    await store.create(SA, ObjectEncoder(OBJ))
    await store.update(SA, ObjectEncoder(OBJ), expected_revision=None)
    await store.delete(SA, expected_revision=None)
    events = store.watch("/core/", after_revision=1)
    modified, deleted = await events.__anext__(), await events.__anext__()
    await events.aclose()
    assert (modified.type, deleted.type) == ("MODIFIED", "DELETED")
    assert b"plaintext-marker" in modified.prev_value and b"plaintext-marker" in deleted.prev_value


async def test_store_conflict_carries_the_plaintext_current():
    from runtime.server.storage import RevisionConflict
    raw = MemoryStore()
    store = store_over(raw, aes("aescbc", ("key1", KEY1)))
    await store.create(SA, ObjectEncoder(OBJ))
    with pytest.raises(RevisionConflict) as info:
        await store.update(SA, ObjectEncoder(OBJ), expected_revision=99)
    assert b"plaintext-marker" in info.value.current.value


async def test_store_value_no_provider_reads_is_a_corrupt_object_with_kubes_words():
    raw = MemoryStore()
    await store_over(raw, aes("aesgcm", ("key1", KEY1))).create(SA, ObjectEncoder(OBJ))
    other = store_over(raw, aes("aesgcm", ("key2", KEY2)))
    value = (await other.get(SA)).value
    assert isinstance(value, Unreadable)
    with pytest.raises(CorruptObject) as info:
        decode_stored(SA, value, 1)
    assert info.value.code == 500
    assert str(info.value).endswith("no matching key was found for the provided AES transformer")
    foreign = store_over(raw, aes("secretbox", ("key1", KEY1)))
    with pytest.raises(CorruptObject, match="no matching prefix found$"):
        decode_stored(SA, (await foreign.get(SA)).value, 1)


async def test_store_value_read_with_another_than_the_write_key_is_stale():
    raw = MemoryStore()
    await store_over(raw, aes("aesgcm", ("key1", KEY1))).create(SA, ObjectEncoder(OBJ))
    rotated = store_over(raw, aes("aesgcm", ("key2", KEY2), ("key1", KEY1)))
    assert await is_stale(rotated, SA)
    await rotated.update(SA, ObjectEncoder(OBJ), expected_revision=None)
    assert not await is_stale(rotated, SA)
    assert not await is_stale(raw, SA)  # a store without encryption: never stale


class NoReads(MemoryStore):
    async def get(self, key):
        raise AssertionError("read")


async def test_store_of_a_single_key_answers_stale_without_reading():
    assert not await is_stale(store_over(NoReads(), aes("aesgcm", ("key1", KEY1))), SA)
    assert not await is_stale(store_over(NoReads(), aes("aesgcm", ("key1", KEY1))), "/coordination/leases/a/b")


# --- automatic reload ---

def write_config(path, *providers: dict) -> None:
    path.write_text(config_text(["serviceaccounts"], *providers))


async def test_reload_swaps_to_a_changed_file(tmp_path, autojump_clock):
    path = tmp_path / "enc.json"
    write_config(path, aes("aesgcm", ("key1", KEY1)))
    raw = MemoryStore()
    store = EncryptingStore(raw, load_config(str(path), DOMAIN))
    async with trio.open_nursery() as nursery:
        await nursery.start(run_reload, store, str(path), 60.0)
        write_config(path, aes("aesgcm", ("key2", KEY2), ("key1", KEY1)))
        await trio.sleep(61)
        await store.create(SA, ObjectEncoder(OBJ))
        nursery.cancel_scope.cancel()
    assert (await raw.get(SA)).value.startswith(b"k8s:enc:aesgcm:v1:key2:")


async def test_reload_of_a_bad_file_keeps_the_config_in_force_and_logs(tmp_path, caplog):
    path = tmp_path / "enc.json"
    write_config(path, aes("aesgcm", ("key1", KEY1)))
    store = EncryptingStore(MemoryStore(), load_config(str(path), DOMAIN))
    before = store.config
    path.write_text(config_text(["serviceaccounts"], {"aesgcm": {"keys": []}}))
    with caplog.at_level(logging.ERROR):
        assert not reload_once(store, str(path))
    assert store.config is before
    assert "at least one keys is required" in caplog.text


async def test_reload_of_an_unchanged_file_does_nothing(tmp_path):
    path = tmp_path / "enc.json"
    write_config(path, aes("aesgcm", ("key1", KEY1)))
    store = EncryptingStore(MemoryStore(), load_config(str(path), DOMAIN))
    assert not reload_once(store, str(path))
