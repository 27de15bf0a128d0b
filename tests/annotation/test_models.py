import pytest
from django.core.exceptions import ValidationError

from annotation.models import Assignment, CampaignCriterion, Judgment, System
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_judged_hit,
    make_system_set,
)

pytestmark = pytest.mark.django_db


def test_counted_assignments_and_judgments_follow_one_rule():
    """Rankings count a submitted, unflagged assignment of an annotator not excluded; the
    assignments and the judgments that say so agree."""
    campaign, _, items = make_system_set(systems=2, items=4)
    outputs = [list(item.outputs.all()) for item in items]
    counted = make_judged_hit(outputs[0], [1, 2])
    flagged = make_judged_hit(outputs[1], [1, 2])
    Assignment.objects.filter(pk=flagged.pk).update(flag=Assignment.Flag.TOO_FAST)
    make_judged_hit(outputs[2], [1, 2], annotator=make_annotator(campaign, is_excluded=True))
    make_assignment(make_hit(outputs[3]))  # open, not submitted

    assert list(Assignment.objects.counted()) == [counted]
    assert list(Assignment.objects.flagged()) == [flagged]
    assert set(Judgment.objects.counted()) == set(counted.judgments.all())
    used_and_left_out = Judgment.objects.for_criterion(campaign.criteria.get(name="quality"))
    assert sorted(used_and_left_out.submitted_per_system().values()) == [(1, 2), (1, 2)]


def test_criterion_of_a_free_name_needs_its_own_question():
    campaign = make_campaign()
    fluency = CampaignCriterion(campaign=campaign, name="data-coverage")
    with pytest.raises(ValidationError) as raised:
        fluency.full_clean()
    assert list(raised.value.message_dict) == ["question"]
    assert "Write the question" in raised.value.message_dict["question"][0]
    fluency.question = "Does the text say everything the table says?"
    fluency.full_clean()
    fluency.save()
    assert (fluency.label, fluency.question_text) == ("Data coverage", fluency.question)
    assert fluency.shows_input  # the default
    quality = campaign.criteria.get(name="quality")
    assert quality.question_text.startswith("How do you judge the overall quality")


@pytest.mark.parametrize("name", ["Quality", "data coverage", "qualité", "x" * 41, ""])
def test_criterion_name_is_short_lowercase_letters_digits_dashes(name):
    criterion = CampaignCriterion(campaign=make_campaign(), name=name, question="Good?")
    with pytest.raises(ValidationError) as raised:
        criterion.full_clean()
    assert "name" in raised.value.message_dict


def test_criteria_named_finds_one_or_lists_the_names_there_are():
    campaign = make_campaign()
    assert campaign.criteria.named("quality").name == "quality"
    with pytest.raises(CampaignCriterion.DoesNotExist, match=r"its criteria: naturalness, q"):
        campaign.criteria.named("fluency")
    campaign.criteria.all().delete()
    with pytest.raises(CampaignCriterion.DoesNotExist, match="it has none"):
        campaign.criteria.named("quality")


def test_judgments_of_a_criterion_are_those_that_judge_it():
    campaign, _, items = make_system_set(systems=2, items=2)
    quality = make_judged_hit(list(items[0].outputs.all()), [1, 2])
    make_judged_hit(list(items[1].outputs.all()), [3, 4], criterion="naturalness")
    criterion = campaign.criteria.get(name="quality")
    assert set(Judgment.objects.for_criterion(criterion)) == set(quality.judgments.all())
    assert all(j.criterion_id == criterion.pk for j in quality.judgments.all())


@pytest.mark.parametrize("name", ["", " tgen", "tgen ", "tg\ten", "tgen\n", "x" * 201])
def test_system_name_refuses_blank_spaced_control_or_long_names(name):
    system = System(campaign=make_campaign(), name=name)
    with pytest.raises(ValidationError) as raised:
        system.full_clean()
    assert "name" in raised.value.message_dict


def test_system_key_is_made_from_the_name_and_unique_in_the_campaign():
    campaign = make_campaign()
    names = ["Amazon_AI_(Shanghai)", "WebNLG-2020-reference", "Amazon AI Shanghai", "Ünïcode"]
    systems = [System.objects.create(campaign=campaign, name=name) for name in names]
    for system in systems:
        system.full_clean()
    assert [s.key for s in systems] == [
        "amazon_ai_shanghai",
        "webnlg-2020-reference",
        "amazon-ai-shanghai",
        "unicode",
    ]
    twin = System.objects.create(campaign=campaign, name="amazon_ai_shanghai")
    assert twin.key == "amazon_ai_shanghai-2"
    elsewhere = System.objects.create(campaign=make_campaign(), name="Amazon_AI_(Shanghai)")
    assert elsewhere.key == "amazon_ai_shanghai"
