from types import SimpleNamespace

from ranking.charts import LABEL_WIDTH, PLOT_WIDTH, interval_chart, nice_ticks, rank_chart


def test_nice_ticks_are_round_and_cover_the_range():
    assert nice_ticks(872.7, 1091.2) == [850, 900, 950, 1000, 1050, 1100]
    assert nice_ticks(-0.54, 0.33) == [-0.6, -0.4, -0.2, 0.0, 0.2, 0.4]
    assert nice_ticks(5.0, 5.0) == [5.0]  # no span: the one value


def test_interval_chart_places_each_interval_on_a_shared_axis():
    rows = [
        SimpleNamespace(system="a", mu=1050.0, ci_lo=1000.0, ci_hi=1100.0),
        SimpleNamespace(system="b", mu=950.0, ci_lo=900.0, ci_hi=1000.0),
    ]
    chart = interval_chart(rows, "ratings")
    a, b = chart.intervals
    assert (a.x_lo, a.x_hi, b.x_lo) == (b.x_hi, LABEL_WIDTH + PLOT_WIDTH, LABEL_WIDTH)
    assert a.x == (a.x_lo + a.x_hi) / 2 and a.y < b.y
    assert [tick.label for tick in chart.ticks] == ["900", "950", "1000", "1050", "1100"]
    assert chart.title == "ratings"


def test_rank_chart_says_what_its_ranges_are():
    rows = [SimpleNamespace(system="a", cluster=1, rank_lo=1, rank_hi=2)]
    assert rank_chart(rows, "positions of each cluster").title == "positions of each cluster"
