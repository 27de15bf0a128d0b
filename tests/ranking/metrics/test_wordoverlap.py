import pytest

from ranking.metrics import coco, normalised_average, score_systems

needs_java = pytest.mark.skipif(
    coco.java_missing() is not None, reason=f"no Java here: {coco.java_missing()}"
)

REFERENCES = {
    1: ["The Mill is a pub by the river.", "There is a riverside pub called The Mill."],
    2: ["Zizzi is a cheap coffee shop.", "Zizzi, a coffee shop, is cheap."],
    3: ["Blue Spice serves French food in the city centre."],
    4: [],  # an item without references is not scored
}


def test_normalised_average_is_table_8s():
    tgen = {"bleu": 0.6593, "nist": 8.6094, "meteor": 0.4483, "rouge_l": 0.6850, "cider": 2.2338}
    assert normalised_average(tgen) == pytest.approx(0.5754, abs=5e-5)
    assert normalised_average({"bleu": 0.5}) is None


def test_score_systems_without_java_says_which_metrics_are_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without Java
    reports = []
    result = score_systems(
        REFERENCES,
        {"copy": {k: refs[0] for k, refs in REFERENCES.items() if refs}},
        progress=lambda done, total: reports.append((done, total)),
    )
    assert reports == [(1, 1)]
    assert set(result.missing) == {"meteor", "rouge_l", "cider", "normalised_average"}
    assert "needs Java" in result.missing["meteor"]
    assert result.scores["copy"] == {
        "bleu": pytest.approx(1.0),
        "nist": pytest.approx(result.scores["copy"]["nist"]),
        "chrf": pytest.approx(1.0),
    }


@needs_java
def test_ptb_tokenize_lowercases_drops_punctuation_and_keeps_lines():
    texts = ["The Mill, a pub.", "Two\nlines", "", "Café: £20-25!", "It\u2028isn't"]
    # PTB writes the pound sign as "#", as the E2E scores were computed.
    assert coco.ptb_tokenize(texts) == [
        "the mill a pub",
        "two lines",
        "",
        "café # 20-25",
        "it is n't",
    ]


@needs_java
def test_score_systems_scores_each_system_on_its_items():
    outputs = {
        "copy": {1: REFERENCES[1][0], 2: REFERENCES[2][0], 3: REFERENCES[3][0], 4: "No refs."},
        "other": {1: "A pub.", 2: "Zizzi is a pub in the city centre.", 3: "French food."},
        "partial": {1: REFERENCES[1][1]},
        "none": {4: "Only an item without references."},
    }
    reports = []
    result = score_systems(REFERENCES, outputs, progress=lambda *report: reports.append(report))
    # A system is done once METEOR, in its own thread, has scored it too.
    assert reports[-1] == (3, 3) and {total for _, total in reports} == {3}
    assert [done for done, _ in reports] == sorted(done for done, _ in reports)
    assert result.missing == {}
    assert result.scored == {"copy": 3, "other": 3, "partial": 1}
    copy, other = result.scores["copy"], result.scores["other"]
    for metric in ("bleu", "meteor", "rouge_l", "cider", "chrf", "nist", "normalised_average"):
        assert copy[metric] > other[metric], metric
    assert copy["bleu"] == pytest.approx(1.0) and copy["rouge_l"] == pytest.approx(1.0)
    assert result.scores["partial"]["bleu"] == pytest.approx(1.0)
    assert "METEOR 1.5" in result.implementations["meteor"]
    assert "version:" in result.implementations["bleu"]


@needs_java
def test_kept_meteor_gives_every_scorer_the_same_running_process():
    with coco.kept_meteor():  # the session's (tests/conftest.py), or one of its own
        with coco.meteor_scorer() as first:
            pid = first.meteor_p.pid
        with coco.meteor_scorer() as second:
            assert second.meteor_p.pid == pid and second.meteor_p.poll() is None
