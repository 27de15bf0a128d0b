"""A small campaign shaped like the E2E one, for the browser test and the screenshots."""

from annotation.models import Campaign
from tests.factories import make_campaign, make_item, make_output, make_system

GREEN_MAN = [
    ["name", "Green Man"],
    ["eatType", "pub"],
    ["food", "Japanese"],
    ["area", "city centre"],
    ["familyFriendly", "yes"],
    ["near", "Express by Holiday Inn"],
]
OUTPUTS = {
    "slug": "Green Man is a family-friendly Japanese pub in the city centre near Express by "
    "Holiday Inn.",
    "tgen": "Green Man is a family-friendly japanese pub located in the city centre near Express "
    "by Holiday Inn.",
    "tr2": "Located in city centre near Express by Holiday Inn, Green Man is a family-friendly "
    "pub serving Japanese.",
    "sheff2": "Green Man is a pub located near the Express by Holiday Inn. It is a family "
    "friendly pub.",
    "tuda": "Green Man is a family-friendly pub which serves Japanese food. It is located in the "
    "city centre area, near Express by Holiday Inn.",
}


def demo_campaign(**overrides) -> Campaign:
    """One E2E item with five systems' outputs; k = 5, both criteria open."""
    fields = {
        "slug": "demo",
        "name": "E2E demo",
        "outputs_per_hit": 5,
        "min_seconds_per_hit": 0,
        "max_hits_per_annotator": 1,
        "standard_text": "The Vaults is a family-friendly pub near Café Adriatic by the riverside.",
        "standard_input": {
            "attributes": [
                ["name", "The Vaults"],
                ["eatType", "pub"],
                ["area", "riverside"],
                ["familyFriendly", "yes"],
                ["near", "Café Adriatic"],
            ]
        },
    }
    fields.update(overrides)
    campaign = make_campaign(**fields)
    item = make_item(
        campaign,
        external_id="green-man",
        input_data={"attributes": GREEN_MAN},
        input_key="green-man",
    )
    for name, text in OUTPUTS.items():
        make_output(item, make_system(campaign, name=name), text=text)
    return campaign
