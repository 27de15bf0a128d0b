"""A notebook's run against the production processes (gunicorn on PostgreSQL, a Celery
worker with beat), through the API's client (api/client.py) only: create a campaign, push
items and two systems' outputs, import ratings, wait for the ranking, read it."""

import json
import re
import subprocess
import urllib.request

import pytest

from api.client import ApiError, Client
from tests.production.conftest import ORGANISER, REPO, production_environment

pytestmark = [pytest.mark.production, pytest.mark.slow]

ITEMS = 6
SYSTEMS = {"good": "{name} is a pub by the river.", "poor": "pub {name} pub"}


@pytest.fixture(scope="module")
def token(site, production_venv, broker, tmp_path_factory) -> str:
    """A change token of the organiser, made as the guide says: manage.py api_token."""
    env = production_environment(
        production_venv, tmp_path_factory.mktemp("home"), site.database_url, broker
    )
    command = [str(production_venv / "python"), "manage.py", "api_token", ORGANISER["username"]]
    done = subprocess.run(
        [*command, "--change"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def ratings_csv() -> str:
    """An E2E-shaped CrowdFlower file: each of 3 workers ranks good above poor on every item."""
    rows = ["mr,sys1,sys2,ref1,ref2,quality1,quality2,_worker_id,_started_at,_created_at"]
    for worker in range(3):
        for n in range(ITEMS):
            name = f"Pub {n}"
            good, poor = (SYSTEMS[s].format(name=name) for s in ("good", "poor"))
            rows.append(
                f'"name[{name}], eatType[pub]",good,poor,{good},{poor},{150 + worker},40,'
                f"w{worker},2017-11-28 10:0{worker}:00,2017-11-28 10:0{worker}:40"
            )
    return "\n".join(rows) + "\n"


def test_notebook_pushes_outputs_and_reads_the_ranking(site, token):
    platform = Client(site.url, token, timeout=30)
    with pytest.raises(ApiError) as refused:
        Client(site.url, "nlgeval_wrong").campaigns()
    assert refused.value.status == 401

    platform.create_campaign("notebook", "From a notebook")
    added = platform.add_criterion("notebook", "quality")
    assert (added["form"], added["settings"]) == ("rankme", {})
    with pytest.raises(ApiError) as unasked:
        platform.add_criterion("notebook", "data-coverage")  # no default question
    assert (unasked.value.status, unasked.value.body["field"]) == (422, "question")
    assert [c["name"] for c in platform.criteria("notebook")] == ["quality"]
    items = [
        {"id": f"i{n}", "kind": "mr", "input": {"attributes": [["name", f"Pub {n}"]]}}
        for n in range(ITEMS)
    ]
    # E2E's MR syntax: the ratings file names the same inputs as the items pushed.
    for item in items:
        item["input"]["attributes"].append(["eatType", "pub"])
    assert platform.push_items("notebook", items) == {"created": ITEMS, "existing": 0}
    assert platform.push_items("notebook", items) == {"created": 0, "existing": ITEMS}
    platform.push_systems("notebook", [{"name": name} for name in SYSTEMS])
    for system, text in SYSTEMS.items():
        outputs = [{"item": f"i{n}", "text": text.format(name=f"Pub {n}")} for n in range(ITEMS)]
        assert platform.push_outputs("notebook", system, outputs)["created"] == ITEMS

    imported = platform.import_ratings("notebook", ratings_csv(), name="crowd.csv")
    assert not imported["repeated"] and "18 rows" in imported["summary"]

    view = platform.wait_for_ranking("notebook", "quality", timeout=120, every=1)
    systems = view["run"]["systems"]
    assert [row["system"] for row in systems] == ["good", "poor"]
    assert systems[0]["rank_lo"] == systems[0]["rank_hi"] == 1
    assert [row["system"] for row in view["run"]["table"]] == ["good", "poor"]
    assert view["run"]["columns"][:3] == ["cluster", "system", "mu"]
    assert len(list(platform.judgments("notebook", page=10))) == 2 * 3 * ITEMS


def test_schema_and_its_page_are_served_with_their_own_files(site):
    schema = json.loads(urllib.request.urlopen(f"{site.url}/api/v1/openapi.json").read())
    assert "/api/v1/campaigns/" in schema["paths"]
    page = urllib.request.urlopen(f"{site.url}/api/v1/docs").read().decode()
    scripts = re.findall(r'src="(/static/[^"]+\.js)"', page)
    assert scripts, page[:500]
    for script in scripts:  # collected and served by the web process (WhiteNoise)
        assert urllib.request.urlopen(site.url + script).status == 200
