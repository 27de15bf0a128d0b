"""Small English helpers: names written by programs made readable, and sentence pieces.

The annotator pages label attributes with them and the template backends write sentences
with them, so a name reads the same on both.
"""

from __future__ import annotations

import re

# Words spelled with a vowel but said with a consonant sound, and the reverse.
_CONSONANT_SOUND = ("eu", "one", "once", "uni", "usa", "use", "usu", "uti")
_VOWEL_SOUND = ("hour", "honest", "honour", "heir", "8", "11", "18")


def indefinite_article(phrase: str) -> str:
    """'a' or 'an' for the phrase that follows it."""
    word = phrase.strip().lower()
    if word.startswith(_VOWEL_SOUND):
        return "an"
    if word.startswith(_CONSONANT_SOUND):
        return "a"
    return "an" if word[:1] in set("aeiou") else "a"


def with_article(phrase: str) -> str:
    return f"{indefinite_article(phrase)} {phrase}"


def humanise(identifier: str) -> str:
    """'birthPlace' -> 'birth place', 'Alan_Bean' -> 'alan bean', 'NASA_id' -> 'NASA id'.

    For the middle of a sentence; `label` for a name that stands alone."""
    text = _unwrap(identifier)
    # Split camelCase at a lower-to-upper step but keep acronyms ("NASA", "ID") whole.
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    words = [w if w.isupper() and len(w) > 1 else _lower_first(w) for w in text.split()]
    return " ".join(words)


def _lower_first(word: str) -> str:
    return word[:1].lower() + word[1:]


def label(identifier: str) -> str:
    """'priceRange' -> 'Price range', 'NASA_id' -> 'NASA id': a name as a heading."""
    text = humanise(identifier)
    return text[:1].upper() + text[1:]


def humanise_entity(identifier: str) -> str:
    """Entity names keep their case: 'Alan_Bean' -> 'Alan Bean', '"1932-03-15"' -> '1932-03-15'."""
    return normalise(_unwrap(identifier))


def _unwrap(identifier: str) -> str:
    # WebNLG writes spaces as underscores and literals in double quotes.
    return identifier.replace("_", " ").strip().strip('"').strip()


def join_list(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def sentence(text: str) -> str:
    """Capitalise the first letter and end with a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def normalise(text: str) -> str:
    """White space collapsed to single spaces, so texts that read the same compare equal."""
    return " ".join(text.split())
