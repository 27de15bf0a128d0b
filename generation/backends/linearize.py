"""Typed inputs as one line of text, for models that read text (local checkpoints, HTTP APIs).

The formats follow what models for each data set were usually trained on, so that a
fine-tuned checkpoint sees what it saw in training:
- mr: the E2E form, "name[The Vaults], eatType[pub]".
- triples: WebNLG-style "subject | relation | object", triples joined by " && ".
- table: the title, then each described row as "column: value" pairs; only the highlighted
  cells (ToTTo/LogicNLG style) when there are some, else the whole table.
- boxscore: the line score of each team, then each player's line (stats that are N/A left out).
- document: question, title and text (WikiReading as reading comprehension).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nlgdata.inputs import InputError, format_mr

from .base import TypedInput

_BOXSCORE_STATS = tuple("MIN PTS REB AST STL BLK TO FGM FGA FG3M FG3A FTM FTA PF".split())


def linearize(item: TypedInput) -> str:
    """The input as text; raises InputError for a kind it does not know."""
    try:
        linearizer = _LINEARIZERS[item.kind]
    except KeyError:
        raise InputError(f"no text form for input kind '{item.kind}'") from None
    return linearizer(item.data)


def linearize_mr(data: dict[str, Any]) -> str:
    return format_mr(data["attributes"])


def linearize_triples(data: dict[str, Any]) -> str:
    return " && ".join(" | ".join(str(part) for part in triple) for triple in data["triples"])


def linearize_table(data: dict[str, Any]) -> str:
    header = [str(h) for h in data["header"]]
    rows = data["rows"]
    highlighted = data.get("highlighted") or []
    if highlighted:
        cells: dict[int, list[int]] = {}
        for row, column in highlighted:
            cells.setdefault(int(row), []).append(int(column))
    else:
        cells = {r: list(range(len(header))) for r in range(len(rows))}
    described = [
        f"row {r + 1}: " + ", ".join(f"{header[c]}: {rows[r][c]}" for c in columns)
        for r, columns in cells.items()
    ]
    return f"title: {data.get('title', '')} | " + " | ".join(described)


def linearize_boxscore(data: dict[str, Any]) -> str:
    teams = [_team_line(side, data[side]) for side in ("home", "visitor")]
    players = [_player_line(p) for p in data.get("players", [])]
    return " | ".join(teams + [p for p in players if p])


def _team_line(side: str, team: dict[str, Any]) -> str:
    name = f"{team.get('city', '')} {team['name']}".strip()
    line = ", ".join(f"{key}: {value}" for key, value in (team.get("line") or {}).items())
    text = f"{side}: {name} ({team['wins']}-{team['losses']}), points: {team['pts']}"
    return f"{text}, {line}" if line else text


def _player_line(player: dict[str, Any]) -> str:
    stats = player.get("stats") or {}
    known = [(k, stats[k]) for k in _BOXSCORE_STATS if stats.get(k) not in (None, "", "N/A")]
    if not known:
        return ""
    figures = ", ".join(f"{key}: {value}" for key, value in known)
    return f"{player['name']} ({player.get('team', '')}): {figures}"


def linearize_document(data: dict[str, Any]) -> str:
    return f"question: {data['question']} | title: {data.get('title', '')} | text: {data['text']}"


_LINEARIZERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "mr": linearize_mr,
    "triples": linearize_triples,
    "table": linearize_table,
    "boxscore": linearize_boxscore,
    "document": linearize_document,
}
