"""Small campaigns shaped like the E2E one, for the browser tests and the screenshots."""

import csv
from itertools import islice
from pathlib import Path

from annotation.models import Campaign
from nlgdata.inputs import parse_mr
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


def longest_e2e_item(e2e_data: Path, systems: int = 5) -> tuple[str, list[str], str, str]:
    """A real E2E test-set item as hard to lay out as they come: an MR of 8 attributes with
    the longest outputs of `systems` systems for it. Returns (MR, outputs, the standard's MR,
    the standard's sentence): the standard is the longest reference of another 8-attribute MR."""
    with (e2e_data / "testset_w_refs.csv").open(encoding="utf-8", newline="") as file:
        references = [(row["mr"], row["ref"]) for row in csv.DictReader(file)]
    widest = {mr for mr, _ in references if len(parse_mr(mr)) == 8}
    outputs: dict[str, dict[str, str]] = {mr: {} for mr in widest}
    for path in sorted((e2e_data / "outputs").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as file:
            for row in csv.reader(islice(file, 1, None), delimiter="\t"):
                if len(row) == 2 and row[0] in outputs:
                    outputs[row[0]][path.stem] = row[1]
    longest = {
        mr: sorted(set(texts.values()), key=len, reverse=True)[:systems]
        for mr, texts in outputs.items()
    }
    mr = max(sorted(longest), key=lambda m: sum(len(text) for text in longest[m]))
    standard_mr, standard = max(
        ((m, ref) for m, ref in references if m in widest and m != mr), key=lambda p: len(p[1])
    )
    return mr, longest[mr], standard_mr, standard


def e2e_campaign(e2e_data: Path, **overrides) -> Campaign:
    """One real E2E item (longest_e2e_item) with five systems' outputs; both criteria open."""
    mr, texts, standard_mr, standard = longest_e2e_item(e2e_data)
    fields = {
        "slug": "e2e-long",
        "name": "E2E, the longest item",
        "outputs_per_hit": len(texts),
        "min_seconds_per_hit": 0,
        "standard_text": standard,
        "standard_input": {"attributes": parse_mr(standard_mr)},
    }
    campaign = make_campaign(**{**fields, **overrides})
    item = make_item(
        campaign, external_id="e2e", input_data={"attributes": parse_mr(mr)}, input_key=mr
    )
    for n, text in enumerate(texts):
        make_output(item, make_system(campaign, name=f"system-{n}"), text=text)
    return campaign
