"""The registry of ranking protocols: the views of a criterion's judgments that the sweep
computes, the results page shows, the CSV writes, bundles record and the datasheet
describes. Adding one is a module beside these and a line in REGISTERED."""

from . import best_worst, bradley_terry, calibrated, fused, trueskill, webnlg, wmt
from .base import RankingProtocol

REGISTERED: tuple[RankingProtocol, ...] = (
    calibrated.PROTOCOL,
    trueskill.E2E,
    trueskill.BOOTSTRAP,
    bradley_terry.PROTOCOL,
    wmt.PROTOCOL,
    best_worst.PROTOCOL,
    webnlg.PROTOCOL,
    fused.PROTOCOL,
)

PROTOCOLS: dict[str, RankingProtocol] = {protocol.name: protocol for protocol in REGISTERED}
NAMES: list[str] = list(PROTOCOLS)
CHOICES: list[tuple[str, str]] = [(protocol.name, protocol.label) for protocol in REGISTERED]
# The view a results page, the API, the CSV and the rank command open on, and the one whose
# clusters may close a criterion when they stay the same (ranking.service's
# note_cluster_stability) and whose claims the forecast reads: the calibrated verdict.
DEFAULT = calibrated.PROTOCOL.name
STABILITY_PROTOCOL = calibrated.PROTOCOL.name


def protocol_named(name: str) -> RankingProtocol:
    """The protocol called `name`; ValueError naming the known ones for any other."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}: use one of {', '.join(NAMES)}") from None


__all__ = [
    "CHOICES",
    "DEFAULT",
    "NAMES",
    "PROTOCOLS",
    "REGISTERED",
    "STABILITY_PROTOCOL",
    "RankingProtocol",
    "protocol_named",
]
