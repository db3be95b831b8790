"""miniplane's pytest plugin: a whole control plane per test, or one per session, for any client.

Registered by the package (`[project.entry-points.pytest11] miniplane`), so
a project that installs miniplane has these fixtures without a conftest line
(`-p no:miniplane` turns it off). Loading it costs nothing: this module
imports only pytest; the env (`runtime.controller.testing`) is imported by
name when a fixture first asks for it.

Function scope (pytest-trio: the env lives in the test's own trio run):

- `miniplane_env`: a running `TestEnv` (`open_test_env`), with the options
  below; served over HTTPS when `miniplane_https` says so or the test asks
  for `miniplane_kubeconfig`;
- `miniplane_client`: its admin client (in-process `LocalClient`);
- `miniplane_kubeconfig`: the path of its admin kubeconfig (HTTPS);
- `miniplane_namespace`: a fresh namespace of the env (its name).

Session scope (one env for the session, served over HTTPS by a trio run in a
background thread: `threaded_test_env`):

- `miniplane_session_env`: the `ServedTestEnv` (url, kubeconfig, CA, token);
- `miniplane_session_kubeconfig`: its kubeconfig's path (for synchronous
  clients: kubectl, the official `kubernetes` client);
- `miniplane_session_client` (function scope): an admin `HTTPClient` in the
  test's trio run;
- `miniplane_session_namespace` (function scope): a fresh namespace, deleted
  after the test.

Options, each an ini option (`[tool.pytest.ini_options]`), a command-line
option, and a fixture of the same name a suite overrides (in a conftest, a
module, or by `@pytest.mark.parametrize`):

- `miniplane_domain` / `--miniplane-domain`: the API domain (`svc.io`;
  `k8s.io` for manifests written for a cluster);
- `miniplane_controllers` / `--miniplane-controllers=true|false`: run the
  built-in controllers (true);
- `miniplane_crds` / `--miniplane-crds=PATH` (repeatable): CRD files and
  folders, created and Established before the test (ini paths are relative
  to the ini file, command-line paths to the working directory);
- `miniplane_https` / `--miniplane-https`: serve the function-scoped env over
  HTTPS too (false);
- `miniplane_admission` (a fixture only: its values are objects): the
  admission plug-ins the env's registry runs after each kind's own
  (`runtime.server.registry.AdmissionPlugin`; none by default).

The session env takes the ini and command-line options through the
session-scoped fixture `miniplane_session_options` (a dict of
`threaded_test_env`'s arguments), which a suite overrides to change them.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest

__all__ = ["pytest_addoption", "miniplane_domain", "miniplane_controllers", "miniplane_crds", "miniplane_https",
           "miniplane_admission", "miniplane_env", "miniplane_client", "miniplane_kubeconfig", "miniplane_namespace",
           "miniplane_session_options", "miniplane_session_env", "miniplane_session_kubeconfig",
           "miniplane_session_client", "miniplane_session_namespace"]

#: The env's module, imported when a fixture first needs it (it loads the server's library).
TESTING = "runtime.controller.testing"
DEFAULT_DOMAIN = "svc.io"  # runtime.machinery.scheme.DEFAULT_DOMAIN, unimported here (its import costs)


def _testing() -> Any:
    return importlib.import_module(TESTING)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("miniplane", "miniplane test env (runtime.pytest_plugin)")
    group.addoption("--miniplane-domain", dest="miniplane_domain", default=None,
                    help="API domain of the miniplane env (default: ini miniplane_domain, else svc.io)")
    group.addoption("--miniplane-controllers", dest="miniplane_controllers", choices=("true", "false"),
                    default=None, help="run the built-in controllers in the miniplane env (default: true)")
    group.addoption("--miniplane-crds", dest="miniplane_crds", action="append", default=None, metavar="PATH",
                    help="a CRD file or folder the miniplane env loads (repeatable)")
    group.addoption("--miniplane-https", dest="miniplane_https", action="store_true", default=None,
                    help="serve the function-scoped miniplane env over HTTPS too")
    parser.addini("miniplane_domain", "API domain of the miniplane env", default=DEFAULT_DOMAIN)
    parser.addini("miniplane_controllers", "run the built-in controllers in the miniplane env", type="bool",
                  default=True)
    parser.addini("miniplane_crds", "CRD files and folders the miniplane env loads", type="paths", default=[])
    parser.addini("miniplane_https", "serve the function-scoped miniplane env over HTTPS too", type="bool",
                  default=False)


def _option(config: pytest.Config, name: str) -> Any:
    """The command line's value of option `name`, else the ini file's."""
    given = config.getoption(name, default=None)
    if given is None:
        return config.getini(name)
    if name == "miniplane_controllers":
        return given == "true"
    if name == "miniplane_crds":
        return [Path(p).resolve() for p in given]
    return given


def _fixture_or(request: pytest.FixtureRequest, name: str, default: Any) -> Any:
    """Fixture `name`'s value, or `default` where it is not defined (a suite that imported only the env)."""
    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        return default


# ---- options ------------------------------------------------------------------------------------------

@pytest.fixture
def miniplane_domain(request: pytest.FixtureRequest) -> str:
    """The API domain `miniplane_env` serves; override it (conftest, module, or parametrize) for another."""
    return str(_option(request.config, "miniplane_domain"))


@pytest.fixture
def miniplane_controllers(request: pytest.FixtureRequest) -> bool:
    """Whether `miniplane_env` runs the built-in controllers; override it to return False for none."""
    return bool(_option(request.config, "miniplane_controllers"))


@pytest.fixture
def miniplane_crds(request: pytest.FixtureRequest) -> list[Path]:
    """The CRD files and folders `miniplane_env` loads (none by default)."""
    return list(_option(request.config, "miniplane_crds"))


@pytest.fixture
def miniplane_https(request: pytest.FixtureRequest) -> bool:
    """Whether `miniplane_env` is served over HTTPS too (also when the test asks for `miniplane_kubeconfig`)."""
    return bool(_option(request.config, "miniplane_https"))


@pytest.fixture
def miniplane_admission() -> list[Any]:
    """The admission plug-ins `miniplane_env`'s registry runs (none); override it to test with some."""
    return []


# ---- function scope -----------------------------------------------------------------------------------

@pytest.fixture
async def miniplane_env(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """pytest-trio fixture: a running `TestEnv` (see `open_test_env`) under `miniplane_domain`, with the
    built-in controllers unless `miniplane_controllers` is False, the CRDs of `miniplane_crds`, the admission
    plug-ins of `miniplane_admission`, served over HTTPS when `miniplane_https` is True or the test asks for
    `miniplane_kubeconfig`.

    The options are looked up by name, so a suite that imports only this fixture gets their defaults.
    """
    https = _fixture_or(request, "miniplane_https", False) or "miniplane_kubeconfig" in request.fixturenames
    async with _testing().open_test_env(domain=_fixture_or(request, "miniplane_domain", DEFAULT_DOMAIN),
                                        controllers=_fixture_or(request, "miniplane_controllers", True),
                                        crds=_fixture_or(request, "miniplane_crds", []), https=https,
                                        admission=_fixture_or(request, "miniplane_admission", [])) as env:
        yield env


@pytest.fixture
async def miniplane_client(miniplane_env: Any) -> Any:
    """The admin client of `miniplane_env` (in-process; `miniplane_env.http_client()` for one over HTTPS)."""
    return miniplane_env.client


@pytest.fixture
async def miniplane_kubeconfig(miniplane_env: Any) -> Path:
    """The admin kubeconfig of `miniplane_env`, served over HTTPS for the test (for kubectl and any client)."""
    return miniplane_env.kubeconfig


@pytest.fixture
async def miniplane_namespace(miniplane_env: Any) -> str:
    """A fresh namespace of `miniplane_env` (the env, and it, end with the test)."""
    return await _testing().fresh_namespace(miniplane_env.client)


# ---- session scope ------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def miniplane_session_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The arguments of the session's `threaded_test_env` (domain, controllers, crds): the ini and
    command-line options; override this fixture (session scope) to change them (any of `open_test_env`'s,
    e.g. `admission`)."""
    return {"domain": _option(request.config, "miniplane_domain"),
            "controllers": _option(request.config, "miniplane_controllers"),
            "crds": list(_option(request.config, "miniplane_crds"))}


@pytest.fixture(scope="session")
def miniplane_session_env(miniplane_session_options: dict[str, Any]) -> Iterator[Any]:
    """One env for the session, served over HTTPS from a background thread (`ServedTestEnv`)."""
    with _testing().threaded_test_env(**miniplane_session_options) as served:
        yield served


@pytest.fixture(scope="session")
def miniplane_session_kubeconfig(miniplane_session_env: Any) -> Path:
    """The session env's admin kubeconfig."""
    return miniplane_session_env.kubeconfig


@pytest.fixture
async def miniplane_session_client(miniplane_session_env: Any) -> AsyncIterator[Any]:
    """An admin `HTTPClient` on the session env, in the test's trio run, closed after the test."""
    async with miniplane_session_env.http_client(field_manager="test") as client:
        yield client


@pytest.fixture
async def miniplane_session_namespace(miniplane_session_client: Any) -> AsyncIterator[str]:
    """A fresh namespace of the session env for the test, deleted after it (its objects with it)."""
    name = await _testing().fresh_namespace(miniplane_session_client)
    yield name
    await _testing().drop_namespace(miniplane_session_client, name)
