"""One typed input of each kind, as the platform stores them, for the backend tests."""

from __future__ import annotations

from generation.backends import TypedInput


def make_mr(**overrides: str) -> TypedInput:
    attributes = {
        "name": "The Vaults",
        "eatType": "pub",
        "priceRange": "more than £30",
        "customer rating": "5 out of 5",
        "near": "Café Adriatic",
    }
    attributes.update(overrides)
    pairs = [[key, value] for key, value in attributes.items() if value is not None]
    return TypedInput("mr", {"attributes": pairs})


def make_table(highlighted: list[list[int]] | None = None) -> TypedInput:
    return TypedInput(
        "table",
        {
            "title": "1998 NFL draft",
            "header": ["round", "pick", "player", "position", "college"],
            "rows": [
                ["1", "1", "Peyton Manning", "quarterback", "Tennessee"],
                ["1", "2", "Ryan Leaf", "quarterback", "Washington State"],
                ["1", "3", "Andre Wadsworth", "defensive end", "Florida State"],
            ],
            "highlighted": [[0, 2], [0, 4], [1, 1]] if highlighted is None else highlighted,
        },
    )


def _player(name: str, team: str, pts: int, reb: int = 5, **stats: int) -> dict:
    figures = {"MIN": 30, "PTS": pts, "REB": reb, "AST": 3, "FGM": pts // 3, "FGA": pts // 2}
    figures.update({"FG3M": 1, "FG3A": 3, "FTM": 2, "FTA": 2})
    figures.update(stats)
    return {"name": name, "team": team, "stats": figures}


def make_boxscore() -> TypedInput:
    line = {"PTS_QTR1": 25, "PTS_QTR2": 27, "PTS_QTR3": 26, "PTS_QTR4": 20}
    players = [
        _player("Isaiah Thomas", "home", 30, FGM=10, FGA=20, FG3M=3, FG3A=8, FTM=7, FTA=8),
        _player("Avery Bradley", "home", 12),
        _player("Jae Crowder", "home", 15),
        {"name": "Tyler Zeller", "team": "home", "stats": {k: "N/A" for k in ("PTS", "REB")}},
        _player("Kemba Walker", "visitor", 28, reb=3),
        _player("Nicolas Batum", "visitor", 15, reb=9),
        _player("Marvin Williams", "visitor", 9),
        _player("Cody Zeller", "visitor", 4),
        {"name": "Jeremy Lamb", "team": "visitor", "stats": {}},
    ]
    return TypedInput(
        "boxscore",
        {
            "home": {"city": "Boston", "name": "Celtics", "wins": 20, "losses": 10, "pts": 98,
                     "line": line},
            "visitor": {"city": "Charlotte", "name": "Hornets", "wins": 15, "losses": 16,
                        "pts": 105, "line": line},
            "players": players,
        },
    )  # fmt: skip


def make_triples() -> TypedInput:
    return TypedInput(
        "triples",
        {
            "triples": [
                ["Alan_Bean", "occupation", "Test_pilot"],
                ["Apollo_12", "crewMembers", "Alan_Bean"],
                ["Alan_Bean", "birthPlace", "Wheeler,_Texas"],
                ["Wheeler,_Texas", "isPartOf", "Texas"],
            ]
        },
    )


def make_document() -> TypedInput:
    return TypedInput(
        "document",
        {"title": "Alan Bean", "text": "Alan LaVern Bean (born March 15, 1932) was ...",
         "question": "date of birth"},
    )  # fmt: skip


def make_one_of_each() -> list[TypedInput]:
    return [make_mr(), make_table(), make_boxscore(), make_triples(), make_document()]
