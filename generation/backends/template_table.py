"""Template realiser for `table` inputs (LogicNLG / TabFact): the highlighted cells, row by row.

Each row with highlighted cells gives one sentence that names the row by its key cell (the
first column that holds words rather than numbers, "player" rather than "round"), then the
highlighted cells as "the <column> is <value>". With no highlight, the first row is described.
"""

from __future__ import annotations

from typing import Any

from nlgdata.inputs import InputError
from nlgdata.text import join_list, sentence


def realise_table(data: dict[str, Any]) -> str:
    header = [str(h) for h in data["header"]]
    rows = [[str(cell) for cell in row] for row in data["rows"]]
    if not rows:
        raise InputError("table input has no rows")
    key_column = find_key_column(rows)
    title = str(data.get("title") or "the table")
    cells_by_row = _highlighted_by_row(data.get("highlighted") or [], rows, header)
    return " ".join(
        _row_sentence(title, header, rows[r], columns, key_column)
        for r, columns in cells_by_row.items()
    )


def find_key_column(rows: list[list[str]]) -> int:
    """The first column most of whose cells are not numbers; column 0 if there is none."""
    for column in range(len(rows[0])):
        cells = [row[column] for row in rows if column < len(row)]
        numeric = sum(_is_number(cell) for cell in cells)
        if numeric * 2 < len(cells):
            return column
    return 0


def _is_number(cell: str) -> bool:
    try:
        float(cell.replace(",", "").replace("%", ""))
    except ValueError:
        return False
    return True


def _highlighted_by_row(
    highlighted: list, rows: list[list[str]], header: list[str]
) -> dict[int, list[int]]:
    if not highlighted:
        return {0: list(range(len(header)))}
    by_row: dict[int, list[int]] = {}
    for row, column in highlighted:
        row, column = int(row), int(column)
        if not (0 <= row < len(rows) and 0 <= column < min(len(header), len(rows[row]))):
            raise InputError(f"highlighted cell ({row}, {column}) is outside the table")
        by_row.setdefault(row, [])
        if column not in by_row[row]:
            by_row[row].append(column)
    return by_row


def _row_sentence(
    title: str, header: list[str], row: list[str], columns: list[int], key: int
) -> str:
    facts = [f"the {header[c]} is {row[c]}" for c in columns if c != key]
    if not facts:
        return sentence(f"{title} lists the {header[key]} {row[key]}")
    return sentence(f"in {title}, for the {header[key]} {row[key]}, {join_list(facts)}")
