"""One input of each kind of DESIGN.md, with HTML fragments its rendering must contain."""

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
            '<th scope="row">Boston Celtics</th><td>30</td><td>105</td>',
            '<th scope="row">Miami Heat</th><td>28</td><td>98</td>',
            '<th scope="col">PTS</th><th scope="col">REB</th><th scope="col">AST</th>',
            '<th scope="row">Kyrie Irving</th><td>31</td><td></td><td>7</td>',
            '<th scope="row">Goran Dragic</th><td>22</td><td>4</td><td></td>',
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
