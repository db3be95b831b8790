"""`api.request_class`: the query that misses without raising, and the request reached without a proxy."""

from __future__ import annotations

from unittest import mock

import pytest
from werkzeug import exceptions

from api.request_class import MiniplaneRequest, Query, current_request


def test_query_get_of_a_missing_key_answers_the_default_without_raising():
    query = Query([("limit", "5")])
    with mock.patch.object(exceptions.BadRequestKeyError, "__init__",
                           side_effect=AssertionError("a miss raised BadRequestKeyError")):
        assert query.get("timeout") is None
        assert query.get("fieldManager", "") == ""
        assert query.get("limit") == "5"


def test_query_keeps_werkzeugs_answers_for_present_keys():
    query = Query([("dryRun", "All"), ("dryRun", "All"), ("limit", "5"), ("limit_bad", "x")])
    assert query.getlist("dryRun") == ["All", "All"]
    assert query.get("limit", type=int) == 5
    assert query.get("limit_bad", -1, type=int) == -1  # a value the type refuses: the default, as werkzeug
    assert "limit" in query and "timeout" not in query
    with pytest.raises(KeyError):
        query["timeout"]  # indexing still raises, as the MultiDict contract says


async def test_the_app_serves_with_the_miniplane_request_and_its_query(tmp_path):
    from quart_trio import QuartTrio

    app = QuartTrio(__name__)
    app.request_class = MiniplaneRequest
    seen = {}

    @app.route("/q")
    async def answer():
        request = current_request()
        seen["class"] = type(request)
        seen["args"] = type(request.args)
        return request.args.get("x", "none")

    client = app.test_client()
    response = await client.get("/q?y=1")
    assert await response.get_data() == b"none"
    assert seen == {"class": MiniplaneRequest, "args": Query}


def test_current_request_outside_a_request_raises():
    with pytest.raises(RuntimeError, match="Not within a request context"):
        current_request()
