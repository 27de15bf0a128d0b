"""Template realiser for E2E meaning representations (restaurant domain).

Written after the template systems of the E2E NLG Challenge (the TUDA system, Puzikov and
Gurevych 2018, in particular): the sentence plan is chosen by which attributes the MR has,
and every attribute is realised exactly once, with the value as given so that annotators
can check it. Unlike TUDA, "cheap" stays "cheap" (TUDA said "low price range").

Plan, by attribute combination:
  1. "<name> is a [family-friendly] <eatType | place> [which serves <food>] [<price>]" and,
     when neither food nor price is there, the location joins this sentence ("located near X").
  2. rating and/or location: "It has <rating> and is located in the <area> area, near <near>."
  3. familyFriendly=no: "It is not family-friendly."
  4. any attribute outside the E2E set: "Its <attribute> is <value>."
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nlgdata.inputs import E2E_ATTRIBUTES, InputError
from nlgdata.text import humanise, sentence, with_article

# Spellings seen in E2E-derived data sets (e.g. the cleaned E2E uses "customerRating").
_ALIASES = {"customerRating": "customer rating", "customer_rating": "customer rating"}


@dataclass(frozen=True)
class MeaningRepresentation:
    attributes: dict[str, str]

    def get(self, attribute: str) -> str | None:
        return self.attributes.get(attribute)

    def has(self, attribute: str) -> bool:
        return attribute in self.attributes

    def __getitem__(self, attribute: str) -> str:
        return self.attributes[attribute]

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> MeaningRepresentation:
        """The attributes of an `mr` input, under their E2E names; a name is required."""
        attributes: dict[str, str] = {}
        for pair in data["attributes"]:
            key, value = pair
            key = _ALIASES.get(str(key).strip(), str(key).strip())
            if key in attributes:
                raise InputError(f"mr input has attribute '{key}' twice")
            attributes[key] = str(value).strip()
        if not attributes.get("name"):
            raise InputError("mr input has no name attribute")
        return cls(attributes)


def realise_mr(data: dict[str, Any]) -> str:
    mr = MeaningRepresentation.from_input(data)
    sentences = [_introduction(mr)]
    details = _rating_and_location(mr, location_in_intro=_location_joins_intro(mr))
    if details:
        sentences.append(details)
    if _family_friendly(mr) is False:
        sentences.append("It is not family-friendly.")
    sentences.extend(_other_attributes(mr))
    return " ".join(sentences)


def _introduction(mr: MeaningRepresentation) -> str:
    venue = mr.get("eatType") or "place"
    if _family_friendly(mr):
        venue = f"family-friendly {venue}"
    parts = [f"{mr.get('name')} is {with_article(venue)}"]
    if mr.has("food"):
        parts.append(f"which serves {_food_phrase(mr['food'])}")
    if mr.has("priceRange"):
        parts.append(_price_phrase(mr["priceRange"]))
    if _location_joins_intro(mr):
        parts.append(f"located {_location_phrase(mr)}")
    return sentence(" ".join(parts))


def _location_joins_intro(mr: MeaningRepresentation) -> bool:
    # A short introduction ("X is a pub") reads better with the location in it, as in TUDA.
    has_location = mr.has("area") or mr.has("near")
    return has_location and not (mr.has("food") or mr.has("priceRange"))


def _rating_and_location(mr: MeaningRepresentation, *, location_in_intro: bool) -> str:
    rating = _rating_phrase(mr["customer rating"]) if mr.has("customer rating") else ""
    location = "" if location_in_intro else _location_phrase(mr)
    if rating and location:
        return sentence(f"it has {rating} and is located {location}")
    if rating:
        return sentence(f"it has {rating}")
    if location:
        return sentence(f"it is located {location}")
    return ""


def _location_phrase(mr: MeaningRepresentation) -> str:
    parts = []
    if mr.has("area"):
        parts.append(f"in the {mr.get('area')} area")
    if mr.has("near"):
        parts.append(f"near {mr.get('near')}")
    return ", ".join(parts)


def _food_phrase(food: str) -> str:
    # "Fast food" is already a food; the cuisines ("Italian") need the noun.
    if food.lower().endswith("food"):
        return food[0].lower() + food[1:]
    return f"{food} food"


def _price_phrase(price: str) -> str:
    # Amounts ("less than £20", "£20-25") read as a range; words ("cheap") as its name.
    if any(ch.isdigit() for ch in price) or "£" in price:
        return f"with a price range of {price}"
    return f"in the {price} price range"


def _rating_phrase(rating: str) -> str:
    # Scores ("3 out of 5") follow the noun; words ("average") come before it.
    if any(ch.isdigit() for ch in rating):
        return f"a customer rating of {rating}"
    return with_article(f"{rating} customer rating")


def _family_friendly(mr: MeaningRepresentation) -> bool | None:
    value = mr.get("familyFriendly")
    if value is None:
        return None
    if value.lower() in ("yes", "true"):
        return True
    if value.lower() in ("no", "false"):
        return False
    raise InputError(f"familyFriendly must be yes or no, got {value!r}")


def _other_attributes(mr: MeaningRepresentation) -> list[str]:
    return [
        sentence(f"its {humanise(key)} is {value}")
        for key, value in mr.attributes.items()
        if key not in E2E_ATTRIBUTES
    ]
