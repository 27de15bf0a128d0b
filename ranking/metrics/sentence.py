"""Sentence-level metrics of outputs against their references or inputs, one score per
output, higher is better: what a metric judge (judges.scorers) scores and what the
fusion simulator replays. BLEU and chrF are sacrebleu's sentence scores (0-1), METEOR the
pycocoevalcap jar's (needs Java), `ser` minus the slot error rate of an E2E MR output."""

from collections.abc import Sequence

SENTENCE_METRICS = ("bleu", "chrf", "meteor", "ser")
NEEDS_REFERENCES = ("bleu", "chrf", "meteor")


def sentence_scores(
    metric: str,
    texts: Sequence[str],
    references: Sequence[Sequence[str]],
    attributes: Sequence[Sequence[Sequence[str]]] | None = None,
) -> list[float]:
    """Each text's score by `metric`; `references[i]` are text i's references and
    `attributes[i]` its MR's (name, value) pairs (for `ser`)."""
    if metric in ("bleu", "chrf"):
        from sacrebleu.metrics import BLEU, CHRF  # noqa: PLC0415 - sacrebleu loads slowly

        scorer = BLEU(effective_order=True) if metric == "bleu" else CHRF()
        pairs = zip(texts, references, strict=True)
        return [scorer.sentence_score(text, list(refs)).score / 100 for text, refs in pairs]
    if metric == "meteor":
        from . import coco  # noqa: PLC0415 - Java, only when asked

        if reason := coco.java_missing():
            raise coco.JavaError(f"meteor needs Java: {reason}")
        tokens = coco.ptb_tokenize(texts)
        flat = coco.ptb_tokenize([ref for group in references for ref in group])
        grouped, start = [], 0
        for group in references:
            grouped.append(flat[start : start + len(group)])
            start += len(group)
        with coco.meteor_scorer() as scorer:
            return coco.sentence_meteor(scorer, tokens, grouped)
    if metric == "ser":
        from .slots import check_output  # noqa: PLC0415

        if attributes is None:
            raise ValueError("ser scores MR outputs: pass the MRs' attributes")
        checks = [check_output(a, t) for a, t in zip(attributes, texts, strict=True)]
        return [-c.errors / c.slots if c.slots else 0.0 for c in checks]
    raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(SENTENCE_METRICS)}")
