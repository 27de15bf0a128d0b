"""Template realiser for `triples` inputs (WebNLG, KBGen): one sentence per triple.

Triples are grouped by subject, subjects in order of first appearance. Relation names are
made readable ("birthPlace" -> "birth place"); a relation that already reads as a verb
phrase ("isPartOf" -> "is part of") links subject and object directly, any other reads as
"The <relation> of <subject> is <object>".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nlgdata.inputs import InputError
from nlgdata.text import humanise, humanise_entity, sentence

_VERB_STARTS = {"is", "was", "are", "were", "has", "had", "have", "does", "did", "can", "will"}


def realise_triples(data: dict[str, Any]) -> str:
    triples = [_parse_triple(t) for t in data["triples"]]
    if not triples:
        raise InputError("triples input has no triples")
    by_subject: dict[str, list[tuple[str, str]]] = {}
    for subject, relation, obj in triples:
        by_subject.setdefault(subject, []).append((relation, obj))
    return " ".join(
        triple_sentence(subject, relation, obj)
        for subject, facts in by_subject.items()
        for relation, obj in facts
    )


def _parse_triple(triple: Sequence[Any]) -> tuple[str, str, str]:
    subject, relation, obj = (str(part) for part in triple)
    return subject, relation, obj


def triple_sentence(subject: str, relation: str, obj: str) -> str:
    subject_text, relation_text, object_text = (
        humanise_entity(subject),
        humanise(relation),
        humanise_entity(obj),
    )
    if relation_text.split(" ", 1)[0] in _VERB_STARTS:
        return sentence(f"{subject_text} {relation_text} {object_text}")
    verb = "are" if _is_plural(relation_text) else "is"
    return sentence(f"the {relation_text} of {subject_text} {verb} {object_text}")


def _is_plural(noun_phrase: str) -> bool:
    # "crew members" but not "status" or "address": good enough for relation names.
    last = noun_phrase.rsplit(" ", 1)[-1].lower()
    return last.endswith("s") and not last.endswith(("ss", "us", "is"))
