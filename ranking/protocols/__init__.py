"""The registry of ranking protocols: the views of a criterion's judgments that the sweep
computes, the results page shows, the CSV writes, bundles record and the datasheet
describes. Adding one is a module beside these whose `PROTOCOL` is its RankingProtocol (a
module of several names them in `VIEWS`, as trueskill.py): the registry imports every module
here and holds each one's."""

import importlib
import pkgutil

from .base import RankingProtocol

# The order of the results page's tabs (and of every list of views): these first, then any
# other view by name. The first is the default view (DEFAULT below).
FIRST = ("calibrated", "e2e", "bootstrap", "bt", "wmt", "bws", "webnlg", "fused")


def module_protocols() -> tuple[RankingProtocol, ...]:
    """The views of every module of this package (its VIEWS, or its PROTOCOL), in FIRST's
    order, then by name."""
    found: dict[str, RankingProtocol] = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        views = getattr(module, "VIEWS", None) or (getattr(module, "PROTOCOL", None),)
        found.update((view.name, view) for view in views if isinstance(view, RankingProtocol))
    order = [name for name in FIRST if name in found] + sorted(set(found) - set(FIRST))
    return tuple(found[name] for name in order)


REGISTERED: tuple[RankingProtocol, ...] = module_protocols()

PROTOCOLS: dict[str, RankingProtocol] = {protocol.name: protocol for protocol in REGISTERED}
NAMES: list[str] = list(PROTOCOLS)
CHOICES: list[tuple[str, str]] = [(protocol.name, protocol.label) for protocol in REGISTERED]
# The view a results page, the API, the CSV and the rank command open on, and the one whose
# clusters may close a criterion when they stay the same (ranking.service's
# note_cluster_stability) and whose claims the forecast reads: the calibrated verdict.
DEFAULT = FIRST[0]
STABILITY_PROTOCOL = FIRST[0]


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
