"""The shapes of the API's requests and answers (django-ninja schemas: pydantic models that
also write the OpenAPI schema)."""

from datetime import datetime
from typing import Any, Literal

from ninja import Field, Schema
from pydantic import ConfigDict

from annotation.judging import DEFAULT as JUDGING_DEFAULT
from annotation.judging import NAMES as FORMS
from nlgdata.inputs import KINDS

# One request creates at most this many records; a client sends more in several requests.
MAX_RECORDS = 5000


class Error(Schema):
    detail: str
    record: int | None = Field(None, description="index of the bad record in the request")
    line: int | None = Field(None, description="line of the bad row in an uploaded file")
    field: str | None = None


class InvalidPart(Schema):
    type: str = Field(..., description="pydantic's name for the problem, e.g. missing")
    loc: list[str | int] = Field(..., description="where: body, query or path, then names")
    msg: str
    ctx: dict[str, Any] | None = None


class Invalid(Schema):
    """A request the endpoint's types refuse before it runs (django-ninja's answer)."""

    detail: list[InvalidPart]


class Input(Schema):
    """A request's body: a field it does not take (unknown, or read-only such as a
    campaign's `outputs_per_hit`) is refused with 400 naming it, never ignored."""

    model_config = ConfigDict(extra="forbid")


STANDARD_TEXT = Field(
    None,
    max_length=5000,
    description="the standard utterance RankME's pages show with its fixed score of 100; a"
    " campaign with a RankME criterion opens only with one",
)
STANDARD_INPUT_KIND = Field(
    None, max_length=10, description=f"the standard's input's kind: {', '.join(KINDS)}"
)
STANDARD_INPUT = Field(
    None, description="the standard's own input, as an item's (empty: shown without one)"
)


class CampaignIn(Input):
    slug: str = Field(..., max_length=50, pattern=r"^[-a-zA-Z0-9_]+$")
    name: str = Field(..., min_length=1, max_length=200)
    description: str = Field("", max_length=10_000)
    standard_text: str | None = STANDARD_TEXT
    standard_input_kind: str | None = STANDARD_INPUT_KIND
    standard_input: dict[str, Any] | None = STANDARD_INPUT


class CampaignPatch(Input):
    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=10_000)
    status: Literal["draft", "open", "closed"] | None = None
    standard_text: str | None = STANDARD_TEXT
    standard_input_kind: str | None = STANDARD_INPUT_KIND
    standard_input: dict[str, Any] | None = STANDARD_INPUT


class CriterionOut(Schema):
    name: str
    is_open: bool
    question: str
    shows_input: bool
    form: str = Field(..., description="the judgment form annotators judge it with")
    settings: dict[str, Any] = Field(..., description="the form's settings, completed")
    protocols: list[str] = Field(..., description="the ranking views that fit its form")
    judgments_version: int


class CampaignOut(Schema):
    slug: str
    name: str
    description: str
    status: str
    outputs_per_hit: int
    standard_text: str
    standard_input_kind: str
    standard_input: dict[str, Any]
    created_at: datetime
    criteria: list[CriterionOut] = []


class CriterionIn(Input):
    name: str = Field(
        ...,
        description="the criterion's name: lowercase letters, digits, '-' and '_' (e.g."
        " quality, naturalness, data-coverage); names other than quality and naturalness"
        " need a question",
    )
    question: str = Field("", max_length=2000, description="empty: the name's default one")
    is_open: bool = True
    shows_input: bool | None = Field(
        None,
        description="annotators see the input beside the outputs (default: all but naturalness)",
    )
    form: str = Field(JUDGING_DEFAULT, description=f"the judgment form: one of {', '.join(FORMS)}")
    settings: dict[str, Any] | None = Field(
        None, description="the form's settings (checked and completed by the form)"
    )


class ItemsIn(Input):
    items: list[dict[str, Any]] = Field(..., max_length=MAX_RECORDS)


class SystemsIn(Input):
    systems: list[dict[str, Any]] = Field(..., max_length=MAX_RECORDS)


class OutputsIn(Input):
    outputs: list[dict[str, Any]] = Field(..., max_length=MAX_RECORDS)


class WrittenOut(Schema):
    created: int
    existing: int


class RatingsOut(Schema):
    summary: str
    repeated: bool


class SystemRow(Schema):
    system: str
    key: str = Field(..., description="the system's key (letters, digits, '-', '_')")
    position: int
    cluster: int
    mu: float
    sigma: float | None
    mu_std: float | None
    ci_lo: float | None
    ci_hi: float | None
    rank_lo: int
    rank_hi: int
    comparisons: int


class AgreementOut(Schema):
    alpha: float | None
    alpha_low: float | None
    alpha_high: float | None
    rounds: int
    units: int
    judgments: int


class RunOut(Schema):
    id: int
    finished_at: datetime | None
    judgments_version: int
    repetitions: int
    judgments: int
    hits: int
    comparisons: int
    note: str
    systems: list[SystemRow]
    columns: list[str] = Field(..., description="the protocol's CSV columns")
    table: list[dict[str, Any]] = Field(
        ..., description="one row per system, best first, in the protocol's CSV columns"
    )
    agreement: AgreementOut | None
    null_permutations: int = Field(
        ...,
        description="a published procedure's run: relabellings of this campaign's design"
        " (labels permuted within items: identical systems) it was checked on; 0 for the"
        " platform's own views",
    )
    null_ordered: int = Field(
        ..., description="of those relabellings, how many the procedure ordered anyway"
    )


class ViewOut(Schema):
    protocol: str
    label: str
    score_name: str = Field(..., description="what the protocol's score (mu) is")
    published: str = Field(
        ...,
        description="the published procedure the view keeps to the letter, for reproduction;"
        " empty for the platform's own views, whose claims hold for the whole table",
    )
    run: RunOut | None
    nothing_to_rank: str | None
    pending: bool


class RankingOut(Schema):
    criterion: str
    form: str
    is_open: bool
    judgments_version: int
    default_view: str = Field(
        ..., description="the calibrated verdict's protocol: the view to read first"
    )
    views: list[ViewOut]


class MetricRunOut(Schema):
    id: int
    finished_at: datetime | None
    outputs: int


class SystemMetricsOut(Schema):
    system: str
    values: dict[str, float]
    outputs: dict[str, int]


class MetricsOut(Schema):
    run: MetricRunOut | None
    metrics: list[str]
    systems: list[SystemMetricsOut]


class ProgressOut(Schema):
    criterion: str
    done: int
    imported: int
    target: int
    share_done: float | None
    active_now: int
    last_hour: int
    last_day: int
    median_seconds: float | None
    flagged_share: float | None
    failed_share: float | None
    cost: str
    cost_at_target: str
    finish_at: datetime | None


class GenerationJobOut(Schema):
    id: int
    system: str
    status: str
    items_total: int
    items_done: int
    outputs_created: int
    items_failed: int
    item_errors: list
    error: str
    queued_at: datetime
    finished_at: datetime | None


class ProlificEventOut(Schema):
    outcome: str
    repeated: bool


class WebhookIn(Input):
    url: str = Field(..., max_length=500)
    events: list[str] | None = Field(None, description="default: every event")


class WebhookOut(Schema):
    id: int
    url: str
    events: list[str]
    secret: str | None = Field(
        None,
        description="signs the deliveries (Standard Webhooks); only in the answer that adds"
        " the endpoint, never again",
    )
    is_active: bool
