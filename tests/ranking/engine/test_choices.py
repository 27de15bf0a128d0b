"""Pairwise and best-worst-of-k judgments (ranking/engine/choices.py): their validity, the
comparisons they imply, and their best-worst scores with ANOVA and Tukey's HSD
(ranking/engine/best_worst.py: best_worst_choices)."""

import warnings

import numpy as np
import pytest
from scipy.stats import f_oneway, tukey_hsd

from ranking.engine import Judgments
from ranking.engine.best_worst import best_worst_choices
from ranking.engine.choices import NONE, Choices, comparisons_from_choices
from ranking.protocols import protocol_named


def choices(rows, items=None, annotators=None) -> Choices:
    """From (shown, best, worst) rows; shorter rows padded with NONE."""
    width = max(len(shown) for shown, _, _ in rows)
    shown = [list(s) + [NONE] * (width - len(s)) for s, _, _ in rows]
    n = len(rows)
    return Choices(
        judgment=np.arange(n),
        item=np.arange(n) if items is None else items,
        annotator=np.zeros(n) if annotators is None else annotators,
        shown=shown,
        best=[b for _, b, _ in rows],
        worst=[w for _, _, w in rows],
    )


def test_from_pairwise_winner_best_loser_worst_tie_neither():
    made = Choices.from_pairwise(
        [5, 6, 7], [1, 1, 2], [0, 0, 0], [0, 1, 2], [1, 2, 0], ["a", "b", "tie"]
    )
    assert made.shown.tolist() == [[0, 1], [1, 2], [2, 0]]
    assert made.best.tolist() == [0, 2, NONE] and made.worst.tolist() == [1, 1, NONE]
    with pytest.raises(ValueError, match="winner must be"):
        Choices.from_pairwise([1], [1], [1], [0], [1], ["left"])


def test_valid_judgments():
    made = choices(
        [
            ([0, 1], 0, 1),  # a preference
            ([0, 1], NONE, NONE),  # a tie
            ([0, 1, 2, 3], 2, 0),  # best-worst of 4
            ([0, 1, NONE], 1, 0),  # two of three slots used
            ([0, 0], 0, 0),  # the same system twice
            ([0, 1, 2], 0, 0),  # best and worst the same
            ([0, 1, 2], 3, 0),  # best not shown
            ([0, 1, 2], 0, NONE),  # worst missing
            ([0, NONE], NONE, NONE),  # one system
        ]
    )
    assert made.valid().tolist() == [True, True, True, True, False, False, False, False, False]


def test_comparisons_of_pairwise_judgments_one_each_a_tie_a_draw():
    made = Choices.from_pairwise(
        [1, 2, 3], [1, 1, 1], [0, 0, 0], [0, 1, 2], [1, 2, 0], ["a", "b", "tie"]
    )
    found = comparisons_from_choices(made)
    assert found.winner.tolist() == [0, 2, 2] and found.loser.tolist() == [1, 1, 0]
    assert found.draw.tolist() == [False, False, True]


def test_comparisons_of_best_worst_of_k_say_nothing_between_the_middle_ones():
    made = choices([([3, 1, 4, 2], 4, 3), ([0, 1], 1, 0), ([5, 6, 7], 6, 6)])
    found = comparisons_from_choices(made)
    pairs = list(zip(found.winner.tolist(), found.loser.tolist(), found.draw.tolist(), strict=True))
    # Best 4 beats 3, 1, 2; the middle 1 and 2 beat the worst 3; 1 and 2 are not compared.
    # Then the pairwise judgment; the invalid third (best = worst) gives nothing.
    assert pairs == [(4, 3, False), (4, 1, False), (4, 2, False), (1, 3, False), (2, 3, False),
                     (1, 0, False)]  # fmt: skip


def test_best_worst_of_k_all_alike_is_a_draw_between_every_two():
    found = comparisons_from_choices(choices([([0, 1, 2], NONE, NONE)]))
    assert found.draw.all() and len(found) == 3


def test_scores_are_100_times_best_minus_worst_over_times_shown_ties_neither():
    made = choices(
        [([0, 1], 0, 1), ([0, 1], NONE, NONE), ([0, 1, 2], 2, 1), ([1, 2], 2, 1), ([0, 0], 0, 0)]
    )
    ranking = best_worst_choices(made, 4)
    assert ranking.n_judgments.tolist() == [3, 4, 2, 0]
    assert ranking.best.tolist() == [1, 0, 2, 0] and ranking.worst.tolist() == [0, 3, 0, 0]
    assert ranking.score[:3].tolist() == [100 / 3, -75.0, 100.0] and np.isnan(ranking.score[3])
    assert ranking.order.tolist() == [2, 0, 1] and ranking.cluster[3] == 0
    assert ranking.invalid == 1


def rotowire_like(seed: int) -> tuple[Choices, list[np.ndarray]]:
    """Best-worst of 4 over 40 items, each item judged by 3 annotators, systems of different
    strengths; with the per-item scores computed plainly, item by item."""
    rng = np.random.default_rng(seed)
    strength = np.array([1.5, 1.0, 0.9, 0.0, -0.2])
    rows, items = [], []
    for item in range(40):
        shown = rng.permutation(5)[:4]
        for _ in range(3):
            noisy = strength[shown] + rng.normal(0, 1, 4)
            rows.append((shown.tolist(), int(shown[noisy.argmax()]), int(shown[noisy.argmin()])))
            items.append(item)
    per_item: list[list[float]] = [[] for _ in range(5)]
    for item in sorted(set(items)):
        judged = [row for row, i in zip(rows, items, strict=True) if i == item]
        for system in judged[0][0]:
            best = sum(b == system for _, b, _ in judged)
            worst = sum(w == system for _, _, w in judged)
            per_item[system].append(100 * (best - worst) / len(judged))
    return choices(rows, items=np.array(items)), [np.array(v) for v in per_item]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_significance_is_anova_then_tukey_over_per_item_scores_as_scipy_computes_it(seed):
    made, groups = rotowire_like(seed)
    ranking = best_worst_choices(made, 5)
    anova = f_oneway(*groups).pvalue
    p = tukey_hsd(*groups).pvalue
    means = [g.mean() for g in groups]

    def better(a, b):
        return anova < 0.05 and means[a] > means[b] and p[a, b] < 0.05

    order = ranking.order.tolist()
    for position, upper in enumerate(order):
        below = order[position + 1 :]
        if below:
            ends = all(better(upper, lower) for lower in below)
            assert ranking.cluster[below[0]] - ranking.cluster[upper] == int(ends)
        assert ranking.rank_lo[upper] == 1 + sum(better(t, upper) for t in range(5))
        assert ranking.rank_hi[upper] == 5 - sum(better(upper, t) for t in range(5))
    assert anova < 0.05 and ranking.cluster.max() >= 2  # the case has differences to find


def test_all_ties_are_one_cluster_spanning_every_rank():
    made = choices([([0, 1, 2], NONE, NONE)] * 10 + [([1, 2], NONE, NONE)] * 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's warnings on constant groups are handled
        ranking = best_worst_choices(made, 3)
    assert ranking.cluster.tolist() == [1, 1, 1]
    assert (ranking.rank_lo.tolist(), ranking.rank_hi.tolist()) == ([1, 1, 1], [3, 3, 3])


def test_a_system_chosen_best_every_time_stands_alone_at_the_top():
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(40):
        others = rng.permutation([1, 2, 3, 4])[:3]
        rows.append(([0, *others.tolist()], 0, int(others[rng.integers(3)])))
    ranking = best_worst_choices(choices(rows), 5)
    assert (ranking.rank_lo[0], ranking.rank_hi[0]) == (1, 1)
    assert ranking.cluster[0] == 1 and (ranking.cluster[1:] > 1).all()


def test_exchangeable_systems_share_a_cluster():
    # Every relabelling of two systems: each wins as often as it loses, on every item.
    rows = [([0, 1], 0, 1), ([0, 1], 1, 0)] * 20
    ranking = best_worst_choices(choices(rows, items=np.repeat(np.arange(20), 2)), 2)
    assert ranking.cluster.tolist() == [1, 1] and ranking.score.tolist() == [0.0, 0.0]
    assert (ranking.rank_lo.tolist(), ranking.rank_hi.tolist()) == ([1, 1], [2, 2])


def test_the_bws_protocol_ranks_choices_where_the_judgments_carry_them():
    made, _ = rotowire_like(1)
    view = protocol_named("bws")
    comparisons = comparisons_from_choices(made)
    ranking = view.rank(comparisons, 5, Judgments.of_choices(made), 10, 0, None)
    expected = best_worst_choices(made, 5)
    assert ranking.order.tolist() == expected.order.tolist()
    assert ranking.score.tolist() == expected.score.tolist()
    assert view.note(ranking) == ""
    # The score views have nothing to rank in such judgments.
    for name in ("wmt", "webnlg"):
        scores = protocol_named(name)
        ranked = scores.rank(comparisons, 5, Judgments.of_choices(made), 10, 0, None)
        assert scores.nothing_to_rank(ranked), name
