import pytest

from nlgdata.inputs import KINDS, InputError, check_input, format_mr, input_key, parse_mr
from tests.annotation.sample_inputs import INPUTS


def test_parse_mr_reads_attribute_value_pairs():
    text = "name[The Vaults], eatType[pub],customer rating[ 5 out of 5 ]"
    assert parse_mr(text) == [
        ["name", "The Vaults"],
        ["eatType", "pub"],
        ["customer rating", "5 out of 5"],
    ]


def test_format_mr_is_the_inverse_of_parse_mr():
    text = "name[The Vaults], eatType[pub], near[Café Adriatic]"
    assert format_mr(parse_mr(text)) == text


@pytest.mark.parametrize("text", ["", "name The Vaults", "name[The Vaults] eatType[pub]"])
def test_parse_mr_refuses_what_is_not_an_mr(text):
    with pytest.raises(InputError, match="^mr: "):
        parse_mr(text)


def test_input_key_of_an_mr_ignores_spacing():
    spaced = {"attributes": [[" name ", "The  Vaults "], ["eatType", "pub"]]}
    assert input_key("mr", spaced) == "name[The Vaults], eatType[pub]"


def test_input_key_of_other_kinds_ignores_key_order():
    assert input_key("document", {"text": "t", "question": "q"}) == input_key(
        "document", {"question": "q", "text": "t"}
    )


def test_every_kind_has_a_sample_that_passes_its_check():
    assert set(INPUTS) == set(KINDS)
    for kind, (data, _) in INPUTS.items():
        check_input(kind, data)


def test_check_input_names_the_unknown_kind():
    with pytest.raises(InputError, match="unknown input kind 'audio'; expected one of mr, "):
        check_input("audio", {})
