import pytest

from ranking.metrics import check_output, slot_errors

MR = [
    ["name", "The Mill"],
    ["eatType", "pub"],
    ["food", "Indian"],
    ["priceRange", "less than £20"],
    ["customer rating", "5 out of 5"],
    ["area", "riverside"],
    ["familyFriendly", "no"],
    ["near", "Café Sicilia"],
]


def test_check_output_all_slots_realised():
    text = (
        "The Mill is a cheap Indian pub by the river near Café Sicilia. It is highly rated "
        "but not family-friendly."
    )
    check = check_output(MR, text)
    assert check.all_realised, check
    assert set(check.realised) == {name for name, _ in MR}


@pytest.mark.parametrize(
    "phrase",
    [
        "is not family-friendly",
        "isn't very kid friendly",
        "is not suitable for children",
        "does not allow kids",
        "is a non family-friendly place",
        "is for adults only",
    ],
)
def test_check_output_family_friendly_no_phrasings(phrase):
    check = check_output([["name", "Zizzi"], ["familyFriendly", "no"]], f"Zizzi {phrase}.")
    assert check.realised == ("name", "familyFriendly")


@pytest.mark.parametrize(
    "phrase",
    ["is family friendly", "is kid-friendly", "welcomes children", "is great for families"],
)
def test_check_output_family_friendly_yes_phrasings(phrase):
    check = check_output([["name", "Zizzi"], ["familyFriendly", "yes"]], f"Zizzi {phrase}.")
    assert check.realised == ("name", "familyFriendly")


def test_check_output_negated_family_friendly_is_a_wrong_value_for_yes():
    check = check_output(
        [["name", "Zizzi"], ["familyFriendly", "yes"]], "Zizzi is not kid friendly."
    )
    assert check.wrong == ("familyFriendly",)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("less than £20", "prices under £20"),
        ("less than £20", "a cheap menu"),
        ("cheap", "a price range of less than 20 pounds"),
        ("£20-25", "meals cost £20 to £25"),
        ("moderate", "it is moderately priced"),
        ("more than £30", "dishes over £30"),
        ("high", "it is expensive"),
        ("high", "the price range is high"),
    ],
)
def test_check_output_price_phrasings(value, text):
    check = check_output([["priceRange", value]], text)
    assert check.realised == ("priceRange",)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("5 out of 5", "rated 5 out of 5"),
        ("5 out of 5", "a five star place"),
        ("high", "it is highly rated"),
        ("1 out of 5", "it has a low customer rating"),
        ("average", "its customer rating is average"),
        ("3 out of 5", "customers rate it 3/5"),
    ],
)
def test_check_output_rating_phrasings(value, text):
    check = check_output([["customer rating", value]], text)
    assert check.realised == ("customer rating",)


def test_check_output_high_price_is_not_a_high_rating():
    check = check_output([["customer rating", "high"]], "The Mill has a high price range.")
    assert check.missing == ("customer rating",)
    assert check.added == ("priceRange",)


def test_check_output_names_are_not_read_as_other_attributes():
    # "Café" in the near value is no coffee shop, "Indian" in it is no food.
    mr = [["name", "Cocum"], ["near", "Raja Indian Cuisine"]]
    check = check_output(mr, "Cocum is near Raja Indian Cuisine and Café Sicilia.")
    assert check.realised == ("name", "near")
    assert check.added == ("eatType",)  # the Café that is not in the MR's near


def test_check_output_missing_wrong_and_added():
    mr = [["name", "The Mill"], ["eatType", "pub"], ["area", "riverside"]]
    check = check_output(mr, "Mill is a coffee shop serving Italian food.")
    assert check.realised == ("name",)  # a leading "The" may be left out
    assert check.wrong == ("eatType",)
    assert check.missing == ("area",)
    assert check.added == ("food",)
    assert check.errors == 3 and not check.all_realised


def test_slot_errors_totals_and_rate():
    mr = [["name", "Zizzi"], ["eatType", "pub"]]
    errors = slot_errors(
        [
            (mr, "Zizzi is a pub."),
            (mr, "Zizzi is a family-friendly pub."),
            (mr, "Zizzi."),
            (mr, "It is a coffee shop."),
        ]
    )
    assert (errors.outputs, errors.slots) == (4, 8)
    assert (errors.all_realised, errors.with_added, errors.with_missing) == (1, 1, 2)
    assert errors.with_wrong == 1
    assert errors.errors == 1 + 1 + 2  # added, missing eatType, missing name + wrong eatType
    assert errors.ser == pytest.approx(4 / 8)
    assert errors.share(errors.all_realised) == 0.25
