"""Text cells a spreadsheet will not run as formulas, and read back exactly. Pure Python.

Excel, LibreOffice and Google Sheets treat a text cell that starts with `=`, `+`, `-` or
`@` (and, in some versions, tab or carriage return) as a formula. `guard` puts a `'` before
such a cell, which the spreadsheet shows as text and hides; `unguard` takes it off again.

Unlike annotation/csvsafe.py's one-way guard, these two are exact inverses, for files that
must read back as they were written (the judgment files of nlgdata/judgment_files.py): a
cell that already starts with quotes before a formula character (`'=x`) gets one more
quote, and reading takes exactly one off. A cell that starts with a quote before anything
else is neither guarded nor unguarded.
"""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _looks_guarded(value: str) -> bool:
    return value.lstrip("'").startswith(FORMULA_STARTS)


def guard(value: str) -> str:
    if value.startswith(FORMULA_STARTS) or (value.startswith("'") and _looks_guarded(value)):
        return "'" + value
    return value


def unguard(value: str) -> str:
    """The cell as it was before `guard`; also undoes annotation/csvsafe.py's `safe_cell`."""
    if value.startswith("'") and _looks_guarded(value):
        return value[1:]
    return value
