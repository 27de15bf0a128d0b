"""Automatic judges: named scorers of a criterion's outputs, beside the crowd. No Django here.

    judge = make_judge("metric", {"metric": "ser"})
    results = judge.score([JudgeInput(TypedInput("mr", data), references, text)])

A judge gives each output a score on the human scale's direction (higher is better), or an
error for that output. Kinds: `metric` (a sentence-level metric of `ranking.metrics.sentence`
against the item's references, or `ser` against its MR), `openai` (an OpenAI-compatible
endpoint asked with a rubric prompt, `{input}` and `{output}` filled in, its first number
read and checked against the scale; the endpoint's settings and policies are the generation
backend's: the key only from an allowed environment variable, internal hosts only where the
deployment allows them). A local checkpoint as a judge is not built: the kinds offered are
the ones that score (a local model can serve through an OpenAI-compatible endpoint, as
vLLM's or llama.cpp's servers do).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from generation.backends.base import Settings, TypedInput
from generation.backends.linearize import linearize
from generation.backends.openai_backend import (
    OpenAIBackend,
    OpenAISettings,
    RequestFailed,
    RetryableError,
)
from nlgdata.inputs import InputError
from nlgdata.secrets import NO_SECRETS, SecretEnvPolicy
from outbound import PUBLIC_ONLY, AddressPolicy
from ranking.metrics.sentence import NEEDS_REFERENCES, SENTENCE_METRICS, sentence_scores

JUDGE_KINDS = {
    "metric": "Metric of the output (against references or the MR)",
    "openai": "OpenAI-compatible endpoint with a rubric",
}
DEFAULT_RUBRIC = (
    "You rate texts generated from structured data. Input: {input}\n"
    "Text: {output}\n"
    "How good is the text as a rendering of the input (fluent, natural, complete, correct)?"
    " Answer with one number from 0 (worst) to 100 (best) and nothing else."
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class JudgeInput:
    item: TypedInput
    references: list[str] = field(hash=False)
    text: str


@dataclass(frozen=True)
class JudgeResult:
    score: float | None
    error: str = ""


class Judge(Protocol):
    def score(self, inputs: Sequence[JudgeInput]) -> list[JudgeResult]: ...


class MetricJudge:
    def __init__(self, metric: str) -> None:
        self.metric = metric

    def score(self, inputs: Sequence[JudgeInput]) -> list[JudgeResult]:
        results: list[JudgeResult | None] = [None] * len(inputs)
        usable = []
        for i, one in enumerate(inputs):
            if self.metric in NEEDS_REFERENCES and not one.references:
                results[i] = JudgeResult(None, "the item has no references")
            elif self.metric == "ser" and one.item.kind != "mr":
                results[i] = JudgeResult(None, f"ser scores MR outputs, not {one.item.kind}")
            else:
                usable.append(i)
        scores = sentence_scores(
            self.metric,
            [inputs[i].text for i in usable],
            [inputs[i].references for i in usable],
            [inputs[i].item.data.get("attributes", []) for i in usable],
        )
        for i, value in zip(usable, scores, strict=True):
            results[i] = JudgeResult(float(value))
        return [r if r is not None else JudgeResult(None, "not scored") for r in results]


class OpenAIJudge(OpenAIBackend):
    """The OpenAI backend asked to rate an output: one request per output, the rubric's
    `{input}` and `{output}` filled in, the first number of the answer its score."""

    def __init__(
        self,
        settings: OpenAISettings,
        rubric: str,
        scale: tuple[float, float],
        secret_env: SecretEnvPolicy = NO_SECRETS,
        endpoints: AddressPolicy = PUBLIC_ONLY,
    ) -> None:
        super().__init__(settings, secret_env, endpoints)
        self.rubric, self.scale = rubric, scale

    def score(self, inputs: Sequence[JudgeInput]) -> list[JudgeResult]:
        if not inputs:
            return []
        workers = min(self.settings.max_concurrency, len(inputs))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge") as pool:
            return list(pool.map(self._score_one, inputs))

    def _score_one(self, one: JudgeInput) -> JudgeResult:
        try:
            prompt = self.rubric.format(input=linearize(one.item), output=one.text)
        except InputError as exc:
            return JudgeResult(None, str(exc))
        try:
            answer = self._request_with_retries(self.request_body(prompt))
        except RetryableError as exc:
            return JudgeResult(
                None, f"failed after {self.settings.max_retries + 1} attempts: {exc}"
            )
        except RequestFailed as exc:
            return JudgeResult(None, str(exc))
        return read_score(answer, self.scale)


def read_score(answer: str, scale: tuple[float, float]) -> JudgeResult:
    """The first number of `answer` if it lies on the scale, else an error quoting (a
    little of) the answer."""
    found = _NUMBER.search(answer)
    low, high = scale
    if found is None:
        return JudgeResult(None, f"no number in the answer {answer[:60]!r}")
    value = float(found.group())
    if not low <= value <= high:
        return JudgeResult(None, f"{value:g} is off the scale {low:g}-{high:g}")
    return JudgeResult(value)


def _openai_parts(
    values: Mapping[str, Any], secret_env: SecretEnvPolicy, endpoints: AddressPolicy
) -> tuple[OpenAISettings, str, tuple[float, float]]:
    s = Settings("openai judge", values)
    rubric = s.string("rubric", DEFAULT_RUBRIC)
    try:
        rubric.format(input="", output="")
    except (KeyError, IndexError, ValueError) as exc:
        problem = f"must use only the {{input}} and {{output}} fields: {exc!r}"
        raise s.error("rubric", problem) from None
    if "{output}" not in rubric:
        raise s.error("rubric", "must contain {output}")
    scale = s.get("scale", [0, 100])
    if (
        not isinstance(scale, list)
        or len(scale) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in scale)
        or scale[0] >= scale[1]
    ):
        raise s.error("scale", f"must be [lowest, highest], got {scale!r}")
    rest = {key: value for key, value in values.items() if key not in ("rubric", "scale")}
    if "prompt_template" in rest:
        raise s.error("prompt_template", "a judge's prompt is its rubric")
    settings = OpenAISettings.from_settings(rest, secret_env, endpoints)
    return settings, rubric, (float(scale[0]), float(scale[1]))


def _metric(values: Mapping[str, Any]) -> str:
    s = Settings("metric judge", values)
    metric = s.choice("metric", SENTENCE_METRICS, "")
    s.reject_unknown()
    return metric


def check_judge_settings(
    kind: str,
    values: Mapping[str, Any],
    secret_env: SecretEnvPolicy = NO_SECRETS,
    endpoints: AddressPolicy = PUBLIC_ONLY,
) -> None:
    """Raise ValueError naming the kind or the setting that is wrong (no key read, nothing
    built: for forms in the web process)."""
    if kind == "metric":
        _metric(values)
    elif kind == "openai":
        _openai_parts(values, secret_env, endpoints)
    else:
        raise ValueError(f"unknown judge kind {kind!r}: use one of {', '.join(JUDGE_KINDS)}")


def make_judge(
    kind: str,
    values: Mapping[str, Any],
    secret_env: SecretEnvPolicy = NO_SECRETS,
    endpoints: AddressPolicy = PUBLIC_ONLY,
) -> Judge:
    """Build the judge; invalid settings raise ValueError as check_judge_settings does."""
    check_judge_settings(kind, values, secret_env, endpoints)
    if kind == "metric":
        return MetricJudge(_metric(values))
    settings, rubric, scale = _openai_parts(values, secret_env, endpoints)
    return OpenAIJudge(settings, rubric, scale, secret_env, endpoints)
