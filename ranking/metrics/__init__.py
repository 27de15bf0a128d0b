"""Automatic metrics of systems' outputs: word overlap with the references (E2E Table 8
and chrF), slot errors of E2E MR outputs, and system-level correlation with human scores.

Django-free, like `ranking.engine`: texts and lists in, numbers out.
`ranking.automatic_metrics.service` loads a campaign's outputs and references and stores
the results.
"""

from .correlation import Correlation, correlate
from .slots import SlotCheck, SlotErrors, check_output, slot_errors
from .wordoverlap import TABLE_8, WORD_OVERLAP, WordOverlap, normalised_average, score_systems

__all__ = [
    "TABLE_8",
    "WORD_OVERLAP",
    "Correlation",
    "SlotCheck",
    "SlotErrors",
    "WordOverlap",
    "check_output",
    "correlate",
    "normalised_average",
    "score_systems",
    "slot_errors",
]
