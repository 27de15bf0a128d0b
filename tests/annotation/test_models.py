import pytest

from annotation.models import Assignment, Judgment
from tests.factories import (
    make_annotator,
    make_assignment,
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
    used_and_left_out = Judgment.objects.for_criterion(campaign.criteria.get(criterion="quality"))
    assert sorted(used_and_left_out.submitted_per_system().values()) == [(1, 2), (1, 2)]
