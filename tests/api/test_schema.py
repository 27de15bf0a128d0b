from openapi_spec_validator import validate

from tests.api.conftest import ApiClient
from tests.api.openapi import mismatches


def test_openapi_schema_validates_and_describes_every_endpoint(db):
    response = ApiClient().call("GET", "/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    validate(schema)
    operations = [op for path in schema["paths"].values() for op in path.values()]
    assert len(operations) >= 15
    for operation in operations:
        assert operation["responses"], operation["operationId"]
        # Every one needs a token but Prolific's events, which are signed instead.
        signed = operation["operationId"].endswith("prolific_event")
        assert bool(operation.get("security")) != signed, operation["operationId"]
    assert "/api/v1/campaigns/{slug}/items/" in schema["paths"]


def test_docs_page_is_served_with_its_own_files(db):
    response = ApiClient().call("GET", "/docs")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
    assert b"cdn.jsdelivr" not in response.content  # the bundled files, not a CDN's


def test_answers_unlike_the_schema_are_caught(db):
    """The check every API test's answers go through (tests/api/openapi.py) finds a field of
    the wrong type, a status the operation does not declare, a media type it does not
    declare, and a path the schema does not have; the schema's own answers pass."""
    campaigns = "/api/v1/campaigns/"
    good = (
        b'[{"slug": "e2e", "name": "E2E", "description": "", "status": "open",'
        b' "outputs_per_hit": 5, "created_at": "2026-11-26T12:00:00Z", "criteria": [],'
        b' "standard_text": "The Eagle is a pub.", "standard_input_kind": "",'
        b' "standard_input": {}}]'
    )
    assert mismatches("GET", campaigns, 200, "application/json", good) == []
    assert "is not of type 'string'" in only(
        mismatches("GET", campaigns, 200, "application/json", good.replace(b'"e2e"', b"7"))
    )
    assert "declares only" in only(mismatches("GET", campaigns, 418, "application/json", b"{}"))
    assert "text/html" in only(mismatches("GET", campaigns, 200, "text/html", b"<p>"))
    assert "no path" in only(mismatches("GET", "/api/v1/nowhere/", 404, "text/html", b""))
    too_large = b"Request body too large."
    assert mismatches("POST", campaigns, 413, "text/plain", too_large) == []


def only(problems: list[str]) -> str:
    assert len(problems) == 1, problems
    return problems[0]
