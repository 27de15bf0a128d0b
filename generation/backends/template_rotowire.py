"""The RotoWire templated baseline of Wiseman, Shieber and Rush (EMNLP 2017).

"Challenges in Data-to-Document Generation": a team sentence, one sentence for each of the
six highest-scoring players, and a fixed closing sentence.

Where the wording comes from: the authors' own implementation, rulebased.py in the
harvardnlp/data2text repository (read through the code search; the paper's PDF itself was
not reachable from here). It has
    "The %s ( %d - %d ) defeated the %s ( %d - %d ) %d - %d ."
    "%s scored %d points ( %d - %d FG , %d - %d 3Pt , %d - %d FT ) to go with %d rebounds ."
    "The %s ' next game will be at home against the Dallas Mavericks , while the %s will
     travel to play the Bulls ."
in tokenised form. We write them detokenised, with "3PT" as the paper prints it. The closing
sentence really does name the Mavericks and the Bulls whatever the game: it is the paper's
example of a typical last sentence, and the baseline copies it verbatim. Its two slots take
team names without the city; rulebased.py fills them with the visitor and then the home
team, and so do we. The team sentence uses city and name, winner first. Players are ranked
by points; those without a points figure (did not play) come last, as in rulebased.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TEAM_SENTENCE = (
    "The {winner} ({winner_wins}-{winner_losses}) defeated the {loser} "
    "({loser_wins}-{loser_losses}) {winner_pts}-{loser_pts}."
)
PLAYER_SENTENCE = (
    "{name} scored {PTS} points ({FGM}-{FGA} FG, {FG3M}-{FG3A} 3PT, {FTM}-{FTA} FT) "
    "to go with {REB} rebounds."
)
CLOSING_SENTENCE = (
    "The {visitor}' next game will be at home against the Dallas Mavericks, "
    "while the {home} will travel to play the Bulls."
)
PLAYERS_DESCRIBED = 6
PLAYER_STATS = ("PTS", "FGM", "FGA", "FG3M", "FG3A", "FTM", "FTA", "REB")


@dataclass(frozen=True)
class Team:
    city: str
    name: str
    wins: int
    losses: int
    pts: int

    @property
    def full_name(self) -> str:
        return f"{self.city} {self.name}".strip()


def parse_team(data: dict[str, Any]) -> Team:
    return Team(
        city=str(data.get("city", "")),
        name=str(data["name"]),
        wins=int(data["wins"]),
        losses=int(data["losses"]),
        pts=int(data["pts"]),
    )


def realise_boxscore(data: dict[str, Any]) -> str:
    home, visitor = parse_team(data["home"]), parse_team(data["visitor"])
    sentences = [team_sentence(home, visitor)]
    sentences += [player_sentence(p) for p in top_scorers(data.get("players", []))]
    sentences.append(CLOSING_SENTENCE.format(visitor=visitor.name, home=home.name))
    return " ".join(sentences)


def team_sentence(home: Team, visitor: Team) -> str:
    # NBA games cannot end level; rulebased.py credits the visitor unless home scored more.
    winner, loser = (home, visitor) if home.pts > visitor.pts else (visitor, home)
    return TEAM_SENTENCE.format(
        winner=winner.full_name,
        winner_wins=winner.wins,
        winner_losses=winner.losses,
        loser=loser.full_name,
        loser_wins=loser.wins,
        loser_losses=loser.losses,
        winner_pts=winner.pts,
        loser_pts=loser.pts,
    )


def top_scorers(players: list[dict[str, Any]], k: int = PLAYERS_DESCRIBED) -> list[dict]:
    """The k players with the most points; ties keep the input order (a stable sort)."""
    scorers = [p for p in players if _stat(p, "PTS") is not None]
    scorers.sort(key=lambda p: -(_stat(p, "PTS") or 0))
    return scorers[:k]


def player_sentence(player: dict[str, Any]) -> str:
    # A player who scored has every shooting figure in RotoWire; a gap in an edited input
    # reads as 0 rather than failing the whole summary.
    stats = {key: _stat(player, key) or 0 for key in PLAYER_STATS}
    return PLAYER_SENTENCE.format(name=player["name"], **stats)


def _stat(player: dict[str, Any], key: str) -> int | None:
    value = (player.get("stats") or {}).get(key)
    if value is None or value in ("", "N/A"):
        return None
    return int(value)
