import csv
import io
from decimal import Decimal

import pytest

from annotation.csvsafe import SafeWriter, safe_cell


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd", "'+cmd"),
        ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("tgen", "tgen"),
        ("a=b", "a=b"),
        ("", ""),
        (-0.5, -0.5),
        (-3, -3),
        (Decimal("-0.431000"), Decimal("-0.431000")),
        (None, None),
    ],
)
def test_safe_cell_quotes_text_that_starts_like_a_formula(value, written):
    assert safe_cell(value) == written


def test_safe_writer_writes_numbers_as_numbers_and_guards_text():
    out = io.StringIO()
    SafeWriter(out).writerows([["system", "mu"], ["-cmd", Decimal("-0.250000")]])
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [
        ["system", "mu"],
        ["'-cmd", "-0.250000"],
    ]
