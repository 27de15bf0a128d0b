import pytest

from nlgdata.text import humanise, humanise_entity, label, normalise


@pytest.mark.parametrize(
    "name, expected",
    [
        ("eatType", "Eat type"),
        ("customer rating", "Customer rating"),
        ("familyFriendly", "Family friendly"),
        ("birth_place", "Birth place"),
        ("name", "Name"),
        ("NASA_id", "NASA id"),
    ],
)
def test_label_attribute_names(name, expected):
    assert label(name) == expected


@pytest.mark.parametrize(
    "name, expected",
    [
        ("birthPlace", "birth place"),
        ("crewMembers", "crew members"),
        ("isPartOf", "is part of"),
        ("NASA_id", "NASA id"),
        ("wifiAvailable", "wifi available"),
        ("customer rating", "customer rating"),
    ],
)
def test_humanise_reads_in_a_sentence(name, expected):
    assert humanise(name) == expected


def test_label_and_humanise_agree_but_for_the_first_letter():
    for name in ["priceRange", "NASA_id", "birth_place", "Área_total"]:
        assert label(name).lower() == humanise(name).lower()


def test_humanise_entity_keeps_case_and_drops_literal_quotes():
    assert humanise_entity("Alan_Bean") == "Alan Bean"
    assert humanise_entity('"1932-03-15"') == "1932-03-15"
    assert humanise_entity("Wheeler,_ _Texas") == "Wheeler, Texas"


def test_normalise_collapses_whitespace():
    assert normalise("  A  pub\n by\tthe river. ") == "A pub by the river."
