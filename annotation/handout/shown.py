"""The sentences a HIT page shows, and RankME's answer to one.

Identical outputs of different systems in one HIT (the same text once whitespace is
normalised; E2E's `dupl_ref` case) are shown ONCE. The score and coverage marks given to
that sentence are saved as the judgment of every slot that holds it, so those systems get
equal scores, and draw with each other, by construction: the annotator is never asked to
tell identical sentences apart, and no HIT is lost to a consistency check.
"""

import string
from dataclasses import dataclass, field

from annotation.models import Hit, HitOutput
from nlgdata.text import normalise

from . import sql


@dataclass
class Shown:
    """One sentence on the page: the output text of one or more slots of the HIT."""

    key: int  # the position of its first slot; names its form fields
    label: str  # "A", "B", ... as the annotator sees it
    text: str
    slots: list[HitOutput] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    score: int
    adds_information: bool = False
    misses_information: bool = False
    reflects_perfectly: bool = False


def shown_outputs(hit: Hit) -> list[Shown]:
    """The sentences of a HIT in the order shown, identical outputs merged (an attention
    check, scored on its own, never merges with an output)."""
    by_text: dict[tuple[str, bool], Shown] = {}
    for slot in sql.hit_slots(hit):
        text = (normalise(slot.text), slot.is_attention_check)
        if text not in by_text:
            label = string.ascii_uppercase[len(by_text)]
            by_text[text] = Shown(key=slot.position, label=label, text=slot.text)
        by_text[text].slots.append(slot)
    return list(by_text.values())
