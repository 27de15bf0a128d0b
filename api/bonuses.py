"""Bonuses that follow quality control, paid through Prolific's bulk bonus with a ledger.

Prolific's bulk bonus is two calls: set up (POST submissions/bonus-payments/ with the study
and a CSV of participant,amount; it answers the batch's id) and pay (POST
bulk-bonus-payments/<id>/pay/). Set up alone pays nobody; pay is what must never happen
twice. So:

- each annotator has at most one BonusPayment per campaign, ever (a constraint), and a
  payment taken into a batch never goes into another: a second click, or a retry, finds
  nothing left to pay;
- a batch's state is written before each call and after it: SETTING_UP (a retry sets up
  again: an unpaid set-up costs nothing), SET_UP with Prolific's id, PAYING before the pay
  call, PAID after its answer. A pay call whose answer was lost (a timeout, a reset) leaves
  the batch PAYING: a retry pays that same batch id again, never a new one.

Pay follows the rule of counting: a bonus goes only to an annotator Prolific confirmed for
the campaign's study (annotation.prolific.confirmed_for_study) whose work counts and passes
the checks. The ledger holds to it at each step: a proposal is made only for them, and an
approval or a batch takes only those who still are (`payable`); the rest go back to
proposed, which the next proposal drops if they are not due.
"""

from collections.abc import Iterable
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Sum

from annotation.identity import passes_checks
from annotation.models import Annotator, Assignment, Campaign
from annotation.prolific import ProlificError, call, confirmed_for_study, token_for

from .models import BonusBatch, BonusPayment, BonusRule


def payable(campaign: Campaign) -> dict[int, int]:
    """The annotators a bonus may go to now, with their counted HITs: Prolific confirmed
    them for the campaign's study, their work counts (counted HITs; not excluded) and passes
    the checks."""
    counted = dict(
        Assignment.objects.counted()
        .filter(annotator__in=confirmed_for_study(campaign))
        .values("annotator")
        .annotate(n=Count("id"))
        .values_list("annotator", "n")
    )
    passing = (a for a in Annotator.objects.filter(pk__in=counted) if passes_checks(a))
    return {annotator.pk: counted[annotator.pk] for annotator in passing}


def propose(campaign: Campaign) -> list[BonusPayment]:
    """Bring the proposed bonuses up to date with the verdicts: per the campaign's rule, for
    each payable annotator. Bonuses approved or beyond are left as they are; the campaign's
    bonuses are returned."""
    rule = BonusRule.objects.get(campaign=campaign)
    due = {}
    for annotator_id, hits in payable(campaign).items():
        amount = rule.per_counted_hit * hits + rule.for_passing_checks
        if amount > 0:
            due[annotator_id] = (hits, amount)
    with transaction.atomic():
        ledger = BonusPayment.objects.select_for_update().filter(campaign=campaign)
        existing = {p.annotator_id: p for p in ledger.order_by("pk")}
        proposed = BonusPayment.State.PROPOSED
        for annotator_id, (hits, amount) in due.items():
            payment = existing.get(annotator_id)
            if payment is None:
                BonusPayment.objects.create(
                    campaign=campaign,
                    annotator_id=annotator_id,
                    counted_hits=hits,
                    passed_checks=True,
                    amount=amount,
                )
            elif payment.state == proposed:
                BonusPayment.objects.filter(pk=payment.pk).update(counted_hits=hits, amount=amount)
        gone = [pk for pk, p in existing.items() if p.state == proposed and pk not in due]
        ledger.filter(annotator_id__in=gone, state=proposed).delete()
    return list(BonusPayment.objects.filter(campaign=campaign).select_related("annotator"))


def approve(campaign: Campaign, payment_ids: Iterable[int]) -> int:
    """Approve the proposed bonuses named of annotators who are payable now; the number."""
    proposed = BonusPayment.objects.filter(
        campaign=campaign,
        pk__in=list(payment_ids),
        state=BonusPayment.State.PROPOSED,
        annotator__in=list(payable(campaign)),
    )
    return proposed.update(state=BonusPayment.State.APPROVED)


def pay(campaign: Campaign, user=None) -> BonusBatch | None:
    """Take every approved bonus of an annotator still payable into a new batch and pay it;
    None if none is (a second click). Approved bonuses of annotators no longer payable go
    back to proposed, unpaid. ProlificError if Prolific could not be asked; the batch's
    state says how far it got, and `resume` takes it from there."""
    if not campaign.prolific_study_id:
        raise ProlificError("the campaign names no Prolific study")
    token_for(campaign)  # before anything is taken: a missing token changes nothing
    still_payable = list(payable(campaign))
    with transaction.atomic():
        approved = BonusPayment.objects.select_for_update().filter(
            campaign=campaign, state=BonusPayment.State.APPROVED
        )
        refused = approved.exclude(annotator__in=still_payable)
        refused.update(state=BonusPayment.State.PROPOSED)
        pks = list(approved.order_by("pk").values_list("pk", flat=True))
        if not pks:
            return None
        batch = BonusBatch.objects.create(campaign=campaign, created_by=user)
        taken = BonusPayment.objects.filter(pk__in=pks, state=BonusPayment.State.APPROVED)
        taken.update(state=BonusPayment.State.IN_BATCH, batch=batch)
        total = sum(BonusPayment.objects.filter(batch=batch).values_list("amount", flat=True))
        BonusBatch.objects.filter(pk=batch.pk).update(total=total)
    return resume(batch)


def resume(batch: BonusBatch) -> BonusBatch:
    """Take the batch on from its recorded state (a retry, after a failure or a timeout)."""
    batch.refresh_from_db()
    token = token_for(batch.campaign)
    if batch.state == BonusBatch.State.SETTING_UP:
        set_up(batch, token)
    if batch.state in (BonusBatch.State.SET_UP, BonusBatch.State.PAYING):
        pay_batch(batch, token)
    return batch


def set_up(batch: BonusBatch, token: str) -> None:
    rows = batch.payments.select_related("annotator").order_by("pk")
    csv = "\n".join(f"{p.annotator.external_id},{p.amount:.2f}" for p in rows)
    body = {"study_id": batch.campaign.prolific_study_id, "csv_bonuses": csv}
    try:
        answer = call(token, "POST", "submissions/bonus-payments/", body)
    except ProlificError as error:
        record(batch, error=str(error))  # still SETTING_UP: set up again on a retry
        raise
    if not answer.get("id"):
        record(batch, error=f"Prolific's answer holds no batch id: {str(answer)[:300]}")
        raise ProlificError(batch.error)
    record(batch, state=BonusBatch.State.SET_UP, prolific_id=str(answer["id"])[:100], error="")


def pay_batch(batch: BonusBatch, token: str) -> None:
    # Written before the call: from here on the batch may be paid, so it is only ever
    # paid again under this id.
    record(batch, state=BonusBatch.State.PAYING)
    try:
        call(token, "POST", f"bulk-bonus-payments/{batch.prolific_id}/pay/")
    except ProlificError as error:
        record(batch, error=str(error))
        raise
    with transaction.atomic():
        record(batch, state=BonusBatch.State.PAID, error="")
        batch.payments.update(state=BonusPayment.State.PAID)


def record(batch: BonusBatch, **fields) -> None:
    BonusBatch.objects.filter(pk=batch.pk).update(**fields)
    for name, value in fields.items():
        setattr(batch, name, value)


def summary(payments: list[BonusPayment]) -> dict[str, Decimal]:
    """The total of the bonuses in each state."""
    totals: dict[str, Decimal] = {}
    for payment in payments:
        totals[payment.state] = totals.get(payment.state, Decimal(0)) + payment.amount
    return totals


def bonus_facts(campaign: Campaign) -> dict | None:
    """For the datasheet: the campaign's bonus rule and what it paid; None without a rule."""
    rule = BonusRule.objects.filter(campaign=campaign).first()
    if rule is None:
        return None
    paid = BonusPayment.objects.filter(campaign=campaign, state=BonusPayment.State.PAID)
    totals = paid.aggregate(annotators=Count("pk"), total=Sum("amount"))
    return {
        "per_counted_hit": str(rule.per_counted_hit),
        "for_passing_checks": str(rule.for_passing_checks),
        "annotators_paid": totals["annotators"],
        "paid": f"{totals['total'] or 0:.2f}",
    }
