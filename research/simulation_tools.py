"""What the campaign simulator and the analyses beside it (online_calibration, best_design,
cross_hit_scores) share, without Django: the ratings file and criterion on their command
lines, and where a curve reaches a level."""

import argparse
from pathlib import Path


def ratings_parser(doc: str) -> argparse.ArgumentParser:
    """A parser described by `doc`'s first paragraph, taking --ratings FILE (the E2E
    CrowdFlower format that `import_ratings` reads) and --criterion."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--ratings", type=Path, required=True)
    parser.add_argument("--criterion", choices=["quality", "naturalness"], required=True)
    return parser


def hits_for(level: float, curve: list[tuple[float, float]]) -> float | None:
    """The HITs at which a rising (HITs, value) curve first reaches `level`, between points
    by linear interpolation; None if it never does."""
    previous = None
    for hits, value in curve:
        if value >= level:
            if previous is None:
                return float(hits)
            (h0, v0), h1 = previous, hits
            return h0 + (level - v0) / (value - v0) * (h1 - h0)
        previous = (hits, value)
    return None
