"""Inputs as a person reads them: each kind of DESIGN.md becomes a small, plain structure
that its template in templates/annotation/inputs/ lays out. Every value is text for the
template to escape; nothing here is marked safe."""

import re
from dataclasses import dataclass
from typing import Any

from nlgdata.text import humanise_entity, label

MAX_CELL_CHARS = 500


def cell(value) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def mr_context(data: dict) -> dict:
    return {"attributes": [(label(str(n)), cell(v)) for n, v in data["attributes"]]}


# Above about this many characters of cells in a row, with a cell's padding, a table does not
# fit beside the sentences on a wide screen (a column of 432 px at 1280 px): its HIT page
# lays it across the page instead (annotation_pages.wide_input).
NARROW_TABLE_CHARS = 48
WIDEST_CELL_CHARS = 40  # about as wide as a long cell is laid out
LONG_CELL_CHARS = 24  # a longer cell wraps at its spaces (templates/annotation/_task_base.html)


def table_context(data: dict) -> dict:
    """A table with its marks: a column whose every cell is highlighted is a marked column
    (its header marked, its cells tinted), any other highlighted cell is marked itself.
    LogicNLG links a statement to columns, not cells (its models read the linked columns of
    every row), and its loader highlights every cell of them: marked cell by cell, one
    statement's table had 113 marked cells, which marked nothing in particular."""
    header, rows = data["header"], data["rows"]
    marked = {tuple(pair) for pair in data.get("highlighted", [])}
    columns = marked_columns(marked, len(rows), len(header))
    if header and len(columns) == len(header):  # every column linked: none stands out
        marked, columns = set(), set()
    shown = [
        [
            TableCell(cell(value), (r, c) in marked and c not in columns, c in columns)
            for c, value in enumerate(row)
        ]
        for r, row in enumerate(rows)
    ]
    title = data.get("title") or data.get("caption") or ""
    return {
        "title": cell(title),
        "header": [(cell(name), c in columns) for c, name in enumerate(header)],
        "rows": shown,
        "marked_columns": len(columns),
        "marked_cells": len(marked) - len(columns) * len(rows),  # those marked on their own
    }


def is_wide(kind: str, data: dict) -> bool:
    """Whether the input is a table too wide for the column beside a HIT's sentences."""
    if kind != "table":
        return False
    return table_chars(data.get("header", []), data.get("rows", [])) > NARROW_TABLE_CHARS


@dataclass(frozen=True)
class TableCell:
    text: str
    marked: bool  # highlighted on its own
    in_marked_column: bool

    @property
    def long(self) -> bool:
        """Wraps (at spaces) rather than widen its column past reading."""
        return len(self.text) > LONG_CELL_CHARS


def marked_columns(marked: set, rows: int, columns: int) -> set[int]:
    """The columns whose every cell is marked, in a table of two rows or more (in one row,
    a marked cell is clearer than a marked column)."""
    if rows < 2:
        return set()
    return {c for c in range(columns) if all((r, c) in marked for r in range(rows))}


def table_chars(header: list, rows: list[list]) -> int:
    """About how many characters wide the table is laid out: each column as wide as its
    widest cell (at most WIDEST_CELL_CHARS), with two characters of padding."""
    widths = [len(str(name)) for name in header]
    for row in rows:
        widths = [max(w, len(str(value))) for w, value in zip(widths, row, strict=False)]
    return sum(min(w, WIDEST_CELL_CHARS) + 2 for w in widths)


# Box-score columns (RotoWire's names) in a fixed, familiar order, the main counts first;
# others follow alphabetically. JSON objects keep no key order on PostgreSQL (jsonb).
STAT_ORDER = (
    "WINS LOSSES PTS_QTR1 PTS_QTR2 PTS_QTR3 PTS_QTR4 START_POSITION MIN PTS REB AST STL BLK "
    "TO TOV PF FGM FGA FG_PCT FG3M FG3A FG3_PCT FTM FTA FT_PCT OREB DREB"
).split()
# Short headings where RotoWire's names are long.
STAT_HEADINGS = {"START_POSITION": "POS", "PTS_QTR1": "Q1", "PTS_QTR2": "Q2",
                 "PTS_QTR3": "Q3", "PTS_QTR4": "Q4"}  # fmt: skip


def stat_columns(records: list[dict], skip: set[str]) -> list[str]:
    found = {k for r in records for k, v in r.items() if k not in skip and is_scalar(v)}
    known = [c for c in STAT_ORDER if c in found]
    return known + sorted(found - set(known))


def is_scalar(value) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def figures(record: dict, nested: str) -> dict:
    """A team's or player's figures, whether at the top of the record (names as RotoWire
    writes them) or as the generation backends and the RotoWire loader store them: the
    team's wins, losses and points in lower case with the rest under `line`, a player's
    under `stats`."""
    flat = {key.upper(): value for key, value in record.items() if key not in ("name", "team")}
    return flat | {key.upper(): value for key, value in (record.get(nested) or {}).items()}


def boxscore_context(data: dict) -> dict:
    """A line score (one row per team) and a box score per team (one row per player)."""
    sides = [("visitor", data["visitor"]), ("home", data["home"])]
    team_figures = [figures(team, "line") for _, team in sides]
    team_columns = stat_columns(team_figures, {"CITY", "NAME"})
    teams: list[dict[str, Any]] = [
        {
            "side": side,
            "name": cell(f"{team['city']} {team['name']}"),
            "stats": [cell(numbers.get(c, "")) for c in team_columns],
        }
        for (side, team), numbers in zip(sides, team_figures, strict=True)
    ]
    players = [(p, figures(p, "stats")) for p in data["players"]]
    player_columns = stat_columns([numbers for _, numbers in players], set())
    for team in teams:
        team["players"] = [
            (cell(p["name"]), [cell(numbers.get(c, "")) for c in player_columns])
            for p, numbers in players
            if p.get("team") == team["side"]
        ]
    return {
        "team_columns": [STAT_HEADINGS.get(c, c) for c in team_columns],
        "player_columns": [STAT_HEADINGS.get(c, c) for c in player_columns],
        "teams": teams,
    }


def readable(entity) -> str:
    return cell(humanise_entity(str(entity)))


def triples_context(data: dict) -> dict:
    return {"triples": [(readable(s), label(str(r)), readable(o)) for s, r, o in data["triples"]]}


def document_context(data: dict) -> dict:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", data["text"]) if p.strip()]
    return {
        "title": cell(data.get("title", "")),
        "paragraphs": paragraphs,
        "question": cell(data["question"]),
    }


CONTEXTS = {
    "mr": mr_context,
    "table": table_context,
    "boxscore": boxscore_context,
    "triples": triples_context,
    "document": document_context,
}


def input_context(kind: str, data: dict) -> dict:
    """The template name and context for an input; unknown kinds show as plain text."""
    if kind in CONTEXTS:
        return {"kind": kind, "template": f"annotation/inputs/{kind}.html", **CONTEXTS[kind](data)}
    return {"kind": "unknown", "template": "annotation/inputs/unknown.html", "text": cell(data)}
