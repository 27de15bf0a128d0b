import math

import numpy as np
import pytest
import trueskill
from trueskill import backends

from ranking.engine.trueskill import TrueSkillParams, package_erfc, package_ppf, rate_1vs1

E2E = TrueSkillParams(mu=0.0, sigma=0.5, beta=0.5 * 29791 / 40, tau=0.0, draw_probability=0.25)
SETTINGS = {
    "e2e": E2E,
    "package-defaults": TrueSkillParams(),
    "tau-and-draws": TrueSkillParams(mu=0.0, sigma=1.0, beta=0.5, tau=0.05, draw_probability=0.4),
    "no-draws": TrueSkillParams(mu=100.0, sigma=30.0, beta=15.0, tau=1.0, draw_probability=0.0),
}


def _random_games(n_players: int, n_games: int, seed: int, draw_rate: float):
    """A long random sequence of wins and draws, mostly won by the stronger player so that
    ratings spread out (upsets far in the tail would make the package raise)."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(size=n_players)
    for _ in range(n_games):
        a, b = rng.choice(n_players, size=2, replace=False)
        drawn = rng.random() < draw_rate
        if not drawn and rng.random() > 1 / (1 + math.exp(strength[b] - strength[a])):
            a, b = b, a
        yield int(a), int(b), drawn


def _compare_with_package(params: TrueSkillParams, env: trueskill.TrueSkill, n_games: int):
    n = 8
    mu, var = np.full(n, params.mu), np.full(n, params.sigma**2)
    ratings = [env.create_rating() for _ in range(n)]
    beta2, tau2, margin = params.beta**2, params.tau**2, params.draw_margin()
    draw_rate = 0.3 if params.draw_probability > 0 else 0.0
    for a, b, drawn in _random_games(n, n_games, seed=7, draw_rate=draw_rate):
        ratings[a], ratings[b] = trueskill.rate_1vs1(ratings[a], ratings[b], drawn, env=env)
        assert rate_1vs1(mu, var, a, b, drawn, beta2, tau2, margin, params.exact)
    np.testing.assert_allclose(mu, [r.mu for r in ratings], rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.sqrt(var), [r.sigma for r in ratings], rtol=0, atol=1e-9)


def _env(params: TrueSkillParams, backend: str | None) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(
        params.mu, params.sigma, params.beta, params.tau, params.draw_probability, backend=backend
    )


@pytest.mark.parametrize("name", SETTINGS)
def test_rate_1vs1_matches_package_default_backend(name):
    params = SETTINGS[name]
    _compare_with_package(params, _env(params, None), n_games=3000)


@pytest.mark.parametrize("name", SETTINGS)
def test_rate_1vs1_exact_matches_package_scipy_backend(name):
    pytest.importorskip("scipy", reason="the package's scipy backend needs scipy")
    params = SETTINGS[name].with_backend("exact")
    _compare_with_package(params, _env(params, "scipy"), n_games=800)


def test_rate_1vs1_exact_matches_package_mpmath_backend():
    pytest.importorskip("mpmath", reason="the package's mpmath backend needs mpmath")
    params = SETTINGS["tau-and-draws"].with_backend("exact")
    _compare_with_package(params, _env(params, "mpmath"), n_games=300)


def test_rate_1vs1_package_and_exact_math_differ():
    # Guards against both backends silently running the same code.
    mu1, var1 = np.array([0.0, 0.3]), np.array([1.0, 1.0])
    mu2, var2 = mu1.copy(), var1.copy()
    rate_1vs1(mu1, var1, 0, 1, False, 0.25, 0.0, 0.1, False)
    rate_1vs1(mu2, var2, 0, 1, False, 0.25, 0.0, 0.1, True)
    assert 0 < abs(mu1[0] - mu2[0]) < 1e-6


def test_package_erfc_equals_package_formula():
    for x in np.linspace(-6, 6, 241):
        assert package_erfc(x) == backends.erfc(x)
        assert abs(package_erfc(x) - math.erfc(x)) < 2e-7


def test_draw_margin_matches_package():
    for params in SETTINGS.values():
        p = params.draw_probability
        assert params.draw_margin() == trueskill.calc_draw_margin(p, 2, _env(params, None))
        assert package_ppf((p + 1) / 2) == backends.ppf((p + 1) / 2)


def test_draw_margin_exact_matches_mpmath():
    pytest.importorskip("mpmath", reason="the package's mpmath backend needs mpmath")
    for params in SETTINGS.values():
        expected = trueskill.calc_draw_margin(params.draw_probability, 2, _env(params, "mpmath"))
        assert params.with_backend("exact").draw_margin() == pytest.approx(
            float(expected), abs=1e-12
        )


def test_trueskill_params_reject_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend 'scipy': use 'package' or 'exact'"):
        TrueSkillParams(backend="scipy")
