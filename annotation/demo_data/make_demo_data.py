"""Writes the demo campaign's sample data (items.csv, outputs/*.tsv): E2E-style MRs and four
systems of visibly different quality. Run from the repository root; the files are committed."""

import csv
import random

from nlgdata.inputs import E2E_ATTRIBUTES, format_mr
from nlgdata.text import with_article

rng = random.Random(7)
names = [
    "The Vaults",
    "The Cambridge Blue",
    "The Eagle",
    "The Mill",
    "Loch Fyne",
    "Bibimbap House",
    "The Rice Boat",
    "The Golden Curry",
    "The Phoenix",
    "Cotto",
    "Giraffe",
    "Zizzi",
    "Strada",
    "The Punter",
    "Wildwood",
    "Alimentum",
    "Aromi",
    "Browns Cambridge",
]
near_places = [
    "Café Adriatic",
    "Raja Indian Cuisine",
    "The Bakers",
    "Burger King",
    "Crowne Plaza Hotel",
    "Express by Holiday Inn",
    "Café Sicilia",
    "Clare Hall",
    "The Portland Arms",
    "Yippee Noodle Bar",
]
foods = ["Chinese", "English", "French", "Indian", "Italian", "Japanese", "Fast food"]
prices = ["cheap", "moderate", "high", "less than £20", "£20-25", "more than £30"]
ratings = ["low", "average", "high", "1 out of 5", "3 out of 5", "5 out of 5"]
mrs = []
for i in range(36):
    a = [
        ("name", names[i % len(names)]),
        ("eatType", rng.choice(["pub", "restaurant", "coffee shop"])),
    ]
    opt = [
        ("food", rng.choice(foods)),
        ("priceRange", rng.choice(prices)),
        ("customer rating", rng.choice(ratings)),
        ("area", rng.choice(["riverside", "city centre"])),
        ("familyFriendly", rng.choice(["yes", "no"])),
        ("near", rng.choice(near_places)),
    ]
    a += rng.sample(opt, rng.randint(1, 5))
    a.sort(key=lambda p: E2E_ATTRIBUTES.index(p[0]))
    mrs.append(a)


def phrase(k, v):
    return {
        "food": f"serves {v} food",
        "priceRange": f"has a price range of {v}" if "£" in v else f"has {v} prices",
        "customer rating": f"is rated {v}"
        if "out of" in v
        else f"has {with_article(v)} customer rating",
        "area": f"is in the {v}" if v == "city centre" else "is by the riverside",
        "familyFriendly": "welcomes families" if v == "yes" else "is not family-friendly",
        "near": f"is near {v}",
    }[k]


def fluent(a, variant):
    d = dict(a)
    rest = [(k, v) for k, v in a if k not in ("name", "eatType")]
    head = f"{d['name']} is {with_article(d['eatType'])}"
    parts = [phrase(k, v) for k, v in rest]
    if not parts:
        return head + "."
    if variant % 2 and len(parts) > 1:
        return f"{head} that {parts[0]}. It also {' and '.join(parts[1:])}.".replace(
            "It also is", "It is also"
        )
    return (
        f"{head} that "
        + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])
        + "."
    )


def terse(a):
    d = dict(a)
    return f"{d['name']} is {with_article(d['eatType'])}."


def hallucinating(a, variant):
    text = fluent(a, variant).rstrip(".")
    extra = rng.choice(
        [
            " with free Wi-Fi",
            " with live music every night",
            " that opened last year",
            " with a large car park",
        ]
    )
    d = dict(a)
    if "food" in d and variant % 3 == 0:
        text = text.replace(d["food"], rng.choice([f for f in foods if f != d["food"]]))
    return text + extra + "."


def broken(a):
    d = dict(a)
    vals = [v for k, v in a if k != "name"]
    rng.shuffle(vals)
    return f"{d['name']} {d['name']} is {' is '.join(vals)} the the place ."


# Plain csv.writer, not annotation.csvsafe: these are files for the importers, where a
# leading ' would become part of the text; no cell here starts like a formula.
with open("annotation/demo_data/items.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["mr", "ref"])
    for i, a in enumerate(mrs):
        w.writerow([format_mr(a), fluent(a, i + 1)])
        w.writerow([format_mr(a), fluent(a, i)])
systems = {
    "fluent": lambda a, i: fluent(a, i),
    "terse": lambda a, i: terse(a),
    "hallucinating": hallucinating,
    "broken": lambda a, i: broken(a),
}
for s, fn in systems.items():
    with open(f"annotation/demo_data/outputs/{s}.tsv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["MR", "output"])
        for i, a in enumerate(mrs):
            w.writerow([format_mr(a), fn(a, i)])
