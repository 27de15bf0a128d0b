"""Campaigns, the things annotators judge, and their judgments.

A HIT is one item and the outputs of k distinct systems for it, in the order shown; it is
done by one annotator through one assignment (an abandoned assignment expires and its HIT
goes back to the pool). Judgments are the scores of a submitted assignment.
"""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import MD5
from django.utils import timezone
from django.utils.text import slugify

from annotation import form_names
from jobs.claims import BackgroundJob, JobQuerySet
from nlgdata.composition import ACTIVE, ACTIVE_PER_PAIR, BALANCED
from nlgdata.inputs import KINDS

# The well-known criteria of RankME's E2E pages: a criterion by one of these names asks its
# question unless the organiser writes another. Any other name needs its own question.
QUALITY = "quality"
NATURALNESS = "naturalness"

DEFAULT_QUESTIONS: dict[str, str] = {
    QUALITY: (
        "How do you judge the overall quality of the utterance in terms of its grammatical "
        "correctness, fluency, adequacy and other important factors?"
    ),
    NATURALNESS: "Could the utterance have been produced by a native speaker?",
}


# Choices for the admin, made from the one list of kinds (nlgdata.inputs.KINDS). The stubs
# describe the enum functional API with plain values, not these (value, label) pairs.
InputKind = models.TextChoices(  # type: ignore[call-overload]
    "InputKind", [(name.upper(), (name, kind.label)) for name, kind in KINDS.items()]
)


def new_completion_code() -> str:
    return secrets.token_hex(4).upper()


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open to annotators"
        CLOSED = "closed", "Closed"

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    description = models.TextField(blank=True)
    outputs_per_hit = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(2), MaxValueValidator(10)]
    )
    standard_text = models.TextField(
        "standard utterance", blank=True, help_text="Shown first, with a fixed score of 100."
    )
    standard_input_kind = models.CharField(
        max_length=10, choices=InputKind.choices, default=InputKind.MR
    )
    standard_input = models.JSONField(default=dict, blank=True)
    instructions = models.TextField(blank=True)
    max_hits_per_annotator = models.PositiveIntegerField(default=20)
    # For the live monitor's progress, cost and finish estimates (0: not set).
    target_hits = models.PositiveIntegerField(
        default=0, help_text="HITs wanted per criterion (0: no target)."
    )
    pay_per_hit = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=0,
        help_text="What an annotator is paid per HIT, in the study's currency.",
    )
    min_seconds_per_hit = models.PositiveIntegerField(default=20)
    # Attention checks (annotation/attention.py): a degraded copy of one output in some HITs.
    attention_check_every = models.PositiveSmallIntegerField(
        "one HIT in this many carries an attention check",
        default=5,
        help_text="An annotator's 1st HIT, then every n-th, shows one extra sentence: a"
        " degraded copy of one of its outputs, never ranked (0: no attention checks).",
    )
    attention_p_threshold = models.FloatField(
        "attention check threshold (p)",
        default=0.10,
        validators=[MinValueValidator(0.001), MaxValueValidator(0.5)],
        help_text="An annotator passes when a one-sided Mann-Whitney test that they score"
        " originals above their degraded copies gives p at most this (Appraise uses 0.10);"
        " one who cannot reach it after enough checks is left out of rankings.",
    )
    assignment_timeout_minutes = models.PositiveIntegerField(default=30)
    # Prolific takes several completion codes per study, each with its own action. The codes
    # are public once one participant has seen them: where the campaign names its study and
    # token, set both to "manually review", and the review (prolific.py) decides who is paid.
    completion_code = models.CharField(
        max_length=40,
        default=new_completion_code,
        help_text="Given to annotators whose work passes the checks. Where the campaign names"
        " its Prolific study and token, set this code (and the failed one) to manual review on"
        " Prolific: the review approves only annotators with counted work who pass the checks.",
    )
    prolific_study_id = models.CharField(
        max_length=40, blank=True, help_text="The study on Prolific, to review its submissions."
    )
    prolific_token_env = models.CharField(
        max_length=100,
        blank=True,
        help_text="The environment variable that holds the Prolific API token (its name must"
        " start with the deployment's HOSTED_SECRET_ENV_PREFIX, EVAL_SECRET_ by default).",
    )
    # Mechanical Turk closed on 30 September 2026: its links are refused unless a campaign
    # takes them (an MTurk-compatible platform, or workers of a campaign from before).
    accepts_mturk = models.BooleanField(
        "accepts Mechanical Turk links",
        default=False,
        help_text="Whether the entry link takes Mechanical Turk's workerId, assignmentId and"
        " hitId. A worker id is bound to the assignment id it first came with.",
    )
    # When the sweep last asked Prolific which participants are in the study (prolific.py).
    prolific_polled_at = models.DateTimeField(null=True, blank=True, editable=False)
    failed_completion_code = models.CharField(
        max_length=40,
        default=new_completion_code,
        help_text="Given instead to annotators who were excluded, failed the attention or"
        " comprehension checks, or most of whose HITs were flagged (submitted faster than"
        " the minimum).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(outputs_per_hit__gte=2), name="campaign_outputs_per_hit_at_least_2"
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def asks_prolific(self) -> bool:
        """Whether the campaign names its Prolific study and API token, so Prolific can say
        which participants are in the study (prolific.py)."""
        return bool(self.prolific_study_id and self.prolific_token_env)


def criterion_label(name: str) -> str:
    """A criterion's name as pages show it: "Quality", "Data coverage"."""
    return name.replace("-", " ").replace("_", " ").capitalize()


# A criterion's name: short, lowercase, safe in a URL and a file name.
validate_criterion_name: RegexValidator = RegexValidator(
    r"^[a-z0-9_-]+\Z",
    "Use lowercase letters, digits, '-' and '_' only (e.g. quality, data-coverage).",
)


class CampaignCriterionQuerySet(models.QuerySet):
    def named(self, name: str) -> "CampaignCriterion":
        """The criterion called `name` among these (a campaign's `criteria`); an unknown
        name raises DoesNotExist with a message that lists the names there are."""
        try:
            return self.get(name=name)
        except self.model.DoesNotExist:
            names = ", ".join(self.order_by("name").values_list("name", flat=True))
            there = f"its criteria: {names}" if names else "it has none"
            raise self.model.DoesNotExist(f"no criterion {name!r} ({there})") from None

    def add_defaults(self, campaign: "Campaign") -> list["CampaignCriterion"]:
        """RankME's two criteria of E2E, for a campaign made without any: quality, shown
        with the input, and naturalness, without it (each with its default question)."""
        return [
            self.create(campaign=campaign, name=name, shows_input=name != NATURALNESS)
            for name in DEFAULT_QUESTIONS
        ]

    def record_pool_change(self, recount: bool = False) -> int:
        """Note that outputs, systems or the HIT size of these criteria changed, so the next
        hand-out works out again which items can be given out; with `recount`, that it
        counts the loads again too (after a bulk import or a deletion), and looks for
        expired assignments (an edit may have moved a timeout)."""
        reset = {"pool_synced_version": 0, "next_expiry_at": None} if recount else {}
        return self.update(pool_version=models.F("pool_version") + 1, **reset)

    def record_judgments_change(self, **also) -> int:
        """Note that the judgments these criteria count have changed, by more than new
        submitted judgments (a submission records itself: sql.judgments_change); call it
        inside the transaction of the change, so the change and its record commit together.
        `also`: more fields to set in the same statement."""
        return self.update(
            judgments_version=models.F("judgments_version") + 1,
            judgments_rewrites=models.F("judgments_rewrites") + 1,
            judgments_changed_at=timezone.now(),
            **also,
        )


def default_form() -> str:
    return form_names.DEFAULT


def validate_form_name(name: str) -> None:
    """A name of the registry's forms (a validator, not choices: a new form needs no
    migration)."""
    if name not in form_names.NAMES:
        raise ValidationError(form_names.unknown_form(name))


class Composition(models.TextChoices):
    """How the systems of a new HIT are chosen (nlgdata/composition.py)."""

    BALANCED = BALANCED, "Balanced: the least judged systems"
    ACTIVE = ACTIVE, "Active: the systems that more judgments can tell apart"


class CampaignCriterion(models.Model):
    """One criterion a campaign runs: each is its own annotator task with its own HITs.

    `judgments_version` counts the changes to what the criterion's judgments say (a HIT
    submitted, an annotator excluded or taken back, a flag cleared, ratings imported, a
    system switched on or off). It is written in the transaction of each change: whatever
    derives from the judgments compares it with the version it last saw, so no message
    has to reach anyone for the work to be found.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="criteria")
    name = models.CharField(
        "criterion",
        max_length=40,
        validators=[validate_criterion_name],
        help_text="A short name of the organiser's choosing, in the annotators' links and the"
        f" results (e.g. {QUALITY}, {NATURALNESS}, correctness, data-coverage).",
    )
    is_open = models.BooleanField(default=True)
    # How annotators judge it (annotation/judging/): its page, checks, files and views.
    form = models.CharField(
        "judgment form",
        max_length=20,
        default=default_form,
        validators=[validate_form_name],
        help_text="How annotators judge the outputs; chosen when the criterion is added.",
    )
    # What the form reads (JudgmentForm.clean_settings checks and completes it, through
    # annotation.judging.clean_criterion).
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="The judgment form's settings, as JSON (see the form's documentation).",
    )
    question = models.TextField(
        blank=True,
        help_text=f"Left empty: RankME's question, for {QUALITY} and {NATURALNESS} only.",
    )
    shows_input = models.BooleanField(
        default=True,
        help_text="Annotators see the input beside the sentences, with the coverage boxes"
        f" (as RankME's {QUALITY}); off: the sentences alone (as its {NATURALNESS}).",
    )
    # On by default, as the demo runs it: a new criterion screens out who misread the task.
    comprehension_check = models.BooleanField(
        default=True,
        help_text="Before their first HIT, annotators score a worked pair (a sentence and a"
        " degraded copy of it); those who put the copy above the sentence twice get no HITs"
        " and the failed completion code.",
    )
    follow_up_url = models.URLField(
        "optional next study",
        max_length=500,
        blank=True,
        help_text="Empty (the default): the completion page offers only the way back to"
        " Prolific with the code. Set: it also offers this address, after the code and"
        " marked optional, to annotators who passed, e.g. the Prolific study of the other"
        " criterion, so they can choose to take part in it as a study of its own.",
    )
    coverage_required = models.BooleanField(
        default=True,
        help_text="Quality only: every sentence must have at least one coverage box ticked"
        " (adds, misses, or reflects the input perfectly), as RankME's E2E pages asked; the"
        " instructions say so. Off: the boxes are optional.",
    )
    composition = models.CharField(
        max_length=10,
        choices=Composition.choices,
        default=Composition.BALANCED,
        help_text="How new HITs choose their systems; may be switched while the criterion runs."
        " Active shows the systems whose order is still in doubt more often: replaying E2E"
        " quality, it matched balanced HITs' agreement with about 80% of their HITs early on"
        " and saved none by the campaign's full size (docs/research-active-composition.md,"
        " 'Does it pay?').",
    )
    balanced_share = models.PositiveSmallIntegerField(
        "balanced HITs (%)",
        default=20,
        validators=[MaxValueValidator(100)],
        help_text="Under active composition, the share of HITs still composed as balanced"
        " ones, so every system keeps meeting every other; once the criterion has had"
        f" {ACTIVE_PER_PAIR} comparisons per pair of systems, every HIT is balanced.",
    )
    close_when_stable_for = models.PositiveIntegerField(
        "close when stable for (HITs)",
        default=0,
        help_text="Close the criterion to new HITs once the E2E protocol's clusters have"
        " stayed the same over this many counted HITs (each ranking run compared with the one"
        " before); 0: never. Ticking 'is open' again reopens it until the clusters change and"
        " settle again.",
    )
    # Counted HITs of the first E2E ranking run whose clusters the latest one still has
    # (ranking/service.py), and the value it had when the criterion was closed as stable, so
    # that an organiser who reopens it is not overruled by the next run.
    clusters_stable_since = models.PositiveIntegerField(default=0, editable=False)
    closed_as_stable_since = models.PositiveIntegerField(null=True, blank=True, editable=False)
    # The online estimate, system id -> [mu, sigma, comparisons] (annotation/composition.py):
    # kept on the row the hand-out and the submission lock and read anyway, so reading it
    # costs no query, and a submission writes it in its judgments-version update.
    estimates = models.JSONField(default=dict, blank=True, editable=False)
    judgments_version = models.PositiveBigIntegerField(default=0, editable=False)
    # Of those changes, the ones that did more than add a submitted HIT's judgments (an
    # exclusion, a flag cleared, a deletion, an import, a system switched): all but
    # submissions (sql.judgments_change) count here. What derives from the judgments by
    # adding up the new ones (ranking/incremental.py) starts again when it moves. A
    # submission's judgments are written under the criterion's row lock (taken before
    # their insert), so their ids grow in the order they commit.
    judgments_rewrites = models.PositiveBigIntegerField(default=0, editable=False)
    judgments_changed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # What the hand-out keeps of the pool (assignment.py): `pool_version` is bumped when
    # outputs, systems or the HIT size change; the hand-out brings its item and system load
    # rows and `hit_size` up to date when `pool_synced_version` lags behind.
    pool_version = models.PositiveBigIntegerField(default=1, editable=False)
    pool_synced_version = models.PositiveBigIntegerField(default=0, editable=False)
    hit_size = models.PositiveSmallIntegerField(default=0, editable=False)
    # No open assignment of the criterion expires before this (a lower bound; null: none is
    # open). A hand-out looks for expired assignments only once it has passed, so the check
    # costs no query while nothing can have expired.
    next_expiry_at = models.DateTimeField(null=True, blank=True, editable=False)
    # When the attention-check sweep last read the criterion's submissions (attention.py).
    attention_checked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = CampaignCriterionQuerySet.as_manager()

    # Not a column: set while a form checks several criteria that are saved together (the
    # campaign page's criteria), name -> judgment form of the campaign's criteria as that
    # save leaves them, so a criterion's settings may name one added in the same save (DA's
    # `also_asks`). None: the database's criteria are the campaign's.
    criteria_after_save: dict[str, str] | None = None

    class Meta:
        ordering = ["campaign", "name"]
        verbose_name = "criterion"
        verbose_name_plural = "criteria"
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="criterion_once")]

    def __str__(self) -> str:
        return f"{self.campaign.slug}/{self.name}"

    def clean(self) -> None:
        """A question where the name has no default one, and settings that are an object (a
        ValidationError names the field). The criterion's form checks and completes the
        settings: annotation.judging.clean_criterion runs this, then that."""
        super().clean()
        if not self.question.strip() and self.name not in DEFAULT_QUESTIONS:
            raise ValidationError(
                {
                    "question": f"Write the question annotators answer for {self.name!r}: only"
                    f" {QUALITY} and {NATURALNESS} have a default one."
                }
            )
        if self.form not in form_names.NAMES:
            return  # the field's validator says so
        if not isinstance(self.settings, dict):
            raise ValidationError({"settings": "Give the settings as a JSON object."})

    @property
    def label(self) -> str:
        return criterion_label(self.name)

    @property
    def question_text(self) -> str:
        return self.question or DEFAULT_QUESTIONS.get(self.name, "")


class Item(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    input_kind = models.CharField(max_length=10, choices=InputKind.choices)
    input_data = models.JSONField()
    # A canonical text of the input, so outputs files can be matched to items by input.
    input_key = models.TextField()
    references = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["campaign", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "external_id"], name="item_id_once"),
            # On a digest of the key: an index entry holding the key itself cannot take a
            # long document (PostgreSQL refuses index rows over 8 kB).
            models.UniqueConstraint(
                models.F("campaign"), MD5("input_key"), name="item_input_digest_once"
            ),
        ]

    def __str__(self) -> str:
        return self.external_id


def validate_system_name(name: str) -> None:
    """A system's name as its paper and data files give it (`Amazon_AI_(Shanghai)`,
    `WebNLG-2020-reference`): any printable text, without spaces around it."""
    if not name.strip():
        raise ValidationError("A system needs a name.")
    if name != name.strip():
        raise ValidationError("No spaces at the start or end of a system's name.")
    if not name.isprintable():
        raise ValidationError("No control characters (tabs, line breaks) in a system's name.")


def free_system_key(name: str, taken: set[str]) -> str:
    """A key for a system called `name` that is not among `taken`: its slug, then -2, -3..."""
    base = slugify(name)[:90] or "system"
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base}-{n}"
    return key


class System(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(
        max_length=200,
        validators=[validate_system_name],
        help_text="As data files and papers name it (e.g. Amazon_AI_(Shanghai)).",
    )
    # Where a name does not fit (an address, a file name, an HTML id): made from the name.
    key = models.SlugField(
        max_length=100,
        blank=True,
        help_text="Letters, digits, '-' and '_', for addresses and file names; left empty:"
        " made from the name.",
    )
    label = models.CharField(max_length=200, blank=True)
    architecture = models.CharField(max_length=100, blank=True)
    description = models.TextField(blank=True)
    is_active = models.BooleanField(default=True, help_text="Inactive systems get no new HITs.")

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="system_name_once"),
            models.UniqueConstraint(fields=["campaign", "key"], name="system_key_once"),
        ]

    def __str__(self) -> str:
        return self.label or self.name

    def save(self, *args, **kwargs):
        if not self.key:
            others = System.objects.filter(campaign_id=self.campaign_id).exclude(pk=self.pk)
            self.key = free_system_key(self.name, set(others.values_list("key", flat=True)))
        super().save(*args, **kwargs)


class OutputQuerySet(models.QuerySet):
    def empty(self):
        """Outputs without text: the system produced none for the item (kept, shown to
        annotators as such, rated and ranked like any other)."""
        return self.filter(text="")


class Output(models.Model):
    class Origin(models.TextChoices):
        IMPORTED = "imported", "Imported"
        GENERATED = "generated", "Generated"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="outputs")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="outputs")
    text = models.TextField()
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.IMPORTED)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OutputQuerySet.as_manager()

    class Meta:
        ordering = ["item", "system"]
        constraints = [
            models.UniqueConstraint(fields=["item", "system"], name="output_once_per_system"),
        ]

    def __str__(self) -> str:
        return f"{self.system.name}: {self.text[:60]}"


class ProlificCheck(models.TextChoices):
    """Whether Prolific vouches for a Prolific annotator (prolific.py). Only campaigns that
    name their study and API token can ask, so elsewhere it stays NOT_ASKED."""

    NOT_ASKED = "", "Not asked"
    AWAITING = "awaiting", "Awaiting Prolific's confirmation"
    CONFIRMED = "confirmed", "Confirmed: a submission in the study"
    NOT_IN_STUDY = "not_in_study", "Flagged: no submission in the study from this session"


# The annotators whose work can count: Prolific has confirmed them, or was never asked.
COUNTED_CHECKS = (ProlificCheck.NOT_ASKED, ProlificCheck.CONFIRMED)


class Annotator(models.Model):
    class Source(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"
        INVITED = "invited", "Invited"
        CROWDFLOWER = "crowdflower", "CrowdFlower (imported)"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="annotators")
    source = models.CharField(max_length=20, choices=Source.choices)
    external_id = models.CharField(max_length=200)
    name = models.CharField(max_length=200, blank=True)
    # The private link of an invited annotator, or the cookie that recognises a crowd worker.
    token = models.CharField(max_length=64, unique=True, default=secrets.token_urlsafe)
    is_excluded = models.BooleanField(
        default=False, help_text="Excluded annotators' judgments are left out of rankings."
    )
    # What the entry link said on the first visit (Prolific: study and session id); a later
    # entry never changes it, and a Prolific entry must bring the same session id.
    study_data = models.JSONField(default=dict, blank=True)
    prolific_check = models.CharField(
        max_length=12,
        choices=ProlificCheck.choices,
        default=ProlificCheck.NOT_ASKED,
        blank=True,
        editable=False,
        help_text="Only confirmed annotators count where the campaign can ask Prolific.",
    )
    # The attention checks' verdict (annotation/attention.py), kept up to date on submission.
    attention_checks = models.PositiveSmallIntegerField(default=0, editable=False)
    attention_p = models.FloatField(null=True, blank=True, editable=False)
    # When they failed the checks and were left out of rankings for it (an organiser may
    # take them back in: the verdict stays, the exclusion is not made again).
    failed_attention_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "source", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "source", "external_id"], name="annotator_once"
            )
        ]
        indexes = [
            # The sweep's poll looks for annotators awaiting Prolific: few, or none.
            models.Index(
                fields=["campaign"],
                condition=Q(prolific_check=ProlificCheck.AWAITING),
                name="annotator_awaiting_prolific",
            )
        ]

    def __str__(self) -> str:
        return self.name or f"{self.source}:{self.external_id}"

    @property
    def counts(self) -> bool:
        """Whether their submitted, unflagged HITs count (the annotator's part of counted_q)."""
        return not self.is_excluded and self.prolific_check in COUNTED_CHECKS


class HitQuerySet(models.QuerySet):
    def for_criterion(self, criterion: CampaignCriterion):
        """The HITs of a campaign's criterion."""
        return self.filter(criterion=criterion)


class Hit(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="hits")
    criterion = models.ForeignKey(CampaignCriterion, on_delete=models.CASCADE, related_name="hits")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="hits")
    external_id = models.CharField(max_length=200, blank=True)
    # The policy that chose its systems; empty for imported HITs and those made before.
    composition = models.CharField(max_length=10, choices=Composition.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = HitQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        verbose_name = "HIT"
        indexes = [
            # The id a crowd platform gave the task: shared by the HITs of each worker who did
            # it and each criterion asked on it (one per assignment here), so not unique.
            # Importers look up the ids of a file to refuse a page imported before.
            models.Index(
                fields=["campaign", "external_id"],
                condition=~Q(external_id=""),
                name="hit_external_id",
            )
        ]

    def __str__(self) -> str:
        return f"HIT {self.pk} (criterion {self.criterion_id}, item {self.item_id})"


def original_q(to_slot: str = "") -> Q:
    """The rule for a slot that shows a system's output as it is, not an attention check's
    degraded copy. `to_slot` is the path from the model queried to the slot ("slot__"
    from a judgment)."""
    return Q(**{f"{to_slot}degraded_text": ""})


class HitOutputQuerySet(models.QuerySet):
    def originals(self):
        """The slots that show a system's output: not attention checks."""
        return self.filter(original_q())

    def attention_checks(self):
        return self.exclude(original_q())


class HitOutput(models.Model):
    """One output of a HIT, at the position the annotator sees it; or, as an attention
    check, a degraded copy of one of the HIT's outputs (`degraded_text`), whose judgment
    tests the annotator and never enters loads, rankings or agreement."""

    hit = models.ForeignKey(Hit, on_delete=models.CASCADE, related_name="slots")
    output = models.ForeignKey(Output, on_delete=models.CASCADE, related_name="hit_slots")
    position = models.PositiveSmallIntegerField()
    degraded_text = models.TextField(blank=True)

    objects = HitOutputQuerySet.as_manager()

    class Meta:
        ordering = ["hit", "position"]
        constraints = [
            models.UniqueConstraint(fields=["hit", "position"], name="hit_position_once"),
            models.UniqueConstraint(
                fields=["hit", "output"], condition=original_q(), name="hit_output_once"
            ),
            models.UniqueConstraint(
                fields=["hit"], condition=~original_q(), name="hit_attention_check_once"
            ),
        ]

    def __str__(self) -> str:
        check = " (attention check)" if self.is_attention_check else ""
        return f"HIT {self.hit_id} position {self.position}{check}"

    @property
    def is_attention_check(self) -> bool:
        return bool(self.degraded_text)

    @property
    def text(self) -> str:
        """What the annotator reads in this slot."""
        return self.degraded_text or self.output.text


def counted_q(to_assignment: str = "") -> Q:
    """The rule for what rankings count: a submitted assignment, not flagged, of an
    annotator whose work counts (annotator_counts_q). `to_assignment` is the path from the
    model queried to its assignment ("assignment__" from a judgment), so the rule joins
    rather than nests."""
    return (
        Q(**{f"{to_assignment}status": Assignment.Status.SUBMITTED})
        & unflagged_q(to_assignment)
        & annotator_counts_q(f"{to_assignment}annotator__")
    )


def unflagged_q(to_assignment: str = "") -> Q:
    """The rule for an assignment no check flagged (counted_q's part of it)."""
    return Q(**{f"{to_assignment}flag": Assignment.Flag.NONE})


def annotator_counts_q(to_annotator: str = "") -> Q:
    """The rule for an annotator whose work counts (Annotator.counts): not excluded, and
    vouched for by Prolific where the campaign can ask it."""
    return Q(
        **{
            f"{to_annotator}is_excluded": False,
            f"{to_annotator}prolific_check__in": COUNTED_CHECKS,
        }
    )


class AssignmentQuerySet(models.QuerySet):
    def active(self):
        return self.filter(status=Assignment.Status.ASSIGNED)

    def submitted(self):
        return self.filter(status=Assignment.Status.SUBMITTED)

    def for_criterion(self, criterion: CampaignCriterion):
        """The assignments of a campaign's criterion."""
        return self.filter(hit__criterion=criterion)

    def judging(self, criterion: CampaignCriterion, has_own_hits: bool):
        """The assignments whose judgments judge the criterion: those of its own HITs, and
        the pages of another criterion that ask it too (a DA page's further criteria).
        `has_own_hits`: what the criterion's form says of it (JudgmentForm.has_own_hits)."""
        own = self.filter(hit__criterion=criterion)
        if has_own_hits:
            # Read without the judgments: what the ranking worker asks at every change.
            return own
        asked = Judgment.objects.for_criterion(criterion).values("assignment_id")
        return self.filter(Q(hit__criterion=criterion) | Q(pk__in=asked))

    def judged_criteria(self) -> set[int]:
        """The ids of the criteria whose judgments these assignments hold: their HITs' own
        and the further ones their pages asked. A change to whether they count is a change
        of each of these criteria's judgments."""
        own = self.order_by().values_list("hit__criterion_id", flat=True).distinct()
        asked = Judgment.objects.filter(assignment__in=self.values("pk"))
        further = asked.order_by().values_list("criterion_id", flat=True).distinct()
        return set(own) | set(further)

    def counted(self):
        """Assignments whose judgments rankings use (see counted_q)."""
        return self.filter(counted_q())

    def flagged(self):
        return self.exclude(unflagged_q())

    def unflagged(self):
        return self.filter(unflagged_q())

    def imported(self):
        """Assignments made from imported ratings (ratings_import.py): their HITs were
        done elsewhere, and their times say how long they took there."""
        return self.filter(annotator__source=Annotator.Source.CROWDFLOWER)

    def done_here(self):
        """Assignments given out on the platform's own HIT pages: not imported."""
        return self.exclude(annotator__source=Annotator.Source.CROWDFLOWER)

    def live(self):
        """Assignments that count towards balance: open ones, and counted ones."""
        return self.filter(Q(status=Assignment.Status.ASSIGNED) | counted_q())


class Assignment(models.Model):
    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Expired"

    class Flag(models.TextChoices):
        NONE = "", "None"
        TOO_FAST = "too_fast", "Submitted faster than the minimum time"

    hit = models.ForeignKey(Hit, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASSIGNED)
    flag = models.CharField(max_length=20, choices=Flag.choices, blank=True, default="")
    started_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # The key the page sends with its submission: a retried or doubled POST finds it.
    submission_key = models.CharField(max_length=64, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            # A HIT is worked on by one annotator at a time and done once.
            models.UniqueConstraint(
                fields=["hit"], condition=~Q(status="expired"), name="hit_taken_once"
            ),
        ]
        indexes = [
            models.Index(fields=["annotator", "status"]),
            # Expiry looks at open assignments only: few, whatever the campaign's size.
            models.Index(fields=["status", "expires_at"]),
            # The live monitor reads the last day's submissions.
            models.Index(fields=["status", "submitted_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.hit}"

    @property
    def seconds_taken(self) -> float | None:
        if not self.submitted_at:
            return None
        return (self.submitted_at - self.started_at).total_seconds()


class Screening(models.Model):
    """An annotator's comprehension check in one criterion: attempts made, and whether one
    passed. Two failed attempts screen them out of the criterion."""

    MAX_ATTEMPTS = 2

    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="screenings")
    criterion = models.ForeignKey(CampaignCriterion, on_delete=models.CASCADE, related_name="+")
    attempts = models.PositiveSmallIntegerField(default=0)
    passed = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "criterion"], name="screening_once")
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in {self.criterion}: {self.attempts} attempts"

    @property
    def screened_out(self) -> bool:
        return not self.passed and self.attempts >= self.MAX_ATTEMPTS


class ItemLoad(models.Model):
    """One item's live assignments in one criterion (open, or submitted and counted), kept
    up to date in the transaction of every change, so that a hand-out reads a few rows
    through an index instead of counting the campaign's assignments."""

    criterion = models.ForeignKey(CampaignCriterion, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    live = models.IntegerField(default=0)
    # HITs of the item whose every assignment expired: given out again before new ones.
    free = models.IntegerField(default=0)
    # It has outputs from `hit_size` active systems.
    eligible = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["criterion", "item"], name="item_load_once")]
        indexes = [models.Index(fields=["criterion", "eligible", "live"])]

    def __str__(self) -> str:
        return f"item {self.item_id} in {self.criterion_id}: {self.live} live"


class SystemLoad(models.Model):
    """One system's live judgments (or open slots) in one criterion, kept like ItemLoad."""

    criterion = models.ForeignKey(CampaignCriterion, on_delete=models.CASCADE, related_name="+")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    live = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["criterion", "system"], name="system_load_once")
        ]

    def __str__(self) -> str:
        return f"system {self.system_id} in {self.criterion_id}: {self.live} live"


class ItemSystemLoad(models.Model):
    """One system's live slots on one item in one criterion, kept like ItemLoad: the
    hand-out prefers, among equally loaded systems, those least often shown with the item."""

    criterion = models.ForeignKey(CampaignCriterion, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    live = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["criterion", "item", "system"], name="item_system_load_once"
            )
        ]

    def __str__(self) -> str:
        where = f"item {self.item_id} in {self.criterion_id}"
        return f"system {self.system_id} on {where}: {self.live} live"


class JudgmentQuerySet(models.QuerySet):
    def counted(self):
        """Judgments that rankings use (see counted_q), of outputs, not attention checks."""
        return self.filter(counted_q("assignment__"), original_q("slot__"))

    def of_originals(self):
        """Judgments of outputs: attention checks left out."""
        return self.filter(original_q("slot__"))

    def for_criterion(self, criterion: CampaignCriterion):
        """The judgments that judge the criterion (Judgment.criterion)."""
        return self.filter(criterion=criterion)

    def in_ranking_order(self):
        """Criterion by criterion (by name), HIT by HIT, position by position: the order in
        which rankings read judgments and number systems by first appearance, so a ranking
        depends on it. Rankings, the bundle and the judgment exports all read this one."""
        return self.order_by(
            "criterion__name", "assignment__hit_id", "assignment_id", "slot__position"
        )

    def submitted_per_system(self) -> dict[str, tuple[int, int]]:
        """System name -> (judgments rankings use, judgments left out: flagged or excluded)."""
        rows = (
            self.filter(original_q("slot__"), assignment__status=Assignment.Status.SUBMITTED)
            .values("slot__output__system__name")
            .annotate(
                used=models.Count("id", filter=counted_q("assignment__")),
                all=models.Count("id"),
            )
        )
        return {r["slot__output__system__name"]: (r["used"], r["all"] - r["used"]) for r in rows}


class Judgment(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    slot = models.ForeignKey(HitOutput, on_delete=models.CASCADE, related_name="judgments")
    # The criterion judged: the HIT's own, or a further one its page asks too (a direct
    # assessment page asks several: one judgment per slot and criterion, da.py).
    criterion = models.ForeignKey(CampaignCriterion, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()
    # Coverage check-boxes (quality only).
    adds_information = models.BooleanField(default=False)
    misses_information = models.BooleanField(default=False)
    reflects_perfectly = models.BooleanField(default=False)

    objects = JudgmentQuerySet.as_manager()

    class Meta:
        ordering = ["assignment", "slot__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "slot", "criterion"], name="judgment_once_per_criterion"
            ),
            # RankME's magnitudes are above 0 (its form checks that); DA's sliders start at 0.
            models.CheckConstraint(condition=Q(score__gte=0), name="judgment_score_not_negative"),
            models.CheckConstraint(
                condition=~Q(reflects_perfectly=True, adds_information=True)
                & ~Q(reflects_perfectly=True, misses_information=True),
                name="judgment_perfect_excludes_added_missing",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.score:g} for slot {self.slot_id}"


class ErrorSpan(models.Model):
    """An error an annotator marked in the output a judgment judges (error-span annotation,
    annotation/judging/esa.py): characters [start, end) of the text the slot showed, in
    Unicode code points, minor or major. The judgment's score is the 0-100 score given
    after marking."""

    class Severity(models.TextChoices):
        MINOR = "minor", "Minor"
        MAJOR = "major", "Major"

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="error_spans")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    severity = models.CharField(max_length=5, choices=Severity.choices)

    class Meta:
        ordering = ["judgment", "start", "end"]
        constraints = [
            models.UniqueConstraint(fields=["judgment", "start", "end"], name="error_span_once"),
            models.CheckConstraint(condition=Q(end__gt=F("start")), name="error_span_not_empty"),
            models.CheckConstraint(
                condition=Q(severity__in=["minor", "major"]), name="error_span_severity"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.severity} error [{self.start}, {self.end}) of judgment {self.judgment_id}"


class Justification(models.Model):
    """The reason an annotator gave, in their own words, for a page's choice (a pairwise
    or best-worst page's optional box, annotation/judging/pairwise.py): one per assignment
    that wrote one. Untrusted text, size-limited by the page and here."""

    MAX_CHARS = 1000

    assignment = models.OneToOneField(
        Assignment, on_delete=models.CASCADE, related_name="justification"
    )
    criterion = models.ForeignKey(CampaignCriterion, on_delete=models.CASCADE, related_name="+")
    text = models.TextField(max_length=MAX_CHARS)

    class Meta:
        ordering = ["assignment"]

    def __str__(self) -> str:
        return f"justification of assignment {self.assignment_id}"


class DataFile(models.Model):
    """A file imported into a campaign, remembered so the same file is not imported twice."""

    class Kind(models.TextChoices):
        ITEMS = "items", "Items"
        OUTPUTS = "outputs", "System outputs"
        RATINGS = "ratings", "Human ratings"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="data_files")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    system = models.ForeignKey(System, null=True, blank=True, on_delete=models.CASCADE)
    rows = models.PositiveIntegerField(default=0)
    summary = models.TextField(blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-imported_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "kind", "sha256"], name="data_file_imported_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.name}"


# Uploads imported by a worker (annotation/uploads.py, published_uploads.py): the admin's
# "Upload data" stores the files and a row, and a worker imports them, so no request waits on
# an import.


class UploadJob(BackgroundJob):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="uploads")
    kind = models.CharField(max_length=10, choices=DataFile.Kind.choices)
    # For a ratings file: the name of the criterion it rates (made if the campaign has none
    # by that name yet, so a name rather than the row); empty: from the file's columns.
    criterion = models.CharField(max_length=40, blank=True, validators=[validate_criterion_name])
    # For a ratings file: the judgment form whose layout it is in (datafiles/ratings_layouts);
    # empty: E2E's CrowdFlower CSV.
    form = models.CharField(max_length=20, blank=True)
    # For one outputs file: the system to import into (a new one by this name if the
    # campaign has none); empty: each file's system is its name without the extension.
    system_name = models.CharField(max_length=200, blank=True)
    # The uploaded files, in the order given: [{"name": as uploaded, "stored": file name in
    # the job's folder under UPLOAD_DIR}]. Removed once the job is done or failed.
    files = models.JSONField(default=list)
    summary = models.TextField(blank=True, help_text="what each file brought in")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    objects = JobQuerySet.as_manager()

    task_name = "annotation.import_upload"
    task_id_argument = "job_id"

    class Meta:
        ordering = ["-queued_at", "-id"]
        indexes = [models.Index(fields=["campaign", "status"])]

    def __str__(self) -> str:
        return f"{self.campaign.slug} upload {self.pk} ({self.status})"


class PublishedLoad(BackgroundJob):
    """A published dataset loaded by a worker (annotation/published_uploads.py), from a
    .zip archive the organiser uploaded or a folder under PUBLISHED_DATA_DIR."""

    dataset = models.CharField(max_length=20)  # a key of annotation.published.DATASETS
    campaign_slug = models.SlugField(help_text="the campaign it loads into, made if missing")
    # Set once loaded; a campaign deleted later leaves the record of its load.
    campaign = models.ForeignKey(
        Campaign,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="published_loads",
    )
    # One of the two: the uploaded archive's name as the browser gave it (stored under
    # UPLOAD_DIR/published/<id>/ until the job is over), or a folder's name under
    # PUBLISHED_DATA_DIR.
    archive = models.CharField(max_length=255, blank=True)
    folder = models.CharField(max_length=255, blank=True)
    summary = models.TextField(blank=True, help_text="what the load brought in")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    objects = JobQuerySet.as_manager()

    task_name = "annotation.load_published"
    task_id_argument = "job_id"

    class Meta:
        ordering = ["-queued_at", "-id"]

    def __str__(self) -> str:
        return f"{self.dataset} into {self.campaign_slug} ({self.status})"

    @property
    def source(self) -> str:
        return f"archive {self.archive}" if self.archive else f"server folder {self.folder}"
