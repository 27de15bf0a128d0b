"""Every answer the API tests get, checked against the schema the API serves
(/api/v1/openapi.json): the operation must exist for the path and method, the status must be
one it declares, the media type one it declares for that status, and a JSON body must
validate against the declared JSON Schema (OpenAPI 3.1's dialect, JSON Schema 2020-12).

`tests/api/conftest.py`'s ApiClient checks each response it receives; `checked_urlopen`
does the same for api/client.py's requests to a live server.
"""

import io
import json
import re
import urllib.error
import urllib.request
import urllib.response
from functools import cache
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator, FormatChecker

from tests.client import HttpsClient

PREFIX = "/api/v1"
# Answers the schema does not describe, on purpose: the schema itself (tests/api/test_schema.py
# validates it against the OpenAPI specification) and the page that browses it.
UNDESCRIBED = {f"{PREFIX}/openapi.json", f"{PREFIX}/docs"}
URLOPEN = urllib.request.urlopen  # the real one, which checked_urlopen calls


@cache
def served_schema() -> dict:
    """The schema as the API serves it (the same for every test of a run)."""
    response = HttpsClient().get(f"{PREFIX}/openapi.json")
    assert response.status_code == 200, response.status_code
    return response.json()


@cache
def routes() -> list[tuple[re.Pattern, str]]:
    """(pattern, path template) for each path of the schema, literal segments first, so
    that /campaigns/new/ would find a /campaigns/new/ before /campaigns/{slug}/."""
    templates = sorted(served_schema()["paths"], key=lambda path: path.count("{"))
    patterns = [
        re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$")
        for path in templates
    ]
    return list(zip(patterns, templates, strict=True))


def operation_for(method: str, path: str) -> tuple[str, dict] | None:
    for pattern, template in routes():
        if pattern.match(path):
            return template, served_schema()["paths"][template].get(method.lower(), {})
    return None


def validator_for(schema: dict) -> Draft202012Validator:
    # The document's components travel with the schema, so that its #/components/... refs
    # resolve within it.
    document = {**schema, "components": served_schema().get("components", {})}
    return Draft202012Validator(document, format_checker=FormatChecker())


def mismatches(method: str, path: str, status: int, media_type: str, body: bytes) -> list[str]:
    """What the answer does that the schema does not say it does; empty when described."""
    if path in UNDESCRIBED:
        return []
    found = operation_for(method, path)
    if found is None:
        return [f"{method} {path}: no path of the schema matches"]
    template, operation = found
    where = f"{method} {template} answered {status}"
    if not operation:  # a method the path does not have: 405 is what the schema implies
        return [] if status == 405 else [f"{where}: the schema has no {method} operation there"]
    responses = operation["responses"]
    declared = responses.get(str(status)) or responses.get(f"{status // 100}XX")
    declared = declared or responses.get("default")
    if declared is None:
        return [f"{where}: the schema declares only {sorted(responses)}"]
    content = declared.get("content") or {}
    if not content:
        return [] if not body else [f"{where}: a body where the schema declares none"]
    if media_type not in content:
        return [f"{where} {media_type}: the schema declares {sorted(content)}"]
    if media_type != "application/json":
        return []
    schema = content[media_type].get("schema", {})
    errors = validator_for(schema).iter_errors(json.loads(body))
    return [f"{where}: {error.json_path}: {error.message}" for error in errors]


def assert_described(method: str, path: str, status: int, media_type: str, body: bytes) -> None:
    problems = mismatches(method, path, status, media_type, body)
    assert not problems, "the answer is not the one the schema describes:\n" + "\n".join(problems)


def media_type_of(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip()


def checked_urlopen(request: urllib.request.Request, timeout: float | None = None):
    """urllib's urlopen for api/client.py, checking the answer (error answers too) before
    handing it back unread."""
    method, path = request.get_method(), urlsplit(request.full_url).path
    try:
        response = URLOPEN(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        body = error.read()
        media_type = media_type_of(error.headers.get("Content-Type"))
        assert_described(method, path, error.code, media_type, body)
        raise urllib.error.HTTPError(
            error.url, error.code, error.msg, error.headers, io.BytesIO(body)
        ) from None
    with response:
        body = response.read()
    media_type = media_type_of(response.headers.get("Content-Type"))
    assert_described(method, path, response.status, media_type, body)
    return urllib.response.addinfourl(
        io.BytesIO(body), response.headers, response.url, response.status
    )
