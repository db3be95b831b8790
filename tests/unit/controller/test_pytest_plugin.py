"""The pytest plugin the package registers (entry point `pytest11`: `runtime.pytest_plugin`), as a user's
project sees it: `pytester` runs small suites using its fixtures in function and session scope, with its ini
options, command-line options and fixture overrides; loading it loads nothing of the server."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[3]

APPLES = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
          "metadata": {"name": "apples.example.com"},
          "spec": {"group": "example.com", "scope": "Namespaced",
                   "names": {"plural": "apples", "singular": "apple", "kind": "Apple"},
                   "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                       "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}

FUNCTION_SCOPE = '''
async def test_env_client_and_namespace(miniplane_env, miniplane_client, miniplane_namespace):
    assert miniplane_env.scheme.domain == "k8s.io"  # the ini option
    assert miniplane_env.url is None  # not served: the test asked for no kubeconfig
    namespace = await miniplane_client.get(miniplane_client.scheme.by_kind("Namespace"), miniplane_namespace)
    assert namespace["status"]["phase"] == "Active"
    assert [c["metadata"]["name"] for c in miniplane_env.crds] == ["apples.example.com"]
    await miniplane_client.create({"apiVersion": "example.com/v1", "kind": "Apple",
                                   "metadata": {"name": "a", "namespace": miniplane_namespace}})

async def test_kubeconfig_serves_the_env_over_https(miniplane_kubeconfig, miniplane_env):
    assert miniplane_kubeconfig.exists() and miniplane_env.url.startswith("https://127.0.0.1:")
    async with miniplane_env.http_client() as http:
        assert (await http.get(http.scheme.by_kind("Namespace"), "default"))["metadata"]["name"] == "default"
'''

SESSION_SCOPE = '''
from runtime.machinery import errors

SEEN = []

async def test_first(miniplane_session_env, miniplane_session_client, miniplane_session_namespace,
                     miniplane_session_kubeconfig):
    assert miniplane_session_kubeconfig.exists() and miniplane_session_env.domain == "k8s.io"
    await miniplane_session_client.create({"apiVersion": "example.com/v1", "kind": "Apple",
                                           "metadata": {"name": "a", "namespace": miniplane_session_namespace}})
    SEEN.append((miniplane_session_env.url, miniplane_session_namespace))

async def test_second(miniplane_session_env, miniplane_session_client, miniplane_session_namespace):
    url, first_namespace = SEEN[0]
    assert miniplane_session_env.url == url  # one env for the session
    assert miniplane_session_namespace != first_namespace  # a fresh namespace per test
    try:  # the first test's, deleted after it: terminating, or already gone
        before = await miniplane_session_client.get(miniplane_session_client.scheme.by_kind("Namespace"),
                                                    first_namespace)
        assert before["metadata"].get("deletionTimestamp")
    except errors.NotFound:
        pass
    apples = await miniplane_session_client.list(miniplane_session_client.scheme.by_kind("Apple"),
                                                 namespace=miniplane_session_namespace)
    assert apples.items == []
'''


@pytest.fixture
def user_project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "crds").mkdir()
    (pytester.path / "crds" / "apples.yaml").write_text(yaml.safe_dump(APPLES))
    pytester.makeini("[pytest]\ntrio_mode = true\nminiplane_domain = k8s.io\nminiplane_crds = crds\n")
    return pytester


def test_the_package_registers_the_plugin_as_a_pytest11_entry_point():
    points = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "miniplane"]
    assert [e.value for e in points] == ["runtime.pytest_plugin"]


def test_the_plugins_default_domain_is_the_schemes():
    from runtime.machinery.scheme import DEFAULT_DOMAIN
    from runtime.pytest_plugin import DEFAULT_DOMAIN as PLUGIN_DEFAULT

    assert PLUGIN_DEFAULT == DEFAULT_DOMAIN


def test_loading_the_plugin_loads_nothing_of_the_server():
    script = ("import sys, runtime.pytest_plugin; "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('runtime', 'api', 'controllers')))")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['runtime', 'runtime.pytest_plugin']"


def test_function_scoped_fixtures_give_an_env_its_client_a_namespace_and_a_kubeconfig(user_project):
    user_project.makepyfile(test_function_scope=FUNCTION_SCOPE)
    user_project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_session_scoped_fixtures_share_one_env_with_a_fresh_namespace_per_test(user_project):
    user_project.makepyfile(test_session_scope=SESSION_SCOPE)
    user_project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_command_line_options_override_the_ini_file(user_project):
    user_project.makepyfile(test_options='''
async def test_options(miniplane_env):
    assert miniplane_env.scheme.domain == "svc.io"
    assert miniplane_env.controllers is None and miniplane_env.crds == []
    assert miniplane_env.url.startswith("https://")
''')
    user_project.runpytest("-p", "no:cacheprovider", "--miniplane-domain", "svc.io",
                           "--miniplane-controllers=false", "--miniplane-https",
                           "-o", "miniplane_crds=").assert_outcomes(passed=1)


def test_a_fixture_of_an_option_name_overrides_it(user_project):
    user_project.makeconftest('''
import pytest

@pytest.fixture
def miniplane_controllers():
    return False

@pytest.fixture
def miniplane_crds():
    return []

@pytest.fixture
def miniplane_admission():
    from runtime.machinery import errors
    from runtime.server.registry import AdmissionPlugin

    def deny(request):
        if request.obj["metadata"]["name"] == "denied":
            raise errors.BadRequest("denied by the suite's plug-in")
    return [AdmissionPlugin("deny", deny)]
''')
    user_project.makepyfile(test_override='''
import pytest

@pytest.mark.parametrize("miniplane_domain", ["svc.io"])
async def test_overridden(miniplane_env, miniplane_domain):
    assert miniplane_env.controllers is None and miniplane_env.scheme.domain == "svc.io"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "denied"}}
    with pytest.raises(Exception, match="denied by the suite's plug-in"):
        await miniplane_env.client.create(namespace)
''')
    user_project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_session_options_fixture_is_overridable(user_project):
    user_project.makeconftest('''
import pytest

@pytest.fixture(scope="session")
def miniplane_session_options():
    return {"domain": "svc.io", "controllers": True}
''')
    user_project.makepyfile(test_session_override='''
async def test_domain(miniplane_session_env, miniplane_session_client):
    assert miniplane_session_env.domain == "svc.io" and miniplane_session_env.crds == ()
    default = await miniplane_session_client.get(miniplane_session_client.scheme.by_kind("Namespace"), "default")
    assert default["metadata"]["name"] == "default"
''')
    user_project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_plugin_adds_its_options_to_pytest_help(pytester: pytest.Pytester):
    out = pytester.runpytest("--help")
    out.stdout.fnmatch_lines(["*--miniplane-domain=MINIPLANE_DOMAIN*", "*--miniplane-crds=PATH*",
                              "*miniplane_https (bool)*"])
