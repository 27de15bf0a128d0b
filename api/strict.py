"""Requests are taken as sent, or refused: a field an endpoint does not take (unknown, or
read-only such as a campaign's `outputs_per_hit`) answers 400 naming it, never 200 with
the field ignored. The schemas forbid such fields in a body (schemas.Input); the records
of the bulk endpoints, free-form objects that the importers read, are held to the fields
those readers take here."""

from collections.abc import Iterable, Sequence
from typing import Any

from .bulk import SYSTEM_FIELDS

# The fields of a record that the bulk endpoints read (annotation/datafiles/importers.py).
ITEM_FIELDS = ("id", "kind", "input", "references")
OUTPUT_FIELDS = ("item", "text")
__all__ = ["ITEM_FIELDS", "OUTPUT_FIELDS", "SYSTEM_FIELDS"]


class FieldsNotTaken(Exception):
    def __init__(self, names: list[str]):
        super().__init__(", ".join(names))
        self.names = names


def not_taken(errors: Iterable[dict[str, Any]]) -> list[str]:
    """The fields django-ninja's errors name as not allowed (pydantic's extra_forbidden),
    as paths under the body or query (`outputs_per_hit`, `items`...)."""
    return [
        ".".join(str(part) for part in error["loc"][2:])
        for error in errors
        if error.get("type") == "extra_forbidden"
    ]


def not_taken_answer(names: list[str]) -> dict:
    shown = ", ".join(names)
    which = "a field" if len(names) == 1 else "fields"
    return {
        "detail": f"{shown}: {which} this request does not take (unknown or read-only);"
        " nothing was changed. The schema at /api/v1/openapi.json lists the fields it takes.",
        "field": names[0],
    }


def record_fields_taken(records: Sequence[dict], collection: str, fields: Sequence[str]) -> None:
    """FieldsNotTaken naming each record's field that the collection's records lack
    (`systems[2].lable`), before anything is written."""
    taken = set(fields)
    names = [
        f"{collection}[{index}].{name}"
        for index, record in enumerate(records)
        for name in record
        if name not in taken
    ]
    if names:
        raise FieldsNotTaken(names[:20])


def query_fields_taken(query: Iterable[str], fields: Sequence[str]) -> None:
    """FieldsNotTaken naming the query's parameters the endpoint does not read (an endpoint
    whose body is a file takes its options in the query)."""
    names = sorted(set(query) - set(fields))
    if names:
        raise FieldsNotTaken(names)
