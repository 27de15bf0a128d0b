"""Per-annotator z-scores with explicit choices (ranking/engine/zscores.py): the WebNLG+ 2020
preset against a plain pandas/scipy computation, the WMT preset against today's wmt view."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ranksums, zscore

from ranking.engine import Judgments, wmt_protocol
from ranking.engine.zscores import (
    WEBNLG,
    WMT,
    Normalisation,
    standardise,
    webnlg_ranks,
    webnlg_view,
    zscore_view,
)
from tests.ranking.engine.test_wmt import known_order_hits, quality_judgments

SYSTEMS = ["WebNLG-2020-reference", "Amazon_AI_(Shanghai)", "bt5", "NILC", "UPC-POE"]
STRENGTH = {"WebNLG-2020-reference": 92, "Amazon_AI_(Shanghai)": 91, "bt5": 88, "NILC": 74,
            "UPC-POE": 70}  # fmt: skip
CRITERIA = ["correctness", "fluency"]
ITEMS = 14
CONSTANT = "w_constant"
MISSING = ("UPC-POE", 3)  # this system has no output for item 3


def webnlg_shaped_ratings(seed: int = 7) -> pd.DataFrame:
    """Long ratings as WebNLG+ 2020 collected them: every (item, system) rated on each
    criterion by three of five annotators (a 0-100 slider, whole numbers), one annotator
    giving 80 to everything, one system lacking an item."""
    rng = np.random.default_rng(seed)
    annotators = ["w1", "w2", "w3", "w4", CONSTANT]
    bias = {"w1": 0.0, "w2": -8.0, "w3": 5.0, "w4": -3.0, CONSTANT: 0.0}
    rows = []
    for item in range(ITEMS):
        for system in SYSTEMS:
            if (system, item) == MISSING:
                continue
            for annotator in rng.choice(annotators, size=3, replace=False):
                for offset, criterion in enumerate(CRITERIA):
                    mean = STRENGTH[system] + bias[annotator] - 4 * offset
                    score = 80 if annotator == CONSTANT else np.clip(rng.normal(mean, 9), 0, 100)
                    rows.append((str(item), system, annotator, criterion, float(round(score))))
    return pd.DataFrame(rows, columns=["item", "system", "annotator", "criterion", "score"])


def expected_by_pandas(ratings: pd.DataFrame) -> pd.DataFrame:
    """The organisers' procedure written plainly: z per annotator and criterion (ddof=0,
    NaN from constant scores set to 0), means per (item, system), then per system; ranks as
    their notebook's rank_systems gives them, from scipy's ranksums at p < 0.05."""
    ratings = ratings.copy()
    by_annotator = ratings.groupby(["criterion", "annotator"])["score"]
    with warnings.catch_warnings():  # scipy warns of the constant annotator's 0 / 0
        warnings.simplefilter("ignore")
        ratings["z"] = by_annotator.transform(lambda s: zscore(s.to_numpy(), ddof=0))
    ratings["z"] = ratings["z"].fillna(0.0)
    per_item = ratings.groupby(["criterion", "system", "item"])[["score", "z"]].mean()
    tables = []
    for criterion in CRITERIA:
        items = per_item.loc[criterion]
        z = {system: items.loc[system, "z"].to_numpy() for system in SYSTEMS}
        means = items.groupby("system").mean()
        ranked = sorted(SYSTEMS, key=lambda s: means.loc[s, "z"], reverse=True)
        rank = {system: 1 for system in ranked}
        for i, a in enumerate(ranked):
            for j, b in enumerate(ranked[i + 1 :], start=i + 1):
                if ranksums(z[a], z[b]).pvalue < 0.05:
                    rank[b] = rank[a] + 1
                elif rank[b] < rank[ranked[j - 1]]:
                    rank[b] = rank[ranked[j - 1]]
        tables.append(
            pd.DataFrame(
                {
                    "criterion": criterion,
                    "system": ranked,
                    "mean_raw": [means.loc[s, "score"] for s in ranked],
                    "mean_z": [means.loc[s, "z"] for s in ranked],
                    "cluster": [rank[s] for s in ranked],
                    "items": [len(z[s]) for s in ranked],
                }
            )
        )
    return pd.concat(tables, ignore_index=True)


def judgments_of(ratings: pd.DataFrame, criterion: str) -> Judgments:
    rows = ratings[ratings["criterion"] == criterion]
    annotators = {name: i for i, name in enumerate(sorted(rows["annotator"].unique()))}
    return Judgments(
        system=rows["system"].map(SYSTEMS.index).to_numpy(),
        annotator=rows["annotator"].map(annotators).to_numpy(),
        score=rows["score"].to_numpy(),
        item=rows["item"].astype(int).to_numpy(),
    )


def test_webnlg_view_matches_a_pandas_computation_of_the_organisers_procedure():
    ratings = webnlg_shaped_ratings()
    expected = expected_by_pandas(ratings)
    assert expected["cluster"].nunique() >= 3  # the case has clusters to get right
    for criterion in CRITERIA:
        ranking = webnlg_view(judgments_of(ratings, criterion), len(SYSTEMS))
        want = expected[expected["criterion"] == criterion]
        assert [SYSTEMS[s] for s in ranking.order] == want["system"].tolist()
        got = want["system"].map(SYSTEMS.index).to_numpy()
        np.testing.assert_allclose(ranking.mean_raw[got], want["mean_raw"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(ranking.mean_z[got], want["mean_z"], rtol=0, atol=1e-9)
        assert ranking.cluster[got].tolist() == want["cluster"].tolist()
        assert ranking.n_items[got].tolist() == want["items"].tolist()
        assert ranking.left_out == 0 and ranking.items_known


def test_webnlg_view_keeps_the_constant_annotator_at_z_zero_and_the_missing_item_out():
    ratings = webnlg_shaped_ratings()
    judgments = judgments_of(ratings, "correctness")
    z = standardise(judgments, ddof=0, constant="zero")
    constant = (ratings[ratings["criterion"] == "correctness"]["annotator"] == CONSTANT).to_numpy()
    assert constant.any() and (z[constant] == 0.0).all()
    ranking = webnlg_view(judgments, len(SYSTEMS))
    missing = SYSTEMS.index(MISSING[0])
    assert ranking.n_items[missing] == ITEMS - 1 and ranking.n_items[0] == ITEMS
    assert ranking.n_judgments[missing] == 3 * (ITEMS - 1)


def test_rank_ranges_are_the_positions_of_each_cluster():
    ranking = webnlg_view(judgments_of(webnlg_shaped_ratings(), "correctness"), len(SYSTEMS))
    positions = {int(s): p for p, s in enumerate(ranking.order, start=1)}
    for s in ranking.order:
        same = [
            positions[int(t)] for t in ranking.order if ranking.cluster[t] == ranking.cluster[s]
        ]
        assert (ranking.rank_lo[s], ranking.rank_hi[s]) == (min(same), max(same))


def test_standardise_by_hand_population_and_sample():
    judgments = Judgments(
        system=[0, 1, 2, 0, 1, 2], annotator=[7, 7, 7, 8, 8, 9], score=[50, 100, 150, 10, 30, 80]
    )
    population = math.sqrt(5000 / 3)
    assert standardise(judgments, ddof=0, constant="zero").tolist() == pytest.approx(
        [-50 / population, 0, 50 / population, -1, 1, 0]
    )
    sample = standardise(judgments, ddof=1, constant="leave_out")
    assert sample[:5].tolist() == pytest.approx([-1, 0, 1, -1 / math.sqrt(2), 1 / math.sqrt(2)])
    assert np.isnan(sample[5])


def test_without_items_each_judgment_is_its_own_item():
    judgments = Judgments(system=[0, 0, 1, 1], annotator=[1, 2, 1, 2], score=[90, 70, 60, 40])
    ranking = webnlg_view(judgments, 2)
    assert not ranking.items_known and ranking.n_items.tolist() == [2, 2]
    assert ranking.mean_z.tolist() == [1.0, -1.0] and ranking.mean_raw.tolist() == [80.0, 50.0]


def test_all_equal_scores_are_one_cluster_over_every_position():
    judgments = Judgments(system=[0, 1, 2] * 4, annotator=[0, 0, 0, 1, 1, 1] * 2, score=[60.0] * 12)
    ranking = webnlg_view(judgments, 3)
    assert ranking.mean_z.tolist() == [0.0, 0.0, 0.0] and ranking.cluster.tolist() == [1, 1, 1]
    assert (ranking.rank_lo.tolist(), ranking.rank_hi.tolist()) == ([1, 1, 1], [3, 3, 3])


def test_a_system_without_judgments_gets_no_place():
    judgments = Judgments(system=[0, 1, 0, 1], annotator=[0, 0, 1, 1], score=[9.0, 1.0, 8.0, 2.0])
    ranking = webnlg_view(judgments, 3)
    assert ranking.order.tolist() == [0, 1] and ranking.cluster[2] == 0
    assert np.isnan(ranking.mean_z[2]) and ranking.n_items[2] == 0


def test_webnlg_ranks_follow_the_notebook_on_a_chain_of_differences():
    # A differs from C only: A 1, B 1, C 2 (the notebook's rule: C below A's rank).
    different = {(0, 2)}
    assert webnlg_ranks(3, lambda a, b: (a, b) in different).tolist() == [1, 1, 2]
    # B differs from C, A from nobody: C is one below B.
    assert webnlg_ranks(3, lambda a, b: (a, b) == (1, 2)).tolist() == [1, 1, 2]
    assert webnlg_ranks(4, lambda a, b: True).tolist() == [1, 2, 3, 4]


def test_the_wmt_preset_is_todays_wmt_view():
    systems, scores = known_order_hits()
    annotators = np.arange(len(scores)) % 5
    for judgments in (
        Judgments.from_hits(systems, scores, annotators),
        Judgments.from_hits(systems, scores, np.arange(len(scores))),
    ):
        assert_same_as_wmt(judgments, 4)


def test_the_wmt_preset_is_todays_wmt_view_on_e2e_quality():
    names, judgments = quality_judgments()
    assert_same_as_wmt(judgments, len(names))


def assert_same_as_wmt(judgments: Judgments, n: int) -> None:
    today, preset = wmt_protocol(judgments, n), zscore_view(judgments, n, WMT)
    # The same sums in another order: equal up to rounding.
    np.testing.assert_allclose(preset.mean_z, today.mean_z, rtol=0, atol=1e-12)
    np.testing.assert_allclose(preset.mean_raw, today.mean_raw, rtol=0, atol=1e-9)
    for name in ("order", "cluster", "rank_lo", "rank_hi", "n_judgments", "left_out"):
        assert np.array_equal(getattr(preset, name), getattr(today, name)), name


def test_the_choices_are_said_in_words():
    text = WEBNLG.describe()
    for words in ("WebNLG+ 2020", "population (ddof=0)", "gets z = 0", "per item and system",
                  "two-sided Wilcoxon rank-sum", "p < 0.05"):  # fmt: skip
        assert words in text, words
    assert "sample (ddof=1)" in WMT.describe() and "left out" in WMT.describe()
    custom = Normalisation("mine", 0, "zero", False, "mannwhitneyu_greater", "wmt")
    assert "mean z over its judgments" in custom.describe()


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(2, 4), st.integers(3, 12), st.data())
def test_systems_judged_alike_item_by_item_share_one_cluster(n, items, data):
    # Every item's outputs judged by one annotator, each system given the same score on
    # it as every other: nothing tells the systems apart.
    scores = [data.draw(st.integers(0, 100)) for _ in range(items)]
    judgments = Judgments(
        system=np.tile(np.arange(n), items),
        annotator=np.repeat(np.arange(items) % 3, n),
        score=np.repeat(scores, n).astype(float),
        item=np.repeat(np.arange(items), n),
    )
    ranking = webnlg_view(judgments, n)
    assert ranking.cluster.tolist() == [1] * n
    assert (ranking.rank_lo.tolist(), ranking.rank_hi.tolist()) == ([1] * n, [n] * n)
