"""A webhook's denial as the StatusError kube's `webhookerrors.ToStatusErr` makes of it (`webhooks.review.denial`):
the code, the message's words, the reason and details kept."""

from __future__ import annotations

import pytest

from runtime.server.admission.webhooks.review import denial


def test_a_denial_with_a_message_says_the_webhook_denied_it_with_that_message():
    error = denial("x", {"message": "no foo", "code": 403})
    assert (error.code, error.message) == (403, 'admission webhook "x" denied the request: no foo')


def test_a_denial_without_a_message_says_so_without_explanation():
    error = denial("x", None)
    assert (error.code, error.message) == (400, 'admission webhook "x" denied the request without explanation')


def test_a_denial_with_only_a_reason_shows_the_reason():
    assert denial("x", {"reason": "Conflict"}).message == 'admission webhook "x" denied the request: Conflict'


@pytest.mark.parametrize("code", [None, 0, 200, 399])
def test_a_denial_code_below_400_or_absent_is_400(code):
    assert denial("x", {"message": "m", "code": code}).code == 400


def test_a_denial_code_of_400_or_more_is_kept():
    assert denial("x", {"message": "m", "code": 422}).code == 422


def test_a_denials_reason_and_details_are_kept():
    error = denial("x", {"message": "m", "code": 409, "reason": "AlreadyExists", "details": {"name": "c"}})
    status = error.status()
    assert status["reason"] == "AlreadyExists" and status["details"]["name"] == "c"
