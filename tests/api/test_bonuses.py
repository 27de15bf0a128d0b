"""Bonuses that follow the verdicts, paid through a fake of Prolific's bulk bonus on
127.0.0.1: the ledger pays each annotator once, through a lost answer, a retry and a
second click."""

import json
import re
from collections import Counter
from decimal import Decimal
from http.server import BaseHTTPRequestHandler

import pytest
from django.urls import reverse

from annotation.identity import set_excluded, set_prolific_check
from annotation.models import Annotator, Campaign, Judgment, ProlificCheck
from annotation.prolific import ProlificError
from api import bonuses
from api.models import BonusBatch, BonusPayment, BonusRule
from evalsite.datasheet import build_datasheet
from tests.factories import make_annotator, make_campaign, make_judged_hit, make_system_set
from tests.receivers import serving

TOKEN = "fake-prolific-token"


class FakeBonuses(BaseHTTPRequestHandler):
    """Prolific's bulk bonus: set up a batch, then pay it (once per batch id). `lose` names
    calls whose answer is lost after Prolific has acted on them (a timeout, as we see it)."""

    batches: dict[str, list] = {}
    paid_batches: set = set()
    paid: Counter = Counter()
    calls: list = []
    lose: set = set()

    def do_POST(self):
        if self.headers.get("Authorization") != f"Token {TOKEN}":
            return self._send(401, {"error": "bad token"})
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.calls.append(self.path)
        if self.path == "/api/v1/submissions/bonus-payments/":
            batch = f"bb-{len(self.batches) + 1}"
            rows = [line.split(",") for line in body["csv_bonuses"].splitlines()]
            self.batches[batch] = rows
            answer = {"id": batch, "study": body["study_id"]}
        elif self.path.startswith("/api/v1/bulk-bonus-payments/") and self.path.endswith("/pay/"):
            batch = self.path.split("/")[-3]
            if batch not in self.paid_batches:  # a batch is paid once, whatever the calls
                self.paid_batches.add(batch)
                for participant, _amount in self.batches[batch]:
                    self.paid[participant] += 1
            answer = {"id": batch, "status": "paid"}
        else:
            return self._send(404, {"error": "no such endpoint"})
        if "setup" in self.lose and "bonus-payments/" == self.path[-15:]:
            self.lose.discard("setup")
            self.close_connection = True
            return None
        if "pay" in self.lose and self.path.endswith("/pay/"):
            self.lose.discard("pay")
            self.close_connection = True  # paid, but the answer never comes back
            return None
        return self._send(200, answer)

    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def prolific(settings, monkeypatch):
    with serving(FakeBonuses) as server:
        settings.PROLIFIC_API_URL = f"http://127.0.0.1:{server.server_port}/api/v1/"
        monkeypatch.setenv("EVAL_SECRET_PROLIFIC", TOKEN)
        FakeBonuses.batches, FakeBonuses.paid_batches = {}, set()
        FakeBonuses.paid, FakeBonuses.calls, FakeBonuses.lose = Counter(), [], set()
        yield FakeBonuses


def participant(campaign, pid: str, **fields) -> Annotator:
    """A Prolific annotator Prolific confirmed for study-1, bound to their submission."""
    study_data = {"study_id": "study-1", "session_id": f"s-{pid}"}
    defaults = {"prolific_check": ProlificCheck.CONFIRMED, "study_data": study_data}
    return make_annotator(campaign, external_id=pid, **{**defaults, **fields})


@pytest.fixture
def study(db):
    """Two careful Prolific annotators (2 and 1 counted HITs) and an excluded one, all
    confirmed by Prolific."""
    campaign = make_campaign(
        slug="paid", prolific_study_id="study-1", prolific_token_env="EVAL_SECRET_PROLIFIC"
    )
    _, _, items = make_system_set(campaign, systems=3, items=3)
    people = {pid: participant(campaign, pid) for pid in ("ada", "bob", "eve")}
    for pid, item in (("ada", items[0]), ("ada", items[1]), ("bob", items[2]), ("eve", items[0])):
        make_judged_hit(list(item.outputs.all()), [100, 50, 20], annotator=people[pid])
    set_excluded(people["eve"], True)
    BonusRule.objects.create(
        campaign=campaign, per_counted_hit=Decimal("0.50"), for_passing_checks=Decimal("1.00")
    )
    return campaign


def amounts(campaign) -> dict[str, Decimal]:
    rows = BonusPayment.objects.filter(campaign=campaign)
    return dict(rows.values_list("annotator__external_id", "amount"))


def test_bonuses_follow_the_verdicts(study):
    bonuses.propose(study)
    assert amounts(study) == {"ada": Decimal("2.00"), "bob": Decimal("1.50")}
    set_excluded(Annotator.objects.get(external_id="bob"), True)
    bonuses.propose(study)  # bob's work no longer counts: his proposal goes
    assert amounts(study) == {"ada": Decimal("2.00")}


def test_pay_sets_up_and_pays_one_batch_and_a_second_click_pays_nothing(study, prolific):
    payments = bonuses.propose(study)
    bonuses.approve(study, [p.pk for p in payments])
    batch = bonuses.pay(study)
    assert batch.state == BonusBatch.State.PAID and batch.prolific_id == "bb-1"
    assert batch.total == Decimal("3.50")
    assert prolific.batches["bb-1"] == [["ada", "2.00"], ["bob", "1.50"]]
    assert bonuses.pay(study) is None  # a double click: nothing approved is left
    assert prolific.paid == {"ada": 1, "bob": 1}
    states = set(BonusPayment.objects.values_list("state", flat=True))
    assert states == {BonusPayment.State.PAID}


def test_a_retry_after_a_lost_pay_answer_pays_each_annotator_once(study, prolific):
    bonuses.approve(study, [p.pk for p in bonuses.propose(study)])
    prolific.lose = {"pay"}
    with pytest.raises(ProlificError):
        bonuses.pay(study)
    batch = BonusBatch.objects.get()
    assert batch.state == BonusBatch.State.PAYING  # recorded before the call: maybe paid
    assert bonuses.pay(study) is None  # the payments are in that batch, in no other
    bonuses.resume(batch)
    batch.refresh_from_db()
    assert batch.state == BonusBatch.State.PAID
    assert prolific.paid == {"ada": 1, "bob": 1}
    assert list(prolific.batches) == ["bb-1"]  # set up once; paid again only under its id
    assert prolific.calls.count("/api/v1/bulk-bonus-payments/bb-1/pay/") == 2


def test_a_retry_after_a_lost_setup_answer_sets_up_again_and_pays_once(study, prolific):
    bonuses.approve(study, [p.pk for p in bonuses.propose(study)])
    prolific.lose = {"setup"}
    with pytest.raises(ProlificError):
        bonuses.pay(study)
    batch = BonusBatch.objects.get()
    assert batch.state == BonusBatch.State.SETTING_UP
    bonuses.resume(batch)
    batch.refresh_from_db()
    assert (batch.state, batch.prolific_id) == (BonusBatch.State.PAID, "bb-2")
    assert prolific.paid == {"ada": 1, "bob": 1}  # bb-1, set up but never paid, pays nobody


def test_review_page_shows_the_bonuses_and_pays_them(study, prolific, organiser):
    url = reverse("admin:api_bonusrule_review", args=[study.pk])
    page = organiser.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert "prolific:ada" in text and "2.00" in text and "1.50" in text
    assert "prolific:eve" not in text  # excluded: no bonus
    organiser.submit(page, {}, action=url)
    assert BonusBatch.objects.get().state == BonusBatch.State.PAID
    assert prolific.paid == {"ada": 1, "bob": 1}


def test_review_page_refuses_a_viewer(study, viewer):
    url = reverse("admin:api_bonusrule_review", args=[study.pk])
    assert viewer.get(url).status_code == 403
    assert not BonusPayment.objects.exists()


def test_datasheet_records_the_bonuses_paid(study, prolific):
    study.pay_per_hit = Decimal("0.30")
    study.save()
    bonuses.approve(study, [p.pk for p in bonuses.propose(study)])
    bonuses.pay(study)
    pay = build_datasheet(study)["sections"]["3"]["questions"]["3.2.2"]
    assert pay["facts"]["bonuses"]["paid"] == "3.50"
    assert pay["facts"]["bonuses"]["annotators_paid"] == 2
    assert "3.50 paid to 2 evaluators" in pay["answer"]


# Pay follows counting: only those Prolific confirmed for the study --------------------------


def unconfirmed(campaign) -> dict[str, Annotator]:
    """Annotators with counted-looking work whom Prolific never confirmed for study-1: one who
    arrived before the campaign named its study (counted then: never asked), load-test and
    invented ids of that time, one confirmed for the study the campaign named before, one
    awaiting Prolific and one it flagged."""
    outputs = list(campaign.items.first().outputs.all())
    people = {
        "early": participant(campaign, "early", prolific_check=ProlificCheck.NOT_ASKED),
        "load-test-1": make_annotator(campaign, external_id="load-test-1", study_data={}),
        "invented": make_annotator(
            campaign, external_id="invented", study_data={"study_id": "study-1"}
        ),
        "old-study": participant(campaign, "old-study", study_data={"study_id": "study-0"}),
        "awaiting": participant(campaign, "awaiting", prolific_check=ProlificCheck.AWAITING),
        "flagged": participant(campaign, "flagged", prolific_check=ProlificCheck.NOT_IN_STUDY),
    }
    for annotator in people.values():
        make_judged_hit(outputs, [100, 50, 20], annotator=annotator)
    return people


def test_a_second_round_pays_nobody_prolific_did_not_confirm_for_the_study(study, prolific):
    bonuses.approve(study, [p.pk for p in bonuses.propose(study)])
    bonuses.pay(study)
    assert prolific.paid == {"ada": 1, "bob": 1}
    unconfirmed(study)  # arrived or found since
    payments = bonuses.propose(study)
    assert {p.annotator.external_id for p in payments} == {"ada", "bob"}
    assert bonuses.approve(study, [p.pk for p in payments]) == 0  # ada's and bob's are paid
    assert bonuses.pay(study) is None
    assert prolific.paid == {"ada": 1, "bob": 1}
    assert list(prolific.batches) == ["bb-1"]
    assert BonusPayment.objects.count() == 2


def test_ledger_refuses_bonuses_of_annotators_prolific_did_not_confirm(study, prolific):
    """Payments written into the ledger for them (by hand, or proposed before a change)
    are not approved, and an approved one is not paid: it goes back to proposed."""
    people = unconfirmed(study)
    written = [
        BonusPayment.objects.create(campaign=study, annotator=a, amount=Decimal("9.99"))
        for a in people.values()
    ]
    assert bonuses.approve(study, [p.pk for p in written]) == 0
    BonusPayment.objects.filter(pk__in=[p.pk for p in written]).update(state="approved")
    ada = BonusPayment.objects.create(
        campaign=study, annotator=Annotator.objects.get(external_id="ada"), amount=Decimal(2)
    )
    assert bonuses.approve(study, [ada.pk]) == 1
    batch = bonuses.pay(study)
    assert prolific.batches[batch.prolific_id] == [["ada", "2.00"]]
    assert prolific.paid == {"ada": 1}
    states = dict(BonusPayment.objects.values_list("annotator__external_id", "state"))
    assert states == {"ada": "paid", **{pid: "proposed" for pid in people}}
    assert bonuses.pay(study) is None  # nothing approved is left
    # The next proposal drops what is not due.
    assert {p.annotator.external_id for p in bonuses.propose(study)} == {"ada", "bob"}


def test_an_approved_bonus_is_not_paid_once_prolific_flags_its_annotator(study, prolific):
    bonuses.approve(study, [p.pk for p in bonuses.propose(study)])
    set_prolific_check(Annotator.objects.get(external_id="bob"), ProlificCheck.NOT_IN_STUDY)
    bonuses.pay(study)
    assert prolific.paid == {"ada": 1}
    assert BonusPayment.objects.get(annotator__external_id="bob").state == "proposed"


def page_text(response) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def test_an_annotator_paid_a_bonus_cannot_be_deleted_and_an_unpaid_proposal_goes(
    study, prolific, organiser
):
    """The ledger is the record of money sent to people: deleting an annotator took their
    paid bonus row with it, silently. Now the admin lists the bonus as protected and deletes
    nothing; an annotator whose bonus was only proposed goes, with the proposal."""
    bonuses.approve(
        study, [p.pk for p in bonuses.propose(study) if p.annotator.external_id == "ada"]
    )
    bonuses.pay(study)  # ada's bonus is paid; bob's stays proposed
    ada = Annotator.objects.get(external_id="ada")
    judgments = Judgment.objects.count()
    url = reverse("admin:annotation_annotator_delete", args=[ada.pk])
    page = organiser.get(url)
    assert page.status_code == 200
    assert "would require deleting the following protected related objects" in page_text(page)
    assert "Bonus payment: 2.00 to prolific:ada (paid)" in page_text(page)
    refused = organiser.send("POST", url, {"post": "yes"})
    assert refused.status_code == 200  # the same page again, nothing deleted
    assert Annotator.objects.filter(pk=ada.pk).exists() and Judgment.objects.count() == judgments
    assert amounts(study) == {"ada": Decimal("2.00"), "bob": Decimal("1.50")}

    bob = Annotator.objects.get(external_id="bob")
    url = reverse("admin:annotation_annotator_delete", args=[bob.pk])
    page = organiser.get(url)
    assert "3 judgments" in page_text(page) and "1 bonus payment" in page_text(page)
    assert "protected" not in page_text(page)
    assert organiser.submit(page, {"post": "yes"}, action=url).status_code == 302
    assert not Annotator.objects.filter(pk=bob.pk).exists()
    assert amounts(study) == {"ada": Decimal("2.00")}
    assert Judgment.objects.count() == judgments - 3  # bob's one HIT of three outputs


def test_a_campaign_that_paid_bonuses_cannot_be_deleted_and_the_page_says_why(
    study, prolific, organiser
):
    """Deleting a campaign whose bonuses were paid ended in a server error (the batch's
    payments refused it after the confirmation page had offered it). The page lists the
    paid bonuses as protected and deletes nothing; a campaign with proposals only goes."""
    bonuses.approve(study, [p.pk for p in bonuses.propose(study)])
    bonuses.pay(study)
    url = reverse("admin:annotation_campaign_delete", args=[study.pk])
    page = organiser.get(url)
    text = page_text(page)
    assert "would require deleting the following protected related objects" in text
    assert "Bonus payment: 2.00 to prolific:ada (paid)" in text
    assert "Bonus payment: 1.50 to prolific:bob (paid)" in text
    assert organiser.send("POST", url, {"post": "yes"}).status_code == 200
    assert Campaign.objects.filter(pk=study.pk).exists()
    assert BonusBatch.objects.count() == 1 and BonusPayment.objects.count() == 2

    proposed_only = make_campaign(slug="proposed")
    other = participant(proposed_only, "cy")
    BonusPayment.objects.create(campaign=proposed_only, annotator=other, amount=Decimal("1.00"))
    url = reverse("admin:annotation_campaign_delete", args=[proposed_only.pk])
    page = organiser.get(url)
    assert "protected" not in page_text(page)
    assert organiser.submit(page, {"post": "yes"}, action=url).status_code == 302
    assert not Campaign.objects.filter(pk=proposed_only.pk).exists()
    assert BonusPayment.objects.count() == 2  # the paid ones of the other campaign
