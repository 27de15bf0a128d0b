"""RotoWire's number check (ranking.metrics.numbers) on a hand-made game: which numbers are
attached to whom, which the box score supports, and what the check leaves alone."""

import pytest

from ranking.metrics.numbers import check_summary, entities, number_support


def player(name: str, team: str, **stats) -> dict:
    return {"name": name, "team": team, "stats": {"MIN": 30, **stats}}


GAME = {
    "home": {
        "city": "Sacramento",
        "name": "Kings",
        "wins": 13,
        "losses": 18,
        "pts": 99,
        "line": {"PTS_QTR1": 20, "FG_PCT": 44, "AST": 19},
    },
    "visitor": {
        "city": "Philadelphia",
        "name": "76ers",
        "wins": 4,
        "losses": 26,
        "pts": 107,
        "line": {"PTS_QTR1": 31, "FG_PCT": 48, "AST": 25},
    },
    "players": [
        player("Rudy Gay", "home", PTS=25, REB=9, AST=3, FG3M=1),
        player("DeMarcus Cousins", "home", PTS=24, REB=13, AST=2, BLK="N/A"),
        player("Jason Thompson", "home", PTS=6, REB=7),
        player("Hollis Thompson", "visitor", PTS=12, REB=4),
        player("Nerlens Noel", "visitor", PTS=21, REB=11, MIN=33),
    ],
}


def test_numbers_are_checked_against_the_row_of_the_nearest_entity_before_them():
    found = check_summary(
        GAME,
        "The 76ers (4-26) beat the Sacramento Kings (13-18) 107-99. "
        "Rudy Gay scored 25 points and nine rebounds, and Cousins added 24 points and "
        "thirteen rebounds. Nerlens Noel had 21 points in 33 minutes.",
    )
    # 4, 26 (76ers); 13, 18, 107, 99 (Kings: a final score follows either team);
    # 25, 9 (Gay); 24, 13 (Cousins); 21, 33 (Noel). The 76 of "76ers" is no number.
    assert (found.checked, found.supported, found.unattached) == (12, 12, 0)


def test_wrong_numbers_are_unsupported_and_named():
    found = check_summary(GAME, "Rudy Gay scored 31 points. The Kings shot 50 percent.")
    assert (found.checked, found.supported) == (2, 0)
    assert found.unsupported == [("Rudy Gay", 31), ("Sacramento Kings", 50)]


def test_a_number_of_another_player_in_the_sentence_counts_against_the_nearest():
    # The documented limit: 24 is Cousins', but Gay is named last before it.
    found = check_summary(GAME, "Cousins and Rudy Gay scored 24 and 25 points.")
    assert found.unsupported == [("Rudy Gay", 24)] and found.supported == 1


def test_numbers_before_any_entity_are_unattached_and_not_checked():
    found = check_summary(GAME, "On Monday, 15,000 fans came. He scored 40. Noel had 11 rebounds.")
    assert (found.checked, found.supported, found.unattached) == (1, 1, 3)


def test_three_pointers_one_ordinals_and_decimals_are_no_numbers():
    found = check_summary(
        GAME,
        "Rudy Gay hit four three-pointers, one of them late, his 3-point shot a first "
        "in 2.5 games, and had twenty-five points.",
    )
    # "four" (unsupported: FG3M is 1) and "twenty-five" (25) only.
    assert (found.checked, found.supported) == (2, 1)
    assert found.unsupported == [("Rudy Gay", 4)]


def test_a_shared_last_name_is_not_a_mention():
    names = entities(GAME)
    assert "Thompson" not in names and "Gay" in names and "Kings" in names
    assert names["Hollis Thompson"].values >= {12, 4, 30}
    assert "N/A" not in names["DeMarcus Cousins"].values
    found = check_summary(GAME, "Cousins had 24 points; Thompson had 6.")
    assert (found.checked, found.supported) == (2, 1)  # 6 is attached to Cousins


def test_number_support_adds_the_summaries_up():
    total = number_support(
        [(GAME, "Rudy Gay scored 25 points."), (GAME, "Noel had 20 points."), (GAME, "Hi.")]
    )
    assert (total.outputs, total.checked, total.supported) == (3, 2, 1)
    assert total.share == pytest.approx(0.5)
    assert number_support([(GAME, "No numbers.")]).share is None
