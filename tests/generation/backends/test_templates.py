import itertools

import pytest

from generation.backends import TypedInput, check_settings, make_backend
from nlgdata.inputs import E2E_ATTRIBUTES, E2E_VALUES
from nlgdata.text import indefinite_article

from .inputs import make_boxscore, make_mr, make_one_of_each, make_table, make_triples

# Values that the text repeats as they are (familyFriendly has its own test).
VERBATIM_VALUES = {
    **{a: v for a, v in E2E_VALUES.items() if a != "familyFriendly"},
    "near": ["Café Adriatic", "Burger King"],
}
TEMPLATE_KINDS = {
    "template-e2e": "mr",
    "template-rotowire": "boxscore",
    "template-table": "table",
    "template-triples": "triples",
}


def generate_one(backend_name: str, item: TypedInput) -> str:
    [result] = make_backend(backend_name, {}).generate([item])
    assert result.error == ""
    return result.text


def test_template_e2e_realises_the_brief_example():
    text = generate_one("template-e2e", make_mr())
    assert text == (
        "The Vaults is a pub with a price range of more than £30. "
        "It has a customer rating of 5 out of 5 and is located near Café Adriatic."
    )


@pytest.mark.parametrize("attribute", sorted(VERBATIM_VALUES))
def test_template_e2e_realises_every_value_of_each_attribute(attribute):
    for value in VERBATIM_VALUES[attribute]:
        text = generate_one("template-e2e", make_mr(**{attribute: value}))
        assert value.lower() in text.lower(), (attribute, value, text)


def test_template_e2e_realises_every_attribute_in_every_combination():
    optional = [a for a in E2E_ATTRIBUTES if a not in ("name", "familyFriendly")]
    full = {"eatType": "restaurant", "food": "Italian", "priceRange": "cheap",
            "customer rating": "average", "area": "riverside", "near": "Burger King"}  # fmt: skip
    for size in range(len(optional) + 1):
        for present in itertools.combinations(optional, size):
            values = {a: (full[a] if a in present else None) for a in optional}
            text = generate_one("template-e2e", make_mr(**values))
            for attribute in present:
                assert full[attribute].lower() in text.lower(), (present, text)
            assert text.startswith("The Vaults is ") and text.endswith(".")
            assert "  " not in text and " ." not in text and ",." not in text


def test_template_e2e_family_friendly_reads_as_english():
    yes = generate_one("template-e2e", make_mr(familyFriendly="yes", eatType="restaurant"))
    no = generate_one("template-e2e", make_mr(familyFriendly="no"))
    assert yes.startswith("The Vaults is a family-friendly restaurant")
    assert "not family-friendly" not in yes
    assert "It is not family-friendly." in no


def test_template_e2e_chooses_a_or_an():
    assert "an average customer rating" in generate_one(
        "template-e2e", make_mr(**{"customer rating": "average"})
    )
    assert "a low customer rating" in generate_one(
        "template-e2e", make_mr(**{"customer rating": "low"})
    )
    assert generate_one("template-e2e", make_mr(eatType="Indian restaurant")).startswith(
        "The Vaults is an Indian restaurant"
    )


def test_indefinite_article_follows_the_sound():
    cases = {"pub": "a", "average": "an", "hour": "an", "European": "a", "unique": "a"}
    for word, article in cases.items():
        assert indefinite_article(word) == article, word


def test_template_e2e_fast_food_is_not_fast_food_food():
    text = generate_one("template-e2e", make_mr(food="Fast food"))
    assert "serves fast food" in text and "food food" not in text


def test_template_e2e_realises_an_attribute_outside_e2e():
    text = generate_one("template-e2e", make_mr(wifiAvailable="free"))
    assert "Its wifi available is free." in text


def test_template_e2e_mr_without_name_is_a_per_input_error():
    backend = make_backend("template-e2e", {})
    bad = TypedInput("mr", {"attributes": [["eatType", "pub"]]})
    results = backend.generate([bad, make_mr()])
    assert results[0].text is None and "name" in results[0].error
    assert results[1].text.startswith("The Vaults")


def test_template_rotowire_follows_wiseman_et_al():
    text = generate_one("template-rotowire", make_boxscore())
    # The six top scorers by points, in order; the 15-point tie keeps input order.
    assert text == " ".join(
        [
            "The Charlotte Hornets (15-16) defeated the Boston Celtics (20-10) 105-98.",
            "Isaiah Thomas scored 30 points (10-20 FG, 3-8 3PT, 7-8 FT) to go with 5 rebounds.",
            "Kemba Walker scored 28 points (9-14 FG, 1-3 3PT, 2-2 FT) to go with 3 rebounds.",
            "Jae Crowder scored 15 points (5-7 FG, 1-3 3PT, 2-2 FT) to go with 5 rebounds.",
            "Nicolas Batum scored 15 points (5-7 FG, 1-3 3PT, 2-2 FT) to go with 9 rebounds.",
            "Avery Bradley scored 12 points (4-6 FG, 1-3 3PT, 2-2 FT) to go with 5 rebounds.",
            "Marvin Williams scored 9 points (3-4 FG, 1-3 3PT, 2-2 FT) to go with 5 rebounds.",
            "The Hornets' next game will be at home against the Dallas Mavericks, "
            "while the Celtics will travel to play the Bulls.",
        ]
    )


def test_template_rotowire_home_win_puts_home_team_first():
    item = make_boxscore()
    item.data["home"]["pts"] = 110
    text = generate_one("template-rotowire", item)
    assert text.startswith(
        "The Boston Celtics (20-10) defeated the Charlotte Hornets (15-16) 110-105. "
    )


def test_template_rotowire_skips_players_who_did_not_play():
    text = generate_one("template-rotowire", make_boxscore())
    assert "Tyler Zeller" not in text and "Jeremy Lamb" not in text


def test_template_table_describes_highlighted_cells():
    text = generate_one("template-table", make_table())
    assert text == (
        "In 1998 NFL draft, for the player Peyton Manning, the college is Tennessee. "
        "In 1998 NFL draft, for the player Ryan Leaf, the pick is 2."
    )


def test_template_table_without_highlight_describes_the_first_row():
    text = generate_one("template-table", make_table(highlighted=[]))
    for value in ["Peyton Manning", "quarterback", "Tennessee", "round is 1", "pick is 1"]:
        assert value in text
    assert "Ryan Leaf" not in text


def test_template_table_highlight_outside_the_table_is_a_per_input_error():
    [result] = make_backend("template-table", {}).generate([make_table(highlighted=[[9, 0]])])
    assert result.text is None and "outside the table" in result.error


def test_template_triples_one_sentence_per_triple_grouped_by_subject():
    text = generate_one("template-triples", make_triples())
    assert text == (
        "The occupation of Alan Bean is Test pilot. "
        "The birth place of Alan Bean is Wheeler, Texas. "
        "The crew members of Apollo 12 are Alan Bean. "
        "Wheeler, Texas is part of Texas."
    )


@pytest.mark.parametrize("backend_name", sorted(TEMPLATE_KINDS))
def test_template_backend_gives_per_input_errors_for_other_kinds(backend_name):
    inputs = make_one_of_each()
    results = make_backend(backend_name, {}).generate(inputs)
    assert len(results) == len(inputs)
    for item, result in zip(inputs, results, strict=True):
        if item.kind == TEMPLATE_KINDS[backend_name]:
            assert result.text and result.error == ""
        else:
            assert result.text is None
            assert f"does not handle input kind '{item.kind}'" in result.error


@pytest.mark.parametrize("backend_name", sorted(TEMPLATE_KINDS))
def test_template_backend_malformed_input_is_a_per_input_error(backend_name):
    kind = TEMPLATE_KINDS[backend_name]
    results = make_backend(backend_name, {}).generate([TypedInput(kind, {"wrong": 1})])
    assert results[0].text is None and f"invalid {kind} input" in results[0].error


def test_template_backend_empty_batch_gives_no_results():
    assert make_backend("template-e2e", {}).generate([]) == []


def test_template_backend_rejects_settings():
    with pytest.raises(ValueError, match="'num_beams'"):
        make_backend("template-e2e", {"num_beams": 2})
    with pytest.raises(ValueError, match="'colour'"):
        check_settings("template-table", {"colour": "red"})


def test_make_backend_unknown_name_is_a_value_error():
    with pytest.raises(ValueError, match="unknown backend 'template-xyz'"):
        make_backend("template-xyz", {})
