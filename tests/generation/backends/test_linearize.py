import pytest

from generation.backends import TypedInput
from generation.backends.linearize import linearize
from nlgdata.inputs import KINDS, InputError

from .inputs import (
    make_boxscore,
    make_document,
    make_mr,
    make_one_of_each,
    make_table,
    make_triples,
)


def test_linearize_has_a_text_form_for_every_input_kind():
    items = make_one_of_each()
    assert {item.kind for item in items} == set(KINDS)
    assert all(linearize(item) for item in items)


def test_linearize_mr_uses_the_e2e_form_in_source_order():
    assert linearize(make_mr(near=None)) == (
        "name[The Vaults], eatType[pub], priceRange[more than £30], customer rating[5 out of 5]"
    )


def test_linearize_table_keeps_only_highlighted_cells():
    assert linearize(make_table()) == (
        "title: 1998 NFL draft | row 1: player: Peyton Manning, college: Tennessee | row 2: pick: 2"
    )


def test_linearize_table_without_highlight_gives_every_row():
    text = linearize(make_table(highlighted=[]))
    assert "row 3: round: 1, pick: 3, player: Andre Wadsworth" in text


def test_linearize_triples_uses_the_webnlg_form():
    assert linearize(make_triples()).startswith(
        "Alan_Bean | occupation | Test_pilot && Apollo_12 | crewMembers | Alan_Bean && "
    )


def test_linearize_boxscore_gives_teams_then_players_without_na():
    text = linearize(make_boxscore())
    assert text.startswith("home: Boston Celtics (20-10), points: 98, PTS_QTR1: 25")
    assert "visitor: Charlotte Hornets (15-16), points: 105" in text
    assert "Isaiah Thomas (home): MIN: 30, PTS: 30, REB: 5" in text
    assert "N/A" not in text and "Tyler Zeller" not in text


def test_linearize_document_puts_the_question_first():
    assert linearize(make_document()).startswith("question: date of birth | title: Alan Bean")


def test_linearize_unknown_kind_raises_input_error():
    with pytest.raises(InputError, match="'audio'"):
        linearize(TypedInput("audio", {}))
