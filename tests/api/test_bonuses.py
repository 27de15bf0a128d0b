"""Bonuses that follow the verdicts, paid through a fake of Prolific's bulk bonus on
127.0.0.1: the ledger pays each annotator once, through a lost answer, a retry and a
second click."""

import json
import threading
from collections import Counter
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from annotation.identity import set_excluded
from annotation.models import Annotator
from annotation.prolific import ProlificError
from api import bonuses
from api.models import BonusBatch, BonusPayment, BonusRule
from evalsite.datasheet import build_datasheet
from tests.factories import make_annotator, make_campaign, make_judged_hit, make_system_set

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
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeBonuses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.PROLIFIC_API_URL = f"http://127.0.0.1:{server.server_port}/api/v1/"
    monkeypatch.setenv("EVAL_SECRET_PROLIFIC", TOKEN)
    FakeBonuses.batches, FakeBonuses.paid_batches = {}, set()
    FakeBonuses.paid, FakeBonuses.calls, FakeBonuses.lose = Counter(), [], set()
    yield FakeBonuses
    server.shutdown()


@pytest.fixture
def study(db):
    """Two careful Prolific annotators (2 and 1 counted HITs) and an excluded one."""
    campaign = make_campaign(
        slug="paid", prolific_study_id="study-1", prolific_token_env="EVAL_SECRET_PROLIFIC"
    )
    _, _, items = make_system_set(campaign, systems=3, items=3)
    people = {
        pid: make_annotator(campaign, external_id=pid, source=Annotator.Source.PROLIFIC)
        for pid in ("ada", "bob", "eve")
    }
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
