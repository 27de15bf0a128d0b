"""Small English helpers the template backends share."""

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
    """'birthPlace' -> 'birth place', 'Alan_Bean' -> 'Alan Bean', 'NASA_id' -> 'NASA id'."""
    text = identifier.replace("_", " ").strip().strip('"').strip()
    # Split camelCase at a lower-to-upper step but keep acronyms ("NASA", "ID") whole.
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    words = [w if w.isupper() and len(w) > 1 else _lower_first(w) for w in text.split()]
    return " ".join(words)


def _lower_first(word: str) -> str:
    return word[:1].lower() + word[1:]


def humanise_entity(identifier: str) -> str:
    """Entity names keep their case: 'Alan_Bean' -> 'Alan Bean', '"1932-03-15"' -> '1932-03-15'."""
    text = identifier.replace("_", " ").strip().strip('"').strip()
    return re.sub(r"\s+", " ", text)


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
