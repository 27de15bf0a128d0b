"""CSV cells that a spreadsheet will not run as formulas. Pure Python, no Django.

Excel, LibreOffice and Google Sheets treat a text cell that starts with `=`, `+`, `-` or
`@` (and, in some versions, tab or carriage return) as a formula; a system name such as
`-cmd|...` in a downloaded ranking would run. Such cells get a leading `'`, which the
spreadsheet shows as text and hides. Numbers are written as numbers.
"""

import csv
from collections.abc import Iterable
from typing import Any

from nlgdata.csvcells import FORMULA_STARTS


def safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def unguarded(value: str) -> str:
    """A cell as it was before `safe_cell`: readers of files the platform wrote (the E2E
    ratings export) get back the text that was exported."""
    if value.startswith("'") and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value


def safe_row(row: Iterable[Any]) -> list[Any]:
    return [safe_cell(value) for value in row]


class SafeWriter:
    """A csv.writer (same options) for files people open in spreadsheets: text cells go
    through `safe_cell`."""

    def __init__(self, out, **options):
        self.writer = csv.writer(out, **options)

    def writerow(self, row: Iterable[Any]) -> None:
        self.writer.writerow(safe_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)
