"""Hosted systems on the real LogicNLG tables and WebNLG triple sets that `load_published`
loads: the prompt the transformers and OpenAI-compatible backends build for each, their
outputs stored for every item and handed out in HITs (skipped without ../shared).

A few real tables and triple sets, not all: each dataset's folder is copied with a subset of
its entries, then loaded by the command as an organiser would. The OpenAI-compatible server
is the backend tests' fake on 127.0.0.1, which answers "echo: <prompt>"; the checkpoint is a
tiny random GPT-2 built on the spot (no download)."""

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.handout.assignment import next_assignment
from annotation.models import Campaign, Output
from generation.backends import TypedInput
from generation.backends.linearize import linearize
from generation.models import HostedSystem
from generation.service import new_job, run_job
from tests.factories import make_annotator, make_system
from tests.generation.backends.test_openai_backend import server

pytestmark = pytest.mark.django_db
endpoint = server  # the fake OpenAI-compatible server, as a fixture of this module

# 8, 25 and 21 rows of 5-7 columns; five statement slots each.
LOGICNLG_TABLES = ["2-18424778-6.html.csv", "2-12164751-7.html.csv", "1-27987623-1.html.csv"]
WEBNLG_SAMPLES = ["3", "29", "34"]  # one, two and five triples
WEBNLG_SYSTEMS = ["NILC.primary.en", "TGen.primary.en"]
TABLE_PROMPT = "Write one statement that the table supports.\n{input}"
TRIPLES_PROMPT = "Say in one or two sentences what these facts say:\n{input}"


def logicnlg_subset(source: Path, folder: Path) -> Path:
    """The LogicNLG folder with a few of its tables: their entries, files and outputs."""
    entries = json.loads((source / "data" / "test_lm.json").read_text())
    missing = [table for table in LOGICNLG_TABLES if table not in entries]
    assert not missing, f"not LogicNLG test tables: {missing}"
    (folder / "data").mkdir(parents=True)
    (folder / "tables").mkdir()
    (folder / "outputs").mkdir()
    subset = {table: entries[table] for table in LOGICNLG_TABLES}
    (folder / "data" / "test_lm.json").write_text(json.dumps(subset))
    for table in LOGICNLG_TABLES:
        shutil.copy(source / "tables" / table, folder / "tables" / table)
    for path in (source / "outputs").glob("*.json"):
        outputs = json.loads(path.read_text())
        (folder / "outputs" / path.name).write_text(
            json.dumps({table: outputs[table] for table in LOGICNLG_TABLES})
        )
    return folder


def webnlg_subset(source: Path, folder: Path) -> Path:
    """The WebNLG folder with a few sampled triple sets and two systems' files (whole, as
    their lines are numbered by sample id)."""
    sampled = json.loads((source / "inputs" / "en_sampled_triples.json").read_text())
    (folder / "inputs").mkdir(parents=True)
    (folder / "outputs").mkdir()
    subset = {sample: sampled[sample] for sample in WEBNLG_SAMPLES}
    (folder / "inputs" / "en_sampled_triples.json").write_text(json.dumps(subset))
    for name in WEBNLG_SYSTEMS:
        shutil.copy(source / "outputs" / name, folder / "outputs" / name)
    return folder


def load(dataset: str, folder: Path) -> Campaign:
    call_command("load_published", dataset, str(folder), stdout=StringIO())
    return Campaign.objects.get(slug=dataset)


@pytest.fixture
def logicnlg_campaign(logicnlg_data, tmp_path) -> Campaign:
    return load("logicnlg", logicnlg_subset(logicnlg_data, tmp_path / "logicnlg"))


@pytest.fixture
def webnlg_campaign(webnlg_data, tmp_path) -> Campaign:
    return load("webnlg2020", webnlg_subset(webnlg_data, tmp_path / "webnlg2020"))


def prompt_of(item, template: str) -> str:
    return template.format(input=linearize(TypedInput(item.input_kind, item.input_data)))


def test_logicnlg_prompt_is_the_title_and_the_linked_columns_row_by_row(
    logicnlg_campaign, logicnlg_data
):
    # LogicNLG's own GPT-TabGen reads the same: the title, then each row's cells of the
    # statement's linked columns ("In row 1 , the country is Europe , ...").
    table = "2-18424778-6.html.csv"
    entries = json.loads((logicnlg_data / "data" / "test_lm.json").read_text())[table]
    lines = (logicnlg_data / "tables" / table).read_text().splitlines()
    header, rows = lines[0].split("#"), [line.split("#") for line in lines[1:]]
    item = logicnlg_campaign.items.get(external_id=f"{table}:3")
    linked = sorted(set(entries[3][1]))
    assert linked == [0, 1, 2] and len(header) == 5
    described = [
        f"row {n}: " + ", ".join(f"{header[c]}: {row[c]}" for c in linked)
        for n, row in enumerate(rows, start=1)
    ]
    text = linearize(TypedInput("table", item.input_data))
    assert text == " | ".join([f"title: {entries[3][2]}", *described])
    assert f"{header[3]}:" not in text and f"{header[4]}:" not in text  # not linked
    assert table not in text and "statement" not in text  # the slot's keys stay out
    assert prompt_of(item, TABLE_PROMPT) == f"{TABLE_PROMPT[:-7]}{text}"


def test_webnlg_prompt_is_one_triple_after_another(webnlg_campaign):
    item = webnlg_campaign.items.get(external_id="34")
    triples = item.input_data["triples"]
    assert len(triples) == 5
    assert linearize(TypedInput("triples", item.input_data)) == (
        "Aaron Turner | genre | Post-metal && "
        "Aaron Turner | associatedBand/associatedMusicalArtist | Lotus Eaters (band) && "
        "Aaron Turner | origin | Massachusetts && "
        "Aaron Turner | instrument | Electric guitar && "
        "Aaron Turner | activeYearsStartYear | 1995"
    )


def hosted(campaign: Campaign, backend: str, settings: dict) -> HostedSystem:
    system = make_system(campaign, name=f"{backend}-hosted")
    return HostedSystem.objects.create(system=system, backend=backend, settings=settings)


def generate_all(hosted_system: HostedSystem) -> None:
    job = new_job(hosted_system)
    assert run_job(job)
    job.refresh_from_db()
    items = hosted_system.system.campaign.items.count()
    assert (job.status, job.outputs_created, job.items_failed) == ("done", items, 0), (
        job.item_errors
    )


def handed_out_systems(campaign: Campaign) -> set[str]:
    """The systems of a new annotator's first HIT, every system fitting in one."""
    campaign.status = Campaign.Status.OPEN
    campaign.outputs_per_hit = campaign.systems.count()
    campaign.save()
    quality = campaign.criteria.get(name="quality")
    assignment = next_assignment(make_annotator(campaign), quality)
    assert assignment is not None
    return set(assignment.hit.slots.originals().values_list("output__system__name", flat=True))


@pytest.mark.parametrize(
    ("dataset", "template"), [("logicnlg", TABLE_PROMPT), ("webnlg2020", TRIPLES_PROMPT)]
)
def test_openai_backend_fills_every_item_from_its_prompt(
    dataset, template, request, endpoint, settings
):
    settings.HOSTED_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    campaign = request.getfixturevalue(f"{dataset.removesuffix('2020')}_campaign")
    system = hosted(
        campaign,
        "openai",
        {"base_url": endpoint.base_url, "model": "m", "prompt_template": template},
    )
    generate_all(system)
    for item in campaign.items.all():
        output = item.outputs.get(system=system.system)
        assert output.origin == "generated"
        assert output.text == f"echo: {prompt_of(item, template)}"
    assert len(endpoint.requests) == campaign.items.count()
    assert "openai-hosted" in handed_out_systems(campaign)


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory) -> str:
    # torch and transformers are the test extra's: without them, these tests skip.
    tiny_models = pytest.importorskip("tests.generation.backends.tiny_models")

    # A GPT-2, as LogicNLG's GPT-TabGen is. Its random weights (seed 0) write some words for
    # each of these inputs; the seq2seq one's write nothing for a few, which the job records
    # as that item's error ("empty output"), as it should.
    return str(tiny_models.save_tiny_causal(tmp_path_factory.mktemp("gpt2-tiny"), seed=0))


@pytest.mark.parametrize(
    ("dataset", "template"), [("logicnlg", TABLE_PROMPT), ("webnlg2020", TRIPLES_PROMPT)]
)
def test_transformers_backend_fills_every_item_with_a_local_checkpoint(
    dataset, template, request, tiny_checkpoint
):
    campaign = request.getfixturevalue(f"{dataset.removesuffix('2020')}_campaign")
    settings = {"checkpoint": tiny_checkpoint, "device": "cpu", "max_new_tokens": 6}
    system = hosted(campaign, "transformers", {**settings, "prompt_template": template})
    generate_all(system)
    texts = Output.objects.filter(system=system.system).values_list("text", flat=True)
    assert len(texts) == campaign.items.count() and all(text.strip() for text in texts)
    assert "transformers-hosted" in handed_out_systems(campaign)
