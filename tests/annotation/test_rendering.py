"""Each input kind of DESIGN.md, laid out for a person, with untrusted text kept as text."""

import pytest
from django.template import Context, Template

from annotation.rendering import CONTEXTS, input_context
from nlgdata.inputs import KINDS, check_input
from tests.annotation.sample_inputs import INPUTS


def render(kind, data) -> str:
    template = Template("{% load annotation_pages %}{% show_input kind data %}")
    return template.render(Context({"kind": kind, "data": data}))


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_show_input_lays_out_every_kind(kind):
    data, expected = INPUTS[kind]
    check_input(kind, data)  # the shapes are the ones importers accept
    html = render(kind, data)
    assert f'class="input input-{kind}"' in html
    for fragment in expected:
        assert fragment in html


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_show_input_escapes_html_in_every_kind(kind):
    attack = "<script>alert(1)</script>"
    data = poison(INPUTS[kind][0], attack)
    html = render(kind, data)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def poison(value, attack):
    """The same input with every string value (not key) replaced by `attack` + itself."""
    if isinstance(value, dict):
        return {k: (v if k == "team" else poison(v, attack)) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v, attack) for v in value]
    if isinstance(value, str):
        return attack + value
    return value


def test_every_input_kind_has_a_layout():
    assert set(CONTEXTS) == set(KINDS)


def test_show_input_unknown_kind_is_plain_text():
    html = render("audio", {"url": "<b>x</b>"})
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_input_context_caps_long_cells():
    context = input_context("mr", {"attributes": [["name", "x" * 2000]]})
    assert len(context["attributes"][0][1]) == 500


def test_boxscore_columns_in_sports_page_order_whatever_the_key_order():
    player = {"team": "home", "name": "A", "ZZZ": 1, "AST": 2, "PTS": 3, "MIN": 30}
    data = {
        "home": {"city": "Boston", "name": "Celtics", "PTS": 1, "WINS": 2},
        "visitor": {"name": "Heat", "city": "Miami", "WINS": 3, "PTS": 4},
        "players": [player],
    }
    context = input_context("boxscore", data)
    assert context["team_columns"] == ["WINS", "PTS"]
    assert context["player_columns"] == ["MIN", "PTS", "AST", "ZZZ"]


def test_boxscore_reads_the_nested_shape_of_the_loader_and_the_backends():
    data = {
        "home": {"city": "Brooklyn", "name": "Nets", "wins": 14, "losses": 16, "pts": 107,
                 "line": {"PTS_QTR1": 27, "FG_PCT": 45}},
        "visitor": {"city": "Sacramento", "name": "Kings", "wins": 13, "losses": 18, "pts": 99,
                    "line": {"PTS_QTR1": 28, "FG_PCT": 49}},
        "players": [{"name": "Rudy Gay", "team": "visitor",
                     "stats": {"START_POSITION": "F", "MIN": 38, "PTS": 25}}],
        "day": "12_29_14",
    }  # fmt: skip
    context = input_context("boxscore", data)
    assert context["team_columns"] == ["WINS", "LOSSES", "Q1", "PTS", "FG_PCT"]
    assert context["teams"][0]["stats"] == ["13", "18", "28", "99", "49"]
    assert context["player_columns"] == ["POS", "MIN", "PTS"]
    assert context["teams"][0]["players"] == [("Rudy Gay", ["F", "38", "25"])]
    assert context["teams"][1]["players"] == []


# Tables: what is marked, and whether the page gives the table its width ------------------

PROVINCES = {
    "title": "provinces",
    "header": ["gb", "province", "density"],
    "rows": [["bj", "beijing municipality", "1167.40"], ["tj", "tianjin", "1144.46"]],
}


def test_table_with_whole_columns_highlighted_marks_the_columns_not_every_cell():
    """LogicNLG's linked columns: its loader highlights every cell of them."""
    data = {**PROVINCES, "highlighted": [[0, 1], [1, 1], [1, 2]]}
    html = render("table", data)
    assert html.count('<th scope="col" class="marked">') == 1
    assert '<mark>province</mark><span class="visually-hidden"> (marked column)</span>' in html
    assert html.count('class="in-marked"') == 2  # its cells tinted, not marked
    assert html.count('<td class="marked">') == 1  # [1, 2]: a cell of its own
    assert "The column marked in yellow is what the sentences should be about" in html
    assert "and so are the highlighted cells" in html


def test_table_with_every_column_linked_marks_none():
    everything = [[r, c] for r in range(2) for c in range(3)]
    html = render("table", {**PROVINCES, "highlighted": everything})
    assert "marked" not in html and "<mark>" not in html


def test_table_of_one_row_marks_its_cells():
    data = {**PROVINCES, "rows": PROVINCES["rows"][:1], "highlighted": [[0, 1]]}
    html = render("table", data)
    assert '<td class="marked"><mark>beijing municipality</mark>' in html
    assert "Highlighted cells are the ones the sentence should be about." in html


def test_a_table_too_wide_for_the_column_beside_the_sentences_is_wide():
    template = Template(
        "{% load annotation_pages %}{% wide_input kind data shown as wide %}{{ wide }}"
    )
    wide = {**PROVINCES, "header": [f"column {n}" for n in range(9)], "rows": [["x" * 8] * 9]}
    for data, shown, expected in [
        (PROVINCES, True, "False"),  # 3 columns, some 40 characters: beside the sentences
        (wide, True, "True"),
        (wide, False, "False"),  # a criterion that shows no input
    ]:
        context = Context({"kind": "table", "data": data, "shown": shown})
        assert template.render(context) == expected
    assert (
        Template("{% load annotation_pages %}{% wide_input 'mr' data True %}").render(
            Context({"data": {"attributes": [["name", "x" * 200]]}})
        )
        == "False"
    )
