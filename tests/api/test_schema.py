from openapi_spec_validator import validate

from tests.api.conftest import ApiClient


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
