"""The typed inputs of items: their kinds and checks, canonical keys, and the E2E MR syntax.

Importers, the annotator pages and the generation backends all read inputs in these shapes
(DESIGN.md, 'Inputs of the seed tasks'). A new kind is added to KINDS; the tables of the
places that show or realise inputs are keyed by these names.
"""

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .text import normalise

# The attributes of the E2E NLG Challenge's MRs, in the order its data sets write them.
E2E_ATTRIBUTES = (
    "name",
    "eatType",
    "food",
    "priceRange",
    "customer rating",
    "area",
    "familyFriendly",
    "near",
)
# The values of its closed attributes, as its data sets write them (name and near are open).
E2E_VALUES = {
    "eatType": ["pub", "restaurant", "coffee shop"],
    "food": ["Chinese", "English", "Fast food", "French", "Indian", "Italian", "Japanese"],
    "priceRange": ["less than £20", "£20-25", "more than £30", "cheap", "moderate", "high"],
    "customer rating": ["1 out of 5", "3 out of 5", "5 out of 5", "low", "average", "high"],
    "area": ["riverside", "city centre"],
    "familyFriendly": ["yes", "no"],
}
MR_ATTRIBUTE = re.compile(r"\s*([^\[\],]+?)\s*\[([^\]]*)\]\s*(?:,|$)")


class InputError(ValueError):
    """An input that does not have the shape of its kind, or that a backend cannot realise;
    the message names the field."""


def parse_mr(text: str) -> list[list[str]]:
    """`name[The Vaults], eatType[pub]` -> [["name", "The Vaults"], ["eatType", "pub"]]."""
    text = text.strip()
    attributes, position = [], 0
    while position < len(text):
        match = MR_ATTRIBUTE.match(text, position)
        if not match:
            raise InputError(
                f"mr: cannot read an attribute[value] pair at {text[position:][:40]!r}"
            )
        attributes.append([match.group(1), match.group(2).strip()])
        position = match.end()
    if not attributes:
        raise InputError("mr: no attribute[value] pairs")
    return attributes


def format_mr(attributes: Iterable[Sequence[str]]) -> str:
    """The inverse of `parse_mr`: [["name", "The Vaults"]] -> `name[The Vaults]`."""
    return ", ".join(f"{name}[{value}]" for name, value in attributes)


def _require(data: dict, field: str, kind: type, where: str) -> Any:
    if field not in data:
        raise InputError(f"{where}: missing field '{field}'")
    if not isinstance(data[field], kind):
        raise InputError(f"{where}: field '{field}' must be {kind.__name__}")
    return data[field]


def _check_mr(data: dict) -> None:
    attributes = _require(data, "attributes", list, "mr")
    for pair in attributes:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise InputError("mr: each attribute must be a [name, value] pair of strings")


def _check_table(data: dict) -> None:
    header = _require(data, "header", list, "table")
    rows = _require(data, "rows", list, "table")
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, list) or len(row) != len(header):
            raise InputError(f"table: row {number} must have {len(header)} cells")
    highlighted = data.get("highlighted", [])
    if not isinstance(highlighted, list):
        raise InputError("table: field 'highlighted' must be a list of [row, column] pairs")
    for cell in highlighted:
        if not (isinstance(cell, list) and len(cell) == 2 and all(map(_is_index, cell))):
            raise InputError(
                "table: highlighted cells must be [row, column] pairs of whole numbers"
            )
        row, column = cell
        if not (0 <= row < len(rows) and 0 <= column < len(header)):
            raise InputError(f"table: highlighted cell {cell} is outside the table")


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_boxscore(data: dict) -> None:
    for side in ("home", "visitor"):
        team = _require(data, side, dict, "boxscore")
        for field in ("city", "name"):
            _require(team, field, str, f"boxscore.{side}")
    for number, player in enumerate(_require(data, "players", list, "boxscore"), start=1):
        if not isinstance(player, dict) or "name" not in player:
            raise InputError(f"boxscore: player {number} needs a name")
        if player.get("team") not in ("home", "visitor"):
            raise InputError(f"boxscore: player {number} team must be 'home' or 'visitor'")


def _check_triples(data: dict) -> None:
    triples = _require(data, "triples", list, "triples")
    if not triples:
        raise InputError("triples: no triples")
    for number, triple in enumerate(triples, start=1):
        if not (isinstance(triple, list) and len(triple) == 3):
            raise InputError(f"triples: triple {number} must be [subject, relation, object]")


def _check_document(data: dict) -> None:
    _require(data, "text", str, "document")
    _require(data, "question", str, "document")


@dataclass(frozen=True)
class Kind:
    label: str  # as organisers read it in the admin
    check: Callable[[dict], None]  # raises InputError naming the field that is wrong


KINDS: dict[str, Kind] = {
    "mr": Kind("Meaning representation (E2E)", _check_mr),
    "table": Kind("Table", _check_table),
    "boxscore": Kind("Box score", _check_boxscore),
    "triples": Kind("Fact triples", _check_triples),
    "document": Kind("Document and question", _check_document),
}


def check_kind(kind: Any) -> None:
    if not isinstance(kind, str) or kind not in KINDS:
        shown = repr(kind)[:40]
        raise InputError(f"unknown input kind {shown}; expected one of {', '.join(KINDS)}")


def check_input(kind: Any, data: Any) -> None:
    check_kind(kind)
    if not isinstance(data, dict):
        raise InputError(f"{kind}: the input must be a JSON object")
    KINDS[kind].check(data)


def input_key(kind: str, data: dict) -> str:
    """A canonical text of an input, equal for equal inputs, to match outputs to items."""
    if kind == "mr":
        return format_mr([[n.strip(), normalise(v)] for n, v in data["attributes"]])
    return kind + ":" + json.dumps(data, sort_keys=True, ensure_ascii=False)
