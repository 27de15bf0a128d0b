"""Readers of the published seed datasets, as items and system outputs (no Django).

Each reader takes the dataset's folder as the project's shared data lays it out (its
README describes the files) and returns a `Dataset`: the items with their typed input,
references and source id, and each system's outputs keyed by item id. Errors name the
file and the entry. `annotation.published` writes a `Dataset` into a campaign.

- LogicNLG (Chen et al., ACL 2020): an item is one statement slot of a test table
  (`<table id>:<index in test_lm.json>`); its references are all the table's reference
  statements, as the authors' evaluate.py scores every statement of a table against them.
- RotoWire (the INLG 2021 accuracy shared task's 90 games, one JSON object per line in
  games/*.jsonl): an item is a game; the human summary is its reference and the output of
  the system `human`; `detokenized_text` is the output of one neural system. Where
  `outputs.jsonl` lies beside games/, each of its lines is a system's output for a game.
- WebNLG+ 2020 (English): an item is a sampled triple set, keyed by its sample id; line n
  of `outputs/<team>.primary.en` is the team's output for sample id n.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .datafiles import DataFileError, check_json_shape, parse_json_line
from .dataset_files import (
    file_inside,
    files_inside,
    folder_inside,
    load_json,
    read_text,
    shown,
)


@dataclass
class PublishedItem:
    external_id: str
    kind: str
    data: dict
    references: list[str]
    source: str  # the file (and entry) it came from, for error messages


@dataclass
class PublishedSystem:
    name: str  # a slug: System.name
    label: str  # the name its paper uses
    outputs: dict[str, str]  # item external id -> text, empty where it produced none
    source: str  # the file(s) the outputs came from
    sha256: str  # of those files and the system's name, so a repeat load is recognised
    architecture: str = ""
    missing: list[str] = field(default_factory=list)  # items it has no output for


@dataclass
class Dataset:
    name: str  # the campaign slug it loads into by default
    title: str
    description: str
    items: list[PublishedItem]
    items_sha256: str
    items_source: str
    systems: list[PublishedSystem]
    questions: dict[str, str]  # criterion -> question
    coverage_required: bool = True
    outputs_per_hit: int = 5
    # (text, kind, input): the standard RankME's pages show with its score of 100, written
    # for the dataset; none is taken from the items, whose references are rated themselves.
    standard: tuple[str, str, dict] | None = None
    notes: list[str] = field(default_factory=list)  # what the organiser should know


def file_digest(*paths: Path, salt: str = "") -> str:
    digest = hashlib.sha256(salt.encode())
    for path in sorted(paths):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def expect(condition: bool, file_name: str, message: str, where: str = "") -> None:
    if not condition:
        raise DataFileError(file_name, message, column=where)


# LogicNLG -----------------------------------------------------------------------------------

# LogicNLG's STANDARD (the statement shown with its score of 100): a small table written for
# this platform, with a statement of LogicNLG's kind (a comparison across rows) that is true
# of it, its linked column marked as the test set's are. The test set's own references are
# each rated among the outputs of their item's HITs, so none of them can be the standard.
LOGICNLG_STANDARD = (
    "Of the four planets closest to the sun, mars has the most moons, with two.",
    "table",
    {
        "title": "planets closest to the sun",
        "header": ["planet", "moons", "diameter (km)"],
        "rows": [
            ["mercury", "0", "4879"],
            ["venus", "0", "12104"],
            ["earth", "1", "12742"],
            ["mars", "2", "6779"],
        ],
        "highlighted": [[row, 1] for row in range(4)],
    },
)
# E2E's STANDARD: a human reference of the development set (devset.csv, whose MRs and
# restaurants the test set does not share), with its MR.
E2E_STANDARD = (
    "The Alimentum is a family-friendly restaurant located in the city centre near Burger King.",
    "mr",
    {
        "attributes": [
            ["name", "Alimentum"],
            ["area", "city centre"],
            ["familyFriendly", "yes"],
            ["near", "Burger King"],
        ]
    },
)

LOGICNLG_SYSTEMS = (  # file, slug, the paper's name (Table 2)
    ("field_infusing.json", "field-infusing-trans", "Field-Infusing + Trans"),
    ("GPT_gpt2_12.65.json", "gpt-tabgen-sm", "GPT-TabGen (sm)"),
    ("GPT_gpt2_C2F_13.35.json", "gpt-coarse-to-fine-sm", "GPT-Coarse-to-Fine (sm)"),
)


def read_logicnlg(folder: Path) -> Dataset:
    entries_path = file_inside(folder, "data", "test_lm.json")
    entries = load_json(entries_path)
    expect(isinstance(entries, dict), entries_path.name, "must map table ids to entries")
    items: list[PublishedItem] = []
    table_paths: list[Path] = []
    for table_id, table_entries in entries.items():
        # The table's file is named by the data: it must be a file of `folder` (issue 39).
        table_path = file_inside(folder, "tables", table_id, what="table file")
        table_paths.append(table_path)
        header, rows = read_logicnlg_table(table_path)
        items += logicnlg_items(table_id, table_entries, header, rows, entries_path.name)
    systems = [
        logicnlg_system(file_inside(folder, "outputs", file), slug, label, entries)
        for file, slug, label in LOGICNLG_SYSTEMS
    ]
    return Dataset(
        name="logicnlg",
        title="LogicNLG test set: statements about Wikipedia tables",
        description="LogicNLG (Chen et al., ACL 2020), test split: 862 tables, one item per "
        "reference statement, the statement's linked columns marked; the authors' outputs of "
        "three systems of Table 2.",
        items=items,
        items_sha256=file_digest(entries_path, *table_paths),
        items_source=f"{entries_path.name} and {len(table_paths)} tables",
        systems=systems,
        questions={
            "quality": "How do you judge the overall quality of the statement: is it fluent "
            "and grammatical, and is it true of the table (can it be inferred from the "
            "table, especially from its marked columns)?",
            "naturalness": "Could the statement have been written by a native speaker?",
        },
        coverage_required=False,  # a statement is about part of a table by design
        outputs_per_hit=3,
        standard=LOGICNLG_STANDARD,
    )


def read_logicnlg_table(path: Path) -> tuple[list[str], list[list[str]]]:
    lines = read_text(path).splitlines()
    expect(bool(lines), path.name, "empty table")
    header = lines[0].split("#")
    rows = [line.split("#") for line in lines[1:]]
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise DataFileError(
                path.name, f"{len(row)} cells where the header has {len(header)}", number
            )
    return header, rows


def logicnlg_items(
    table_id: str, entries: Any, header: list[str], rows: list[list[str]], file_name: str
) -> Iterator[PublishedItem]:
    expect(isinstance(entries, list) and bool(entries), file_name, "no entries", table_id)
    references = [entry[0] for entry in entries]
    for index, entry in enumerate(entries):
        where = f"{table_id}[{index}]"
        expect(
            isinstance(entry, list) and len(entry) >= 3 and isinstance(entry[0], str),
            file_name,
            "must be [statement, linked columns, title, ...]",
            where,
        )
        columns = entry[1]
        expect(
            isinstance(columns, list)
            and all(isinstance(c, int) and 0 <= c < len(header) for c in columns),
            file_name,
            f"linked columns must be indices of the table's {len(header)} columns",
            where,
        )
        data = {
            "title": str(entry[2]),
            "header": header,
            "rows": rows,
            "highlighted": [[r, c] for r in range(len(rows)) for c in sorted(set(columns))],
            # Slots of one table may link the same columns: the index keeps their inputs apart.
            "table_id": table_id,
            "statement": index,
        }
        yield PublishedItem(f"{table_id}:{index}", "table", data, references, where)


def logicnlg_system(path: Path, slug: str, label: str, entries: dict) -> PublishedSystem:
    generated = load_json(path)
    expect(isinstance(generated, dict), path.name, "must map table ids to statements")
    outputs = {}
    for table_id, table_entries in entries.items():
        texts = generated.get(table_id)
        expect(
            isinstance(texts, list) and len(texts) == len(table_entries),
            path.name,
            f"needs one statement per entry of test_lm.json ({len(table_entries)})",
            table_id,
        )
        for index, text in enumerate(texts):
            expect(isinstance(text, str), path.name, "must be a string", f"{table_id}[{index}]")
            outputs[f"{table_id}:{index}"] = text
    return PublishedSystem(slug, label, outputs, path.name, file_digest(path, salt=slug))


# RotoWire -----------------------------------------------------------------------------------

ROTOWIRE_NEURAL = "accuracy-shared-task"
PLAYER_FIELDS_LEFT_OUT = {"PLAYER_NAME", "FIRST_NAME", "SECOND_NAME", "TEAM_CITY"}


# The columns of the standard's box score, and a player's figures in that order.
STANDARD_PLAYER_COLUMNS = "START_POSITION MIN PTS REB AST STL BLK TO PF FGM FGA FG3M FG3A FTM FTA"


def standard_player(name: str, team: str, *figures: str | int) -> dict:
    stats = dict(zip(STANDARD_PLAYER_COLUMNS.split(), figures, strict=True))
    return {"name": name, "team": team, "stats": stats}


# RotoWire's STANDARD (the summary shown with its score of 100): a made-up game with a
# hand-written summary, every figure of which is in its box score. Without one the HIT page
# would show a game's human summary, which is also one of the outputs rated in that game's
# HITs.
ROTOWIRE_STANDARD = (
    "The Riverside Otters (21-10) beat the Lakeport Herons (15-16) 112-104. Marcus Bell led "
    "the Otters with 31 points and nine rebounds, and Tony Alvarez added 18 points and 11 "
    "assists. Devon Price had 24 points and 13 rebounds for the Herons, who were outscored "
    "28-22 in the fourth quarter.",
    "boxscore",
    {
        "home": {
            "city": "Riverside",
            "name": "Otters",
            "wins": 21,
            "losses": 10,
            "pts": 112,
            "line": {"PTS_QTR1": 28, "PTS_QTR2": 30, "PTS_QTR3": 26, "PTS_QTR4": 28},
        },
        "visitor": {
            "city": "Lakeport",
            "name": "Herons",
            "wins": 15,
            "losses": 16,
            "pts": 104,
            "line": {"PTS_QTR1": 25, "PTS_QTR2": 27, "PTS_QTR3": 30, "PTS_QTR4": 22},
        },
        "players": [
            standard_player(
                "Marcus Bell", "home", "F", 36, 31, 9, 4, 1, 0, 2, 3, 12, 20, 3, 6, 4, 5
            ),
            standard_player(
                "Tony Alvarez", "home", "G", 34, 18, 3, 11, 2, 0, 3, 2, 7, 14, 2, 5, 2, 2
            ),
            standard_player(
                "Devon Price", "visitor", "C", 35, 24, 13, 2, 0, 3, 2, 4, 10, 16, 0, 0, 4, 6
            ),
            standard_player(
                "Sam Okafor", "visitor", "G", 33, 20, 4, 6, 1, 0, 4, 1, 7, 15, 4, 8, 2, 2
            ),
        ],
    },
)


# Other systems' summaries, beside games/: `{"game", "system", "text"}` a line, one line per
# output; `game` is the game's item id (its `id`, or "<day> <visitors> at <home>").
ROTOWIRE_OUTPUTS = "outputs.jsonl"
MAX_SYSTEM_NAME = 100  # System.name's width


def read_rotowire(folder: Path) -> Dataset:
    games_folder = "games" if folder_inside(folder, "games") else ""
    files = files_inside(folder, games_folder, "*.jsonl")
    files = [path for path in files if games_folder or path.name != ROTOWIRE_OUTPUTS]
    expect(bool(files), games_folder or folder.name, "no games/*.jsonl files")
    items: list[PublishedItem] = []
    human: dict[str, str] = {}
    neural: dict[str, str] = {}
    for path in files:
        for line, game in rotowire_games(path):
            item = rotowire_item(game, f"{path.name}, line {line}")
            if item.external_id in human:
                raise DataFileError(path.name, f"game {item.external_id!r} repeats", line)
            items.append(item)
            human[item.external_id] = item.references[0]
            if isinstance(game.get("detokenized_text"), str) and game["detokenized_text"]:
                neural[item.external_id] = game["detokenized_text"]
    systems = [
        PublishedSystem(
            "human",
            "Human-written summary (RotoWire)",
            human,
            "summary",
            file_digest(*files, salt="human"),
        ),
        PublishedSystem(
            ROTOWIRE_NEURAL,
            "Neural system (INLG 2021 accuracy shared task texts)",
            neural,
            "detokenized_text",
            file_digest(*files, salt=ROTOWIRE_NEURAL),
            architecture="neural",
            missing=[i.external_id for i in items if i.external_id not in neural],
        ),
    ]
    outputs_path = folder / ROTOWIRE_OUTPUTS
    if outputs_path.exists() or outputs_path.is_symlink():
        taken = {system.name for system in systems}
        systems += rotowire_systems(file_inside(folder, ROTOWIRE_OUTPUTS), items, taken)
    return Dataset(
        name="rotowire",
        title="RotoWire: NBA game summaries from box scores",
        description="90 RotoWire games (Wiseman et al., EMNLP 2017) of the INLG 2021 accuracy "
        "shared task (Thomson and Reiter): box and line scores, the human summary, and one "
        "neural system's summary.",
        items=items,
        items_sha256=file_digest(*files),
        items_source=", ".join(path.name for path in files),
        systems=systems,
        questions={
            "quality": "How do you judge the overall quality of the summary: is it fluent, "
            "is every number and fact in it supported by the box and line scores, and does it "
            "report what mattered in the game?",
            "naturalness": "Could the summary have been written by a native speaker?",
        },
        coverage_required=False,  # no summary covers a whole box score
        outputs_per_hit=2,
        standard=ROTOWIRE_STANDARD,
        notes=same_as_human(human, neural),
    )


def rotowire_systems(
    path: Path, items: list[PublishedItem], taken: set[str]
) -> list[PublishedSystem]:
    """The systems of outputs.jsonl, in the order the file first names them; a line of a
    game that games/ lacks, a system named like the dataset's own, or a second line of the
    same game and system is an error naming its line (and the first)."""
    games = {item.external_id for item in items}
    outputs: dict[str, dict[str, str]] = {}
    lines: dict[tuple[str, str], int] = {}
    for line, record in rotowire_games(path):
        game, system, text = rotowire_output(record, path.name, line)
        if game not in games:
            raise DataFileError(path.name, f"no game {shown(game)!r} in games/", line, "game")
        if system in taken:
            message = f"{system!r} is the name of the dataset's own system"
            raise DataFileError(path.name, message, line, "system")
        first = lines.setdefault((game, system), line)
        if first != line:
            message = f"game {shown(game)!r} of system {system!r} is also on line {first}"
            raise DataFileError(path.name, message, line, "game")
        outputs.setdefault(system, {})[game] = text
    return [
        PublishedSystem(
            name,
            name,
            texts,
            path.name,
            file_digest(path, salt=name),
            missing=[i.external_id for i in items if i.external_id not in texts],
        )
        for name, texts in outputs.items()
    ]


def rotowire_output(record: dict, file_name: str, line: int) -> tuple[str, str, str]:
    """(game, system, text) of a line of outputs.jsonl; the text may be empty (the system
    produced none), the system's name is one a System may have."""
    for name in ("game", "system", "text"):
        if name not in record:
            raise DataFileError(file_name, f"missing field '{name}'", line, name)
    game, system, text = record["game"], record["system"], record["text"]
    if isinstance(game, bool) or not isinstance(game, str | int) or not str(game).strip():
        raise DataFileError(file_name, "must be a game's id", line, "game")
    if not isinstance(system, str) or not system.strip() or system != system.strip():
        raise DataFileError(file_name, "must be a name without spaces around it", line, "system")
    if len(system) > MAX_SYSTEM_NAME or not system.isprintable():
        message = f"must be printable, at most {MAX_SYSTEM_NAME} characters"
        raise DataFileError(file_name, message, line, "system")
    if not isinstance(text, str):
        raise DataFileError(file_name, "must be a string", line, "text")
    return str(game), system, text


def same_as_human(human: dict[str, str], neural: dict[str, str]) -> list[str]:
    """In the shared task's files `detokenized_text` is, word for word or nearly, the human
    summary: say so, as a campaign that ranks the two ranks one text against itself."""
    same = [
        key
        for key, text in neural.items()
        if difflib.SequenceMatcher(None, text.split(), human[key].split()).ratio() >= 0.9
    ]
    if not same:
        return []
    return [
        f"{ROTOWIRE_NEURAL}: {len(same)} of {len(neural)} texts share at least 90% of their "
        "words, in order, with the human summary; they are not a distinct system's output"
    ]


def rotowire_games(path: Path) -> Iterator[tuple[int, dict]]:
    text = read_text(path)
    check_json_shape(text, path.name)
    # Lines end at "\n" only: a JSON string may hold U+2028, which splitlines() splits at.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        yield number, parse_json_line(line, path.name, number)


def rotowire_item(game: dict, source: str) -> PublishedItem:
    for name in ("home_name", "home_city", "vis_name", "vis_city", "home_line", "vis_line"):
        expect(name in game, source, f"missing field '{name}'", name)
    for name in ("box_score", "summary", "day"):
        expect(name in game, source, f"missing field '{name}'", name)
    external_id = str(game.get("id") or f"{game['day']} {game['vis_name']} at {game['home_name']}")
    data = {
        "home": rotowire_team(game["home_line"], game["home_city"], game["home_name"]),
        "visitor": rotowire_team(game["vis_line"], game["vis_city"], game["vis_name"]),
        "players": rotowire_players(game, source),
        "day": str(game["day"]),
    }
    summary = game["summary"]
    expect(isinstance(summary, list), source, "must be a list of tokens", "summary")
    return PublishedItem(external_id, "boxscore", data, [detokenise(summary)], source)


def number(value: Any) -> Any:
    """RotoWire writes every figure as text: whole numbers become numbers, 'N/A' stays."""
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,9}", value):
        return int(value)
    return value


def rotowire_team(line: dict, city: str, name: str) -> dict:
    figures = {key.removeprefix("TEAM-"): number(value) for key, value in line.items()}
    return {
        "city": str(city),
        "name": str(name),
        "wins": figures.pop("WINS", 0),
        "losses": figures.pop("LOSSES", 0),
        "pts": figures.pop("PTS", 0),
        "line": {k: v for k, v in figures.items() if k not in ("CITY", "NAME")},
    }


def rotowire_players(game: dict, source: str) -> list[dict]:
    box = game["box_score"]
    expect(isinstance(box, dict) and "PLAYER_NAME" in box, source, "no PLAYER_NAME", "box_score")
    # Players are told apart by city: RotoWire's box score names no team.
    expect(game["home_city"] != game["vis_city"], source, "both teams share a city", "box_score")
    sides = {game["home_city"]: "home", game["vis_city"]: "visitor"}
    players = []
    for row in sorted(box["PLAYER_NAME"], key=int):
        city = box.get("TEAM_CITY", {}).get(row)
        expect(city in sides, source, f"player row {row}: unknown city {city!r}", "box_score")
        stats = {
            column: number(values[row])
            for column, values in box.items()
            if column not in PLAYER_FIELDS_LEFT_OUT and row in values
        }
        players.append({"name": box["PLAYER_NAME"][row], "team": sides[city], "stats": stats})
    return players


DETOKENISE = [
    (re.compile(r" ([,.;:!?%)\]])"), r"\1"),
    (re.compile(r"([(\[$]) "), r"\1"),
    (re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m)\b"), r"\1"),
    (re.compile(r"(\w) ' "), r"\1' "),  # the Kings ' turnovers
    (re.compile(r"(\w) - (?=\w)"), r"\1-"),  # 107 - 99, double - double
]


def detokenise(tokens: list) -> str:
    """RotoWire's tokenised summaries written as plain text, as the neural system's
    `detokenized_text` is, so neither reads as machine output beside the other."""
    text = " ".join(str(token) for token in tokens)
    for pattern, replacement in DETOKENISE:
        text = pattern.sub(replacement, text)
    return text


# WebNLG+ 2020 --------------------------------------------------------------------------------

WEBNLG_LABELS = {  # file stem -> the team name the challenge's overview paper uses
    "Amazon_AI_(Shanghai)": "Amazon AI (Shanghai)",
    "Huawei_Noahs_Ark_Lab": "Huawei Noah's Ark Lab",
    "OSU_Neural_NLG": "OSU Neural NLG",
}


def read_webnlg2020(folder: Path) -> Dataset:
    triples_path = file_inside(folder, "inputs", "en_sampled_triples.json")
    sampled = load_json(triples_path)
    expect(isinstance(sampled, dict) and bool(sampled), triples_path.name, "no sampled inputs")
    items = [
        webnlg_item(sample_id, triples, triples_path.name) for sample_id, triples in sampled.items()
    ]
    files = files_inside(folder, "outputs", "*.primary.en")
    expect(bool(files), "outputs", "no <system>.primary.en files")
    systems = [webnlg_system(path, [item.external_id for item in items]) for path in files]
    return Dataset(
        name="webnlg2020",
        title="WebNLG+ 2020 (English): texts from DBpedia triples",
        description="The 178 English test inputs that the WebNLG+ 2020 human evaluation "
        "sampled, and the primary submissions of 16 systems (Castro Ferreira et al., 2020). "
        "CC BY-NC-SA 4.0: research use only.",
        items=items,
        items_sha256=file_digest(triples_path),
        items_source=triples_path.name,
        systems=systems,
        questions={
            "quality": "How do you judge the overall quality of the text: is it fluent and "
            "grammatical, and does it say what the facts say, all of them and nothing else?",
            "naturalness": "Could the text have been written by a native speaker?",
        },
        standard=(
            "Alan Bean, who was born in Wheeler, Texas, worked as a test pilot.",
            "triples",
            {
                "triples": [
                    ["Alan_Bean", "birthPlace", "Wheeler,_Texas"],
                    ["Alan_Bean", "occupation", "Test_pilot"],
                ]
            },
        ),
    )


def webnlg_item(sample_id: str, triples: Any, file_name: str) -> PublishedItem:
    # ASCII digits only, and few: int() refuses '²' (which isdigit() accepts) and 5,000 digits.
    expect(
        re.fullmatch(r"[0-9]{1,9}", sample_id) is not None,
        file_name,
        "sample ids must be whole numbers",
        shown(sample_id),
    )
    expect(
        isinstance(triples, list)
        and bool(triples)
        and all(isinstance(t, list) and len(t) == 3 for t in triples),
        file_name,
        "must be a list of [subject, property, object] triples",
        sample_id,
    )
    data = {"triples": [[str(part) for part in triple] for triple in triples]}
    return PublishedItem(sample_id, "triples", data, [], f"{file_name}[{sample_id}]")


def webnlg_system(path: Path, sample_ids: list[str]) -> PublishedSystem:
    stem = path.name.removesuffix(".primary.en")
    lines = read_text(path).splitlines()
    outputs, missing = {}, []
    for sample_id in sample_ids:
        number = int(sample_id)
        if number <= len(lines):
            # Kept when empty: FORGE2017 has an empty line for sample 533, which the
            # organisers' raters scored 0 on every criterion.
            outputs[sample_id] = lines[number - 1].strip()
        else:
            missing.append(sample_id)
    label = WEBNLG_LABELS.get(stem, stem)
    # The system keeps the name the challenge's files give it (System.key is its slug).
    return PublishedSystem(
        stem, label, outputs, path.name, file_digest(path, salt=stem), missing=missing
    )


READERS = {"logicnlg": read_logicnlg, "rotowire": read_rotowire, "webnlg2020": read_webnlg2020}
