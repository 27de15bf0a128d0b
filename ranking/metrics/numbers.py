"""RotoWire's number check: the share of the numbers in a game summary that appear in the
box or line score of the player or team they are attached to.

A simple relation check, not an information extractor (Wiseman et al.'s relation
generation trains one; this does not):

1. The summary is split into sentences (at ., ! or ? followed by a space and a capital
   or a quote).
2. Entity mentions are found in each sentence: a player's full name, or last name where
   no other player of the game shares it; a team's name ("Kings"), city ("Sacramento") or
   both ("Sacramento Kings"). Longer names win over the shorter ones inside them.
3. Numbers are whole numbers in digits ("31", "107" of "107-99") and number words from
   two to twenty, the tens, and compounds ("twenty-one"). "One" is left out (mostly "one
   of"), as are ordinals, numbers inside a mention ("76ers") and words in "three-pointers"
   or "three-point".
4. Each number is attached to the nearest entity mentioned before it in the same sentence;
   a number with none before it (a sentence that starts with a pronoun, a date) is left
   unattached and not checked.
5. An attached number is supported when that entity's row has that value in any of its
   statistics: a player's box-score figures (points, rebounds, minutes, percentages, ...);
   a team's line score (quarter points, percentages, ...) with its wins and losses and the
   game's final score, both teams' points (a score, "beat the Nets 107-99", follows either
   team's name).

What it gets wrong, both ways: a number that belongs to another entity than the nearest
one ("Lopez and Williams played 12 and 17 minutes": 12 is attached to Williams) counts as
unsupported, as does one the box score cannot hold (a run of points, a streak of games);
a wrong figure that happens to equal another statistic of the same player counts as
supported. The human summaries' share is the check's ceiling in practice, not 1.

Django-free: the game is the `boxscore` input (nlgdata.inputs) as a dict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

UNITS = "two three four five six seven eight nine".split()
TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORD_VALUES = {
    **{word: n for n, word in enumerate(UNITS, start=2)},
    **{word: n for n, word in enumerate(TEENS, start=10)},
    **{word: 10 * n for n, word in enumerate(TENS, start=2)},
}
ONES = {word: value for word, value in WORD_VALUES.items() if value < 10} | {"one": 1}
NUMBER_WORD = "|".join(sorted(WORD_VALUES, key=len, reverse=True))
NUMBERS = re.compile(
    rf"(?<![\w.])(?:(?P<digits>\d+)(?![\d.]*\w)"
    rf"|(?P<word>(?:{'|'.join(TENS)})-(?:{'|'.join(ONES)})|{NUMBER_WORD})"
    r"(?![\w-]))",
    re.IGNORECASE,
)
# The words of "three-pointers", "three-point range" are no count of anything.
NOT_A_COUNT = re.compile(r"-point", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
IMPLEMENTATION = (
    "ranking.metrics.numbers: each number attached to the nearest player or team named "
    "before it in its sentence, supported if in that one's box- or line-score row"
)


@dataclass
class Entity:
    name: str
    values: frozenset[int]


@dataclass
class NumberCheck:
    """One summary: the numbers attached to an entity, those its row supports, and the
    numbers attached to none."""

    checked: int = 0
    supported: int = 0
    unattached: int = 0
    unsupported: list[tuple[str, int]] = field(default_factory=list)  # (entity, number)


@dataclass
class NumberSupport:
    """A system's summaries together."""

    outputs: int = 0
    checked: int = 0
    supported: int = 0
    unattached: int = 0

    @property
    def share(self) -> float | None:
        return self.supported / self.checked if self.checked else None


def figures(values: Iterable) -> frozenset[int]:
    """The whole-number figures of a row (RotoWire's 'N/A' and the like left out)."""
    found = set()
    for value in values:
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            found.add(value)
        elif isinstance(value, str) and value.strip().isdigit():
            found.add(int(value))
        elif isinstance(value, float) and value.is_integer():
            found.add(int(value))
    return frozenset(found)


def entities(game: dict) -> dict[str, Entity]:
    """Each name a summary may use for a player or team -> its entity."""
    names: dict[str, Entity] = {}
    final_score = [(game.get(side) or {}).get("pts") for side in ("home", "visitor")]
    for side in ("home", "visitor"):
        team = game.get(side) or {}
        line = team.get("line") or {}
        # Both teams' points: a score ("beat the Nets 107-99") follows either team's name.
        values = figures([team.get("wins"), team.get("losses"), *final_score, *line.values()])
        entity = Entity(f"{team.get('city', '')} {team.get('name', '')}".strip(), values)
        for name in (team.get("name"), team.get("city"), entity.name):
            if name:
                names[str(name)] = entity
    players = [p for p in game.get("players") or [] if p.get("name")]
    last_names: dict[str, list[Entity]] = {}
    for player in players:
        entity = Entity(str(player["name"]), figures((player.get("stats") or {}).values()))
        names[entity.name] = entity
        parts = entity.name.split()
        if len(parts) > 1:
            last_names.setdefault(parts[-1], []).append(entity)
    for last, found in last_names.items():
        if len(found) == 1 and last not in names:
            names[last] = found[0]
    return names


def mention_pattern(names: Iterable[str]) -> re.Pattern:
    ordered = sorted(names, key=len, reverse=True)  # "Sacramento Kings" before "Kings"
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, ordered)) + r")(?!\w)")


def number_value(match: re.Match) -> int:
    if match.group("digits"):
        return int(match.group("digits"))
    word = match.group("word").lower()
    if "-" in word:
        tens, ones = word.split("-")
        return WORD_VALUES[tens] + ONES[ones]
    return WORD_VALUES[word]


def check_summary(game: dict, text: str) -> NumberCheck:
    names = entities(game)
    result = NumberCheck()
    if not names:
        return result
    pattern = mention_pattern(names)
    for sentence in SENTENCE_END.split(text):
        mentions = [(m.start(), m.end(), names[m.group()]) for m in pattern.finditer(sentence)]
        for match in NUMBERS.finditer(sentence):
            if NOT_A_COUNT.match(sentence, match.end()):
                continue
            if any(start <= match.start() < end for start, end, _ in mentions):
                continue  # the 76 of "76ers"
            before = [entity for _, end, entity in mentions if end <= match.start()]
            if not before:
                result.unattached += 1
                continue
            value, entity = number_value(match), before[-1]
            result.checked += 1
            if value in entity.values:
                result.supported += 1
            else:
                result.unsupported.append((entity.name, value))
    return result


def number_support(pairs: Iterable[tuple[dict, str]]) -> NumberSupport:
    """Over (game, summary) pairs: how many numbers were checked and supported."""
    total = NumberSupport()
    for game, text in pairs:
        found = check_summary(game, text)
        total.outputs += 1
        total.checked += found.checked
        total.supported += found.supported
        total.unattached += found.unattached
    return total
