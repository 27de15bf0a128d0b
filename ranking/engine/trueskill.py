"""Two-player TrueSkill update in closed form, compiled with numba.

The reference is `trueskill.TrueSkill(...).rate_1vs1` (package version 0.4.5). That package
runs a factor graph; for two players it reduces to the closed form below (Herbrich et al.
2006, eq. for v and w), and the two agree to rounding.

Two kinds of math are offered:

- ``backend="package"`` mirrors the package's default backend formula by formula: its erfc is
  the Numerical Recipes polynomial (about 1e-7 accurate), and cdf, pdf and the inverse cdf
  (for the draw margin) are built on it the way `trueskill/backends.py` builds them. The
  published E2E and WMT results were computed with that default, so this is the default here.
- ``backend="exact"`` uses `math.erfc` and an accurate inverse normal cdf; it agrees with
  ``TrueSkill(backend="scipy")`` and ``TrueSkill(backend="mpmath")``.

Ratings live in two float64 arrays, ``mu`` and ``var`` (sigma squared), updated in place, so
the protocols can call `rate_1vs1` once per comparison inside compiled loops.
"""

import math
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Literal

import numba
import numpy as np

Backend = Literal["package", "exact"]

_SQRT2 = math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


@dataclass(frozen=True)
class TrueSkillParams:
    """TrueSkill constants; the defaults are the package's."""

    mu: float = 25.0
    sigma: float = 25.0 / 3
    beta: float = 25.0 / 6
    tau: float = 25.0 / 300
    draw_probability: float = 0.10
    backend: Backend = "package"

    def __post_init__(self) -> None:
        if self.backend not in ("package", "exact"):
            raise ValueError(f"unknown backend {self.backend!r}: use 'package' or 'exact'")
        if not 0 <= self.draw_probability < 1:
            raise ValueError("draw_probability must be in [0, 1)")

    @property
    def exact(self) -> bool:
        return self.backend == "exact"

    def draw_margin(self) -> float:
        """Draw margin for one player against one, as the package computes it."""
        p = (self.draw_probability + 1) / 2.0
        quantile = NormalDist().inv_cdf(p) if self.exact else package_ppf(p)
        return quantile * math.sqrt(2) * self.beta

    def with_backend(self, backend: Backend) -> "TrueSkillParams":
        return replace(self, backend=backend)


# Coefficients of the polynomial in t, innermost first.
_ERFC_COEFFS = (
    0.17087277,
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
)


@numba.njit(cache=True)
def package_erfc(x: float) -> float:
    """The package's erfc (Numerical Recipes erfcc): same operations in the same order."""
    z = abs(x)
    t = 1.0 / (1.0 + z / 2.0)
    acc = _ERFC_COEFFS[0]
    for coeff in _ERFC_COEFFS[1:]:
        acc = coeff + t * acc
    r = t * math.exp(-z * z - 1.26551223 + t * acc)
    return 2.0 - r if x < 0 else r


@numba.njit(cache=True)
def _package_erfcinv(y: float) -> float:
    # Initial guess plus two Newton steps on the package's own erfc, as backends.py does.
    if y >= 2:
        return -100.0
    if y <= 0:
        return 100.0
    zero_point = y < 1
    if not zero_point:
        y = 2 - y
    t = math.sqrt(-2 * math.log(y / 2.0))
    x = -0.70711 * ((2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t)
    for _ in range(2):
        err = package_erfc(x) - y
        x += err / (1.12837916709551257 * math.exp(-(x**2)) - x * err)
    return x if zero_point else -x


@numba.njit(cache=True)
def package_ppf(p: float) -> float:
    """The package's inverse normal cdf (used only for the draw margin)."""
    return -_SQRT2 * _package_erfcinv(2 * p)


@numba.njit(cache=True)
def cdf(x: float, exact: bool) -> float:
    if exact:
        return 0.5 * math.erfc(-x / _SQRT2)
    return 0.5 * package_erfc(-x / _SQRT2)


@numba.njit(cache=True)
def pdf(x: float) -> float:
    # Same formula in both backends; the package writes it as 1/sqrt(2 pi) * exp(-x^2 / 2).
    return _INV_SQRT_2PI * math.exp(-(x**2 / 2))


@numba.njit(cache=True)
def _v_win(diff: float, margin: float, exact: bool) -> float:
    x = diff - margin
    denom = cdf(x, exact)
    return pdf(x) / denom if denom != 0 else -x


@numba.njit(cache=True)
def _vw_draw(diff: float, margin: float, exact: bool) -> tuple[float, float]:
    # v and w of a draw in one pass; the package computes the same terms twice (its w_draw
    # calls v_draw(|diff|), which is |v|), with the same operations, so results are equal.
    abs_diff = abs(diff)
    a, b = margin - abs_diff, -margin - abs_diff
    denom = cdf(a, exact) - cdf(b, exact)
    if denom == 0:
        return a if diff >= 0 else -a, math.nan  # the package raises FloatingPointError
    pdf_a, pdf_b = pdf(a), pdf(b)
    v_abs = (pdf_b - pdf_a) / denom
    w = v_abs**2 + (a * pdf_a - b * pdf_b) / denom
    return (-v_abs if diff < 0 else v_abs), w


@numba.njit(cache=True)
def rate_1vs1(
    mu: np.ndarray,
    var: np.ndarray,
    winner: int,
    loser: int,
    drawn: bool,
    beta2: float,
    tau2: float,
    margin: float,
    exact: bool,
) -> bool:
    """Update ``mu`` and ``var`` of two players in place after one game.

    For a draw, ``winner`` and ``loser`` only name the two players. ``beta2`` and ``tau2``
    are beta and tau squared, ``margin`` comes from `TrueSkillParams.draw_margin`.
    Returns False where the package would raise FloatingPointError (the update is then
    not trustworthy: w outside (0, 1)); the ratings are updated anyway.
    """
    var_w = var[winner] + tau2
    var_l = var[loser] + tau2
    c2 = 2 * beta2 + var_w + var_l
    c = math.sqrt(c2)
    t = (mu[winner] - mu[loser]) / c
    eps = margin / c
    if drawn:
        v, w = _vw_draw(t, eps, exact)
    else:
        v = _v_win(t, eps, exact)
        x = t - eps  # the package's w_win: x first, then v * (v + x)
        w = v * (v + x)
    mu[winner] += var_w / c * v
    mu[loser] -= var_l / c * v
    var[winner] = var_w * (1 - var_w / c2 * w)
    var[loser] = var_l * (1 - var_l / c2 * w)
    if drawn:
        return not math.isnan(w)
    return 0 < w < 1
