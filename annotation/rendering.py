"""Inputs as a person reads them: each kind of DESIGN.md becomes a small, plain structure
that its template in templates/annotation/inputs/ lays out. Every value is text for the
template to escape; nothing here is marked safe."""

import re
from typing import Any

from nlgdata.text import humanise_entity, label

MAX_CELL_CHARS = 500


def cell(value) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def mr_context(data: dict) -> dict:
    return {"attributes": [(label(str(n)), cell(v)) for n, v in data["attributes"]]}


def table_context(data: dict) -> dict:
    marked = {tuple(pair) for pair in data.get("highlighted", [])}
    rows = [
        [(cell(value), (r, c) in marked) for c, value in enumerate(row)]
        for r, row in enumerate(data["rows"])
    ]
    title = data.get("title") or data.get("caption") or ""
    return {"title": cell(title), "header": [cell(h) for h in data["header"]], "rows": rows}


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
