"""Slot errors of outputs for E2E meaning representations, by pattern matching (the style
of the E2E findings paper's Table 12): for each output, which attributes of its MR it
realises, which it misses, which it gives another value, and which it adds.

How an output is read
- Case and accents are ignored (Café = cafe) and white space is collapsed.
- Rules run in a fixed order, and the words a rule matched are blanked out before the
  next one, so that a later rule never reads them again: the MR's `name` and `near`
  values first (so "Café Sicilia" is not a coffee shop and "Raja Indian Cuisine" is not
  Indian food), then familyFriendly (negative phrasings before positive ones), prices in
  pounds, ratings out of 5, rating words, price words, eatType, food, area.
- `name`, `near` and any attribute without rules here: the value itself must appear
  (a leading "The" may be left out). Such attributes are never counted as added: what
  would be a name is an open class.
- familyFriendly[yes]: "family-friendly", "kid/child(ren)-friendly", "family-oriented",
  "suitable/good/great/ideal for families/kids/children", "welcomes/allows/caters for
  children", "kids welcome". familyFriendly[no]: the same negated ("not family-friendly",
  "isn't suitable for children", "does not allow kids", "non-family-friendly"), "no kids",
  "adults only", "child-free", "unsuitable for families".
- priceRange: "less than £20" (also "under/below/cheaper than £20", "£20 or less"),
  "£20-25" ("£20 to £25", "between £20 and £25"), "more than £30" ("over/above £30",
  "£30+", "£30 or more"); "pounds" may stand for £. Words: cheap ("cheap", "inexpensive",
  "low-cost", "low price(d)", "affordable", "budget", "prices are low"), moderate
  ("moderate(ly priced)", "mid-range", "average price(d)", "reasonably priced"), high
  ("expensive", "high price(d)", "high-end", "pricey", "costly", "upscale", "prices are
  high"). A word and a figure of the same level are one value for this check: "cheap"
  realises less than £20 and the other way round; moderate = £20-25, high = more than £30.
- customer rating: "N out of 5", "N/5", "N star(s)" with N in digits or words; words:
  low ("low(ly) rated", "low/poor customer rating", "rating is low"), average ("average
  rating", "average(ly) rated", "rating is average", "mediocre/medium rating"), high
  ("highly rated", "high/excellent/great/good rating", "well/top rated", "rating is
  high"). As for prices, low = 1 out of 5, average = 3 out of 5, high = 5 out of 5.
- eatType: restaurant ("restaurant", "diner", "eatery", "bistro"), pub ("pub", "bar",
  "tavern"), coffee shop ("coffee shop", "coffeeshop", "coffee house", "café").
- food: the adjective (Italian, French, English, Chinese, Indian, Japanese, fast food),
  and a few dishes: pasta/pizza (Italian), British (English), curry (Indian), sushi
  (Japanese), burgers (fast food).
- area: riverside ("riverside", "river", "riverfront", "waterfront"), city centre ("city
  centre/center", "centre of the city", "town centre", "downtown", "central(ly)", "in the
  centre").

An attribute of the MR is realised when one of its value's phrasings is found; wrong when
only another value of the same attribute is ("cheap" for priceRange[high]); missing when
none is. An attribute that the MR lacks is added when a phrasing of any of its values is
found (only for attributes with rules above). The slot error rate is (missing + wrong +
added) / the number of MR slots, over all outputs of a system. Pattern matching errs both
ways (a generic "restaurant" counts as eatType, an unusual paraphrase as missing); it is
a screening measure, as in the paper, not a judgment.
"""

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

NUMBER = {"1": "(?:1|one)", "3": "(?:3|three)", "5": "(?:5|five)"}
POUNDS = r"(?:£\s*)?{n}(?:\s*(?:pounds?|gbp|quid))?"
# Words that may stand between "rating"/"price" and the value: "the price range is very high".
LINKS = (
    "is are was were of as at in has have a an the range been very quite rather pretty fairly "
    "only just generally usually really extremely relatively reasonably"
)
CONNECT = rf"(?:\s+(?:{'|'.join(LINKS.split())}))*\s+"
RATED = r"(?:customer\s+rating|rating|ratings|rated|score|reviews?)"
PRICED = r"(?:price\s+range|prices?|priced|pricing|costs?)"
FAMILY = r"(?:famil(?:y|ies)|kids?|child(?:ren)?)"
NOT = r"(?:\bnot|n't|\bnever|\bno\s+longer)"


def _rating_number(n: str) -> list[str]:
    word = NUMBER[n]
    return [
        rf"(?<![\d£.]){word}\s*(?:stars?\s+)?(?:out\s+of|/|of)\s*(?:5|five)\b",
        rf"(?<![\d£.]){word}[\s-]+stars?\b",
    ]


def _rating_words(words: str) -> list[str]:
    return [
        rf"\b(?:{words})(?:ly)?[\s-]+rated\b",
        rf"\b(?:{words})\s+(?:customer\s+|user\s+|average\s+)?(?:rating|ratings|score|reviews?)\b",
        rf"\b{RATED}{CONNECT}(?:{words})\b",
    ]


def _price_words(words: str) -> list[str]:
    return [rf"\b{PRICED}{CONNECT}(?:{words})\b"]


# (attribute, value group, patterns), in the order they are applied.
RULES: list[tuple[str, str, list[str]]] = [
    (
        "familyFriendly",
        "no",
        [
            rf"(?:{NOT}|\bnon|\bun)[\s-]*(?:a\s+|very\s+|particularly\s+|really\s+)?{FAMILY}[\s-]*(?:friendly|oriented)\b",
            rf"\b{FAMILY}[\s-]*unfriendly\b",
            rf"{NOT}\b(?:\s+\w+){{0,3}}?\s+(?:suitable|good|great|ideal|appropriate|recommended|friendly|welcoming|open|geared|aimed|catered|intended|meant|for)\s+(?:for|to|towards)?\s*(?:the\s+)?(?:whole\s+)?(?:young\s+)?{FAMILY}\b",
            rf"\b(?:does|do|did|will|can|wo|ca)\s*(?:not|n't)\s+(?:\w+\s+){{0,2}}?(?:allow|welcome|cater(?:\s+(?:for|to))?|accommodate|accept|admit|permit|serve|like|want|suit)\s+(?:\w+\s+)?{FAMILY}\b",
            rf"\bun(?:suitable|friendly|welcoming)\s+(?:for|to)\s+(?:\w+\s+)?{FAMILY}\b",
            r"\bno\s+(?:kids|children|families|child)\b",
            r"\badults?[\s-]+only\b",
            r"\b(?:child|kid)[\s-]*free\b",
        ],
    ),
    (
        "familyFriendly",
        "yes",
        [
            rf"\b{FAMILY}[\s-]*(?:friendly|oriented)\b",
            rf"\b(?:suitable|good|great|ideal|perfect|appropriate|welcoming|fun|friendly|open|geared|aimed|catering|caters?|nice|excellent|safe)\s+(?:for|to|towards)\s+(?:the\s+)?(?:whole\s+)?(?:young\s+)?{FAMILY}\b",
            rf"\b(?:welcomes?|welcoming|allows?|accepts?|accommodates?|brings?)\s+(?:the\s+|your\s+|young\s+|all\s+)?{FAMILY}\b",
            rf"\b{FAMILY}\s+(?:are\s+|is\s+)?(?:welcome|allowed|permitted)\b",
            r"\bfor\s+(?:all\s+)?(?:the\s+)?(?:whole\s+)?famil(?:y|ies)\b",
        ],
    ),
    (
        "priceRange",
        "low",
        [
            r"(?:less\s+than|under|below|lower\s+than|cheaper\s+than|up\s+to|no\s+more\s+than|not\s+more\s+than|at\s+most|beneath|<)\s*"
            + POUNDS.format(n="20")
            + r"(?![\d-])",
            POUNDS.format(n="20")
            + r"\s*(?:or\s+(?:less|under|below|cheaper)|and\s+(?:under|below))",
        ],
    ),
    (
        "priceRange",
        "moderate",
        [r"(?:between\s+)?(?:£\s*)?20(?:\s*(?:pounds?|gbp))?\s*(?:-|–|—|to|and)\s*(?:£\s*)?25\b"],
    ),
    (
        "priceRange",
        "high",
        [
            r"(?:more\s+than|over|above|higher\s+than|greater\s+than|in\s+excess\s+of|upwards\s+of|exceeding|at\s+least|>)\s*"
            + POUNDS.format(n="30"),
            POUNDS.format(n="30")
            + r"\s*(?:\+|plus\b|or\s+(?:more|over|above|higher)|and\s+(?:up|over|above|more))",
        ],
    ),
    ("customer rating", "low", _rating_number("1")),
    ("customer rating", "average", _rating_number("3")),
    ("customer rating", "high", _rating_number("5")),
    ("customer rating", "low", [*_rating_words("low|poor|bad|terrible|awful")]),
    (
        "customer rating",
        "average",
        [*_rating_words("average|medium|moderate|mid|decent|mediocre|ok|okay|middling|fair")],
    ),
    (
        "customer rating",
        "high",
        [
            *_rating_words("high|excellent|great|good|top|strong|outstanding|superb|fantastic"),
            r"\b(?:well|top|best)[\s-]+rated\b",
        ],
    ),
    (
        "priceRange",
        "low",
        [
            r"\b(?:cheap(?:ly|er|est)?|inexpensive(?:ly)?|affordabl[ey]|budget|bargain|economical)\b",
            r"\blow[\s-]*(?:cost|price[sd]?|pricing|price\s+range|end)\b",
            r"\blow(?:er)?\s+prices?\b",
            *_price_words("low|cheap|inexpensive|affordable"),
        ],
    ),
    (
        "priceRange",
        "moderate",
        [
            r"\bmoderate(?:ly)?\b",
            r"\bmid[\s-]*(?:range|price[sd]?|priced|level)\b",
            r"\b(?:average|medium|middle|fair|reasonabl[ey])[\s-]*(?:price[sd]?|priced|pricing|price\s+range|cost)\b",
            *_price_words("moderate|average|medium|mid[\\s-]*range|reasonable|fair"),
        ],
    ),
    (
        "priceRange",
        "high",
        [
            r"\b(?:expensive|pricey|pricy|costly|upscale|luxur(?:y|ious)|premium|upmarket)\b",
            r"\bhigh(?:ly)?[\s-]*(?:cost|price[sd]?|priced|pricing|price\s+range|end)\b",
            r"\bhigh(?:er)?\s+prices?\b",
            *_price_words("high|expensive|steep|pricey"),
        ],
    ),
    ("eatType", "coffee shop", [r"\bcoffee[\s-]*(?:shops?|house)\b", r"\bcafes?\b"]),
    ("eatType", "pub", [r"\b(?:pubs?|bars?|taverns?)\b"]),
    ("eatType", "restaurant", [r"\b(?:restaurants?|diners?|eater(?:y|ies)|bistros?)\b"]),
    ("food", "fast food", [r"\bfast[\s-]*food\b", r"\bburgers?\b"]),
    ("food", "italian", [r"\bitalian\b", r"\bpasta\b", r"\bpizza(?:s|eria)?\b"]),
    ("food", "french", [r"\bfrench\b"]),
    ("food", "english", [r"\benglish\b", r"\bbritish\b"]),
    ("food", "chinese", [r"\bchinese\b"]),
    ("food", "indian", [r"\bindian\b", r"\bcurr(?:y|ies)\b"]),
    ("food", "japanese", [r"\bjapanese\b", r"\bsushi\b"]),
    ("area", "riverside", [r"\briver(?:side|front|bank)?\b", r"\bwaterfront\b"]),
    (
        "area",
        "city centre",
        [
            r"\b(?:city|town)[\s-]*cent(?:re|er)\b",
            r"\bcent(?:re|er)\s+of\s+(?:the\s+)?(?:city|town)\b",
            r"\bdowntown\b",
            r"\bcentral(?:ly)?\b",
            r"\b(?:in|at|near|to)\s+the\s+cent(?:re|er)\b",
        ],
    ),
]
COMPILED = [
    (attribute, group, re.compile("|".join(f"(?:{p})" for p in patterns)))
    for attribute, group, patterns in RULES
]
# attribute -> the value groups its rules recognise
RULED: dict[str, set[str]] = {}
for _attribute, _group, _ in RULES:
    RULED.setdefault(_attribute, set()).add(_group)
# A value of the MR -> the group of phrasings that realise it.
GROUP = {
    "priceRange": {
        "cheap": "low",
        "less than £20": "low",
        "moderate": "moderate",
        "£20-25": "moderate",
        "high": "high",
        "more than £30": "high",
    },
    "customer rating": {
        "low": "low",
        "1 out of 5": "low",
        "average": "average",
        "3 out of 5": "average",
        "high": "high",
        "5 out of 5": "high",
    },
}


@dataclass(frozen=True)
class SlotCheck:
    slots: int
    realised: tuple[str, ...]
    missing: tuple[str, ...]
    wrong: tuple[str, ...]
    added: tuple[str, ...]

    @property
    def errors(self) -> int:
        return len(self.missing) + len(self.wrong) + len(self.added)

    @property
    def all_realised(self) -> bool:
        """Every slot realised with its value, nothing added."""
        return self.errors == 0


def normalise(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " " + " ".join(plain.split()) + " "


def _literal(value: str) -> re.Pattern:
    words = normalise(value).split()
    optional_the = words[:1] == ["the"] and len(words) > 1
    body = r"\s+".join(re.escape(w) for w in (words[1:] if optional_the else words))
    return re.compile((r"(?:\bthe\s+)?" if optional_the else "") + rf"(?<!\w){body}(?!\w)")


def _blank(text: str, pattern: re.Pattern) -> tuple[str, bool]:
    found = False

    def spaces(match: re.Match) -> str:
        nonlocal found
        found = True
        return " " * len(match.group(0))

    return pattern.sub(spaces, text), found


def check_output(attributes: Sequence[Sequence[str]], text: str) -> SlotCheck:
    """Which of the MR's attributes `text` realises, misses, gets wrong, and which it adds."""
    mr = {name: normalise(value).strip() for name, value in attributes}
    text = normalise(text)
    realised: list[str] = []
    missing: list[str] = []
    for name, value in attributes:  # literal values first: names, and attributes without rules
        if mr[name] in GROUP.get(name, {}) or mr[name] in RULED.get(name, ()):
            continue
        text, found = _blank(text, _literal(value))
        (realised if found else missing).append(name)
    mentioned: dict[str, set[str]] = {}
    for attribute, group, pattern in COMPILED:
        text, found = _blank(text, pattern)
        if found:
            mentioned.setdefault(attribute, set()).add(group)
    wrong: list[str] = []
    for name, _ in attributes:
        if name in realised or name in missing:
            continue
        wanted = GROUP.get(name, {}).get(mr[name], mr[name])
        said = mentioned.get(name, set())
        if wanted in said:
            realised.append(name)
        else:
            (wrong if said else missing).append(name)
    added = [name for name in mentioned if name not in mr]
    return SlotCheck(len(mr), tuple(realised), tuple(missing), tuple(wrong), tuple(added))


@dataclass(frozen=True)
class SlotErrors:
    outputs: int
    slots: int
    all_realised: int
    with_added: int
    with_missing: int
    with_wrong: int
    errors: int

    @property
    def ser(self) -> float:
        return self.errors / self.slots if self.slots else 0.0

    def share(self, count: int) -> float:
        return count / self.outputs if self.outputs else 0.0


def slot_errors(outputs: Iterable[tuple[Sequence[Sequence[str]], str]]) -> SlotErrors:
    """Totals over (MR attributes, output text) pairs: one system's outputs."""
    checks = [check_output(attributes, text) for attributes, text in outputs]
    return SlotErrors(
        outputs=len(checks),
        slots=sum(c.slots for c in checks),
        all_realised=sum(c.all_realised for c in checks),
        with_added=sum(bool(c.added) for c in checks),
        with_missing=sum(bool(c.missing) for c in checks),
        with_wrong=sum(bool(c.wrong) for c in checks),
        errors=sum(c.errors for c in checks),
    )
