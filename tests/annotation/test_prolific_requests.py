"""Requests to Prolific's API go through the outbound module: to PROLIFIC_API_URL's host
only (a next-page link elsewhere would carry the token there), within
PROLIFIC_TIMEOUT_SECONDS however slowly the API answers, and errors that quote no body."""

import json

import pytest

from annotation.prolific import ProlificError, call, study_submissions
from tests.receivers import reply

TOKEN = "fake-prolific-token"


def json_reply(status: int, document: dict | bytes):
    return reply(status, document if isinstance(document, bytes) else json.dumps(document).encode())


def test_a_next_link_to_another_host_is_not_followed(serve, settings):
    elsewhere = serve(json_reply(200, {"results": [], "_links": {}}))
    link = {"results": [{"id": "s1"}], "_links": {"next": {"href": elsewhere.url + "page2"}}}
    prolific = serve(json_reply(200, link))
    settings.PROLIFIC_API_URL = prolific.url + "api/v1/"
    with pytest.raises(ProlificError, match="a link away from PROLIFIC_API_URL's host"):
        study_submissions(TOKEN, "study-1")
    assert [path for path, _ in prolific.requests] == ["/api/v1/studies/study-1/submissions/"]
    assert elsewhere.requests == []  # the token went nowhere else


def test_a_silent_api_is_given_up_at_the_deadline(slow, settings):
    receiver = slow("trickle", interval=0.2)
    settings.PROLIFIC_API_URL = f"http://127.0.0.1:{receiver.port}/api/v1/"
    settings.PROLIFIC_TIMEOUT_SECONDS = 1
    with pytest.raises(ProlificError, match="no complete answer within 1 s"):
        call(TOKEN, "GET", "studies/study-1/submissions/")


def test_an_error_answer_is_reported_without_its_body(serve, settings):
    page = b"<html>internal: db-password=hunter2</html>"
    settings.PROLIFIC_API_URL = serve(json_reply(502, page)).url + "api/v1/"
    with pytest.raises(ProlificError) as error:
        call(TOKEN, "GET", "studies/study-1/submissions/")
    assert "HTTP 502" in str(error.value) and "hunter2" not in str(error.value)
    settings.PROLIFIC_API_URL = serve(json_reply(400, {"detail": "bad study"})).url
    with pytest.raises(ProlificError, match="HTTP 400: bad study"):
        call(TOKEN, "GET", "studies/x/")


def test_an_answer_over_the_limit_is_not_read(serve, settings):
    settings.PROLIFIC_API_URL = serve(json_reply(200, {"results": ["x" * 5000]})).url
    settings.PROLIFIC_MAX_BYTES = 1000
    with pytest.raises(ProlificError, match="over PROLIFIC_MAX_BYTES"):
        call(TOKEN, "GET", "studies/x/")
