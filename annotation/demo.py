"""The demo campaign: a small E2E-style campaign from data the project ships."""

from pathlib import Path

from django.db import transaction

from .datafiles.importers import import_items, import_outputs
from .models import DEFAULT_QUESTIONS, NATURALNESS, Campaign, CampaignCriterion, System

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"
DEMO_SLUG = "demo"
DEMO_SYSTEMS = {
    "fluent": "Covers every attribute in fluent sentences.",
    "terse": "Names the venue and its type, nothing else.",
    "hallucinating": "Fluent, but adds facts that are not in the input.",
    "broken": "Disfluent: repeated and shuffled words.",
}
INSTRUCTIONS = """You will see short descriptions of restaurants, written by computer systems.
Give each description a score relative to the standard, which scores 100: a description you
find twice as good gets 200, one half as good gets 50. Any positive whole number is fine, and
equal descriptions may get equal scores."""


@transaction.atomic
def build_demo_campaign() -> Campaign:
    campaign = Campaign.objects.create(
        slug=DEMO_SLUG,
        name="Demo: restaurant descriptions (E2E style)",
        status=Campaign.Status.OPEN,
        description="A small sample campaign to try the platform with, built by manage.py demo.",
        standard_text="The Vaults is a pub near Café Adriatic with prices over £30.",
        standard_input_kind="mr",
        standard_input={
            "attributes": [
                ["name", "The Vaults"],
                ["eatType", "pub"],
                ["priceRange", "more than £30"],
                ["near", "Café Adriatic"],
            ]
        },
        instructions=INSTRUCTIONS,
        completion_code="DEMO2026",
        failed_completion_code="DEMOFAIL",
    )
    for name in DEFAULT_QUESTIONS:
        CampaignCriterion.objects.create(
            campaign=campaign, name=name, shows_input=name != NATURALNESS, is_open=True
        )
    with (DEMO_DATA / "items.csv").open("rb") as items_file:
        import_items(campaign, items_file, "items.csv")
    for name, description in DEMO_SYSTEMS.items():
        system = System.objects.create(campaign=campaign, name=name, description=description)
        with (DEMO_DATA / "outputs" / f"{name}.tsv").open("rb") as outputs_file:
            import_outputs(campaign, system, outputs_file, f"{name}.tsv")
    return campaign
