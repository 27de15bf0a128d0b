"""Each input kind of DESIGN.md, laid out for a person, with untrusted text kept as text."""

import pytest
from django.template import Context, Template

from annotation.inputs import check_input
from annotation.rendering import humanise, input_context

INPUTS = {
    "mr": (
        {"attributes": [["name", "The Vaults"], ["priceRange", "£20-25"]]},
        ["<dt>Name</dt><dd>The Vaults</dd>", "<dt>Price range</dt><dd>£20-25</dd>"],
    ),
    "table": (
        {
            "title": "1998 Tour de France",
            "header": ["Stage", "Winner"],
            "rows": [["1", "Mario Cipollini"], ["2", "Jan Svorada"]],
            "highlighted": [[1, 1]],
        },
        [
            "<caption>1998 Tour de France</caption>",
            '<th scope="col">Winner</th>',
            '<td class="marked"><mark>Jan Svorada</mark>',
            "<td>Mario Cipollini</td>",
        ],
    ),
    "boxscore": (
        {
            "home": {"city": "Boston", "name": "Celtics", "PTS": 105, "WINS": 30},
            "visitor": {"city": "Miami", "name": "Heat", "PTS": 98, "WINS": 28},
            "players": [
                {"name": "Kyrie Irving", "team": "home", "PTS": 31, "AST": 7},
                {"name": "Goran Dragic", "team": "visitor", "PTS": 22, "REB": 4},
            ],
        },
        [
            '<th scope="row">Boston Celtics</th><td>105</td><td>30</td>',
            '<th scope="row">Miami Heat</th><td>98</td><td>28</td>',
            '<th scope="col">REB</th>',
            '<th scope="row">Kyrie Irving</th><td>31</td><td>7</td><td></td>',
            '<th scope="row">Goran Dragic</th><td>22</td><td></td><td>4</td>',
        ],
    ),
    "triples": (
        {"triples": [["Aarhus_Airport", "cityServed", "Aarhus,_Denmark"]]},
        [
            '<span class="entity">Aarhus Airport</span> <span class="relation">City served</span>'
            ' <span class="entity">Aarhus, Denmark</span>'
        ],
    ),
    "document": (
        {"title": "Ada Lovelace", "text": "First para.\n\nSecond para.", "question": "occupation"},
        [
            "<strong>Question:</strong> occupation",
            '<h3 class="doc-title">Ada Lovelace</h3>',
            "<p>First para.</p><p>Second para.</p>",
        ],
    ),
}


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


def test_show_input_unknown_kind_is_plain_text():
    html = render("audio", {"url": "<b>x</b>"})
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_input_context_caps_long_cells():
    context = input_context("mr", {"attributes": [["name", "x" * 2000]]})
    assert len(context["attributes"][0][1]) == 500


@pytest.mark.parametrize(
    "name, expected",
    [
        ("eatType", "Eat type"),
        ("customer rating", "Customer rating"),
        ("familyFriendly", "Family friendly"),
        ("birth_place", "Birth place"),
        ("name", "Name"),
    ],
)
def test_humanise_attribute_names(name, expected):
    assert humanise(name) == expected
