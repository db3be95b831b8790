"""Schemathesis against the server's own `/openapi/v3` documents: every operation they list, fuzzed.

The documents are fetched from the server (the index, then each
group-version's), loaded by schemathesis, and every operation's requests
are generated from them, valid (positive) and invalid (negative), sent as
the admin through the in-process app (`tests.support.threaded`: a
`requests` session with no socket). Each answer must be safe: no 5xx, no
stack trace, a `Status` for an error (each JSON error answer read, and
counted, so that check is seen to run), and a refused request writes nothing
(the store's revision is unchanged). Every operation is exercised; bounded:
two examples each, derandomized, no database.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.support.server import IN_PROCESS_URL
from tests.support.threaded import ThreadedPlane

#: Examples per operation (each operation's, valid and invalid mixed).
EXAMPLES = 2


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    with ThreadedPlane(tmp_path_factory.mktemp("openapi-fuzz"), api_domain="k8s.io") as plane:
        yield plane


def server_operations(plane: ThreadedPlane) -> list:
    """Every operation of every group-version document the server serves, as schemathesis reads them."""
    index = json.loads(plane.request("GET", "/openapi/v3").content)
    operations = []
    for entry in index["paths"].values():
        document = json.loads(plane.request("GET", entry["serverRelativeURL"]).content)
        for result in schemathesis.openapi.from_dict(document).get_all_operations():
            operations.append(result.ok())
    return operations


def test_every_operation_of_the_servers_own_openapi_is_answered_safely(plane):
    operations = server_operations(plane)
    assert len(operations) > 80
    session = plane.session()
    token = plane.server.token
    seen: set[str] = set()
    statuses_checked = []  # error answers whose Status body was read: the check below ran

    def check(case) -> None:
        if (case.query or {}).get("watch") not in (None, False, "false", "0"):
            case.query = {**case.query, "timeoutSeconds": 1}
        before = plane.revision()
        response = case.call(base_url=IN_PROCESS_URL, session=session, headers={"Authorization": f"Bearer {token}"})
        label = f"{case.method} {case.formatted_path}"
        seen.add(case.operation.label)
        text = response.content.decode("utf-8", "replace")
        assert response.status_code < 500, f"{label}: {response.status_code} {text[:400]}"
        assert "Traceback" not in text and 'File "/' not in text, f"{label}: {text[:400]}"
        if response.status_code >= 400:
            assert plane.revision() == before, f"{label} answered {response.status_code} but wrote"
            # schemathesis keeps headers lower-cased, each a list of values
            content_type = (response.headers.get("content-type") or [""])[0]
            if content_type.startswith("application/json"):
                status = json.loads(response.content)
                assert status["kind"] == "Status" and status["code"] == response.status_code, f"{label}: {text[:400]}"
                statuses_checked.append(label)

    for operation in operations:  # every operation, a few examples each
        cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))
        settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))(given(case=cases)(check))()
    assert seen == {operation.label for operation in operations}
    assert len(statuses_checked) > 80, len(statuses_checked)  # the Status check ran (160 at this writing)
