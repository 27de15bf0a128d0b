"""The admin's "Upload data": files stored and queued as an UploadJob, imported by the
worker's function (annotation/uploads.py), and the job's page before, during and after."""

import html
import json
import re

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import DataFile, Item, Judgment, Output, System, UploadJob
from annotation.uploads import PROGRESS, execute_upload, job_folder
from tests.client import changelist_rows
from tests.factories import make_campaign, make_item, make_output, make_system
from tests.world import logged_in

pytestmark = pytest.mark.django_db

ITEMS = b'mr,ref\n"name[The Vaults], eatType[pub]","The Vaults is a pub."\n'
MR = "name[The Vaults], eatType[pub]"


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.UPLOAD_DIR = tmp_path / "uploads"
    return settings.UPLOAD_DIR


def upload_url(campaign) -> str:
    return reverse("admin:annotation_campaign_upload", args=[campaign.pk])


def job_url(job) -> str:
    return reverse("admin:annotation_campaign_upload_job", args=[job.campaign_id, job.pk])


def upload(person, campaign, files: dict[str, bytes], kind="items", **fields):
    """Fill in the campaign's upload page with `files` (name -> content) and submit it."""
    chosen = [SimpleUploadedFile(name, content) for name, content in files.items()]
    data = {"kind": kind, "data_files": chosen, **fields}
    page = person.get(upload_url(campaign))
    return person.submit(page, data, action=upload_url(campaign))


def upload_and_import(person, campaign, files, **fields) -> tuple[UploadJob, str]:
    """Upload, let the worker's function import, and read the job's page."""
    response = upload(person, campaign, files, **fields)
    assert response.status_code == 302, response.content.decode()[:2000]
    job = UploadJob.objects.get(campaign=campaign)
    assert response["Location"] == job_url(job)
    assert execute_upload(job)
    job.refresh_from_db()
    return job, text_of(person.get(job_url(job)))


def text_of(response) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def test_upload_queues_a_job_that_no_request_waits_on(organiser, upload_dir):
    campaign = make_campaign()
    response = upload(organiser, campaign, {"items.csv": ITEMS})
    job = UploadJob.objects.get(campaign=campaign)
    assert response.status_code == 302 and response["Location"] == job_url(job)
    assert (job.status, job.kind, job.created_by) == ("queued", "items", organiser.user)
    assert [f["name"] for f in job.files] == ["items.csv"]
    assert (upload_dir / str(job.pk) / job.files[0]["stored"]).read_bytes() == ITEMS
    assert not Item.objects.exists()  # the worker imports it, not the request
    page = text_of(organiser.get(job_url(job)))
    assert "Waiting for a worker" in page
    assert 'http-equiv="refresh"' in organiser.get(job_url(job)).content.decode()


def test_upload_job_imports_items_and_shows_what_they_brought(organiser, upload_dir):
    campaign = make_campaign()
    job, page = upload_and_import(organiser, campaign, {"items.csv": ITEMS})
    assert job.status == "done" and "items.csv: 1 rows read; created 1 items" in page
    item = Item.objects.get(campaign=campaign)
    assert (item.input_key, item.references) == (MR, ["The Vaults is a pub."])
    assert DataFile.objects.get(campaign=campaign).imported_by == organiser.user
    assert not (upload_dir / str(job.pk)).exists()  # the stored files are gone


def test_upload_of_many_output_files_makes_a_system_of_each(organiser):
    campaign = make_campaign()
    make_item(campaign, input_key=MR)
    make_system(campaign, name="tgen")
    files = {
        f"{name}.tsv": f"MR\toutput\n{MR}\t{name} says hi.\n".encode()
        for name in ["tgen", "slug", "tuda"]
    }
    job, page = upload_and_import(organiser, campaign, files, kind="outputs")
    assert job.status == "done"
    for name in ["tgen", "slug", "tuda"]:
        assert f"{name}.tsv: 1 rows read; created 1 outputs" in page
        assert Output.objects.get(system__name=name).text == f"{name} says hi."
    assert sorted(campaign.systems.values_list("name", flat=True)) == ["slug", "tgen", "tuda"]


def test_upload_of_an_empty_output_keeps_it_and_says_so(organiser):
    campaign = make_campaign()
    make_item(campaign, input_key=MR)
    files = {"forge.tsv": f"MR\toutput\n{MR}\t\n".encode()}
    job, page = upload_and_import(organiser, campaign, files, kind="outputs")
    assert job.status == "done"
    assert "forge.tsv: 1 rows read; created 1 outputs, 1 of them empty" in page
    assert Output.objects.get(system__name="forge").text == ""


def test_upload_with_one_bad_file_imports_none_and_names_file_line_and_column(organiser):
    campaign = make_campaign()
    make_item(campaign, input_key=MR)
    files = {
        "tgen.tsv": f"MR\toutput\n{MR}\tFine.\n".encode(),
        "slug.tsv": f"MR\toutput\n{MR}\tFine.\nname[Nowhere]\tNo item.\n".encode(),
    }
    job, page = upload_and_import(organiser, campaign, files, kind="outputs")
    assert job.status == "failed" and job.error.startswith("slug.tsv, line 3")
    assert "Nothing from this upload was imported" in page
    assert not Output.objects.exists() and not DataFile.objects.exists()
    assert not System.objects.exists()  # tgen's new system went with the rest


def test_upload_of_da_ratings_in_their_layout_stores_a_judgment_per_criterion(organiser):
    campaign = make_campaign()
    item = make_item(campaign, external_id="i1")
    for name in ("tgen", "slug"):
        make_output(item, make_system(campaign, name=name))
    rows = [
        "item,system,annotator,criterion,score,hit,seconds",
        "i1,tgen,w1,correctness,80,h1,30",
        "i1,tgen,w1,fluency,70,h1,30",
        "i1,slug,w1,correctness,40,h1,30",
        "i1,slug,w1,fluency,90,h1,30",
    ]
    files = {"da.csv": ("\n".join(rows) + "\n").encode()}
    job, page = upload_and_import(organiser, campaign, files, kind="ratings", form="da")
    assert (job.status, job.form) == ("done", "da"), job.error
    assert "Created the direct-assessment criteria correctness, fluency" in page
    judged = Judgment.objects.filter(assignment__hit__campaign=campaign)
    assert sorted(judged.values_list("criterion__name", "slot__output__system__name", "score")) == [
        ("correctness", "slug", 40.0),
        ("correctness", "tgen", 80.0),
        ("fluency", "slug", 90.0),
        ("fluency", "tgen", 70.0),
    ]


def test_upload_of_e2e_ratings_says_which_scores_are_off_the_scale(organiser):
    campaign = make_campaign()
    rows = [
        "_id,_worker_id,_started_at,_created_at,mr,sys1,sys2,ref1,ref2,quality1,quality2",
        f'1,cf9,11/28/2017 14:42:14,11/28/2017 14:51:43,"{MR}",tgen,slug,A pub.,Pub.,111111,80',
        f'2,cf3,11/28/2017 14:52:14,11/28/2017 14:58:43,"{MR}",tgen,slug,A pub.,Pub.,100,90',
    ]
    files = {"quality.csv": ("\n".join(rows) + "\n").encode()}
    job, page = upload_and_import(organiser, campaign, files, kind="ratings")
    assert job.status == "done", job.error
    assert (
        "1 score off the scale (above 1,000, ten times the standard's 100), stored as given,"
        " by annotator cf9 (1)" in html.unescape(page)
    )
    judged = Judgment.objects.filter(assignment__hit__campaign=campaign, score=111111)
    assert judged.get().assignment.annotator.external_id == "cf9"


def test_upload_form_keeps_a_ratings_layout_to_ratings_and_apart_from_the_criterion(organiser):
    campaign = make_campaign()
    response = upload(organiser, campaign, {"items.csv": ITEMS}, form="da")
    assert "A ratings layout is for a ratings file only." in response.content.decode()
    response = upload(
        organiser, campaign, {"r.csv": b"x\n"}, kind="ratings", form="da", criterion="quality"
    )
    assert "The criterion is for the E2E layout" in response.content.decode()
    assert not UploadJob.objects.exists()


def test_upload_hostile_file_fails_with_its_line_and_writes_nothing(organiser):
    campaign = make_campaign()
    job, page = upload_and_import(
        organiser, campaign, {"items.jsonl": b'{"id": "1", "kind": "mr", "input": NaN}\n'}
    )
    assert job.status == "failed"
    assert "items.jsonl, line 1, column input: NaN" in page
    assert not Item.objects.exists() and not DataFile.objects.exists()


def test_upload_job_page_shows_the_workers_progress(organiser):
    campaign = make_campaign()
    upload(organiser, campaign, {"items.csv": ITEMS})
    job = UploadJob.objects.get(campaign=campaign)
    assert job.claim() is not None  # a worker has it
    progress = {
        "file_number": 1,
        "files": 1,
        "file_name": "items.csv",
        "lines": 4000,
        "total_lines": 6000,
    }
    (job_folder(job) / PROGRESS).write_text(json.dumps(progress))
    page = text_of(organiser.get(job_url(job)))
    assert "Importing file 1 of 1, items.csv : 4,000 of 6,000 lines read" in page


def test_upload_form_refuses_a_system_for_several_files_and_unnamable_files(organiser):
    campaign = make_campaign()
    system = make_system(campaign, name="tgen")
    files = {"a.tsv": b"MR\toutput\n", "b.tsv": b"MR\toutput\n"}
    response = upload(organiser, campaign, files, kind="outputs", system=system.pk)
    assert "Several files of outputs are one system each" in text_of(response)
    response = upload(organiser, campaign, {"tgen .tsv": b"MR\toutput\n"}, kind="outputs")
    assert "the file name does not make a system name" in text_of(response)
    assert not UploadJob.objects.exists()


def test_upload_without_csrf_token_is_refused(organiser):
    campaign = make_campaign()
    data = {"kind": "items", "data_files": SimpleUploadedFile("items.csv", ITEMS)}
    assert organiser.post(upload_url(campaign), data).status_code == 403
    assert not UploadJob.objects.exists()


@pytest.mark.parametrize("outsider", ["non_staff", "stranger"])
def test_upload_and_its_page_are_refused_to_outsiders(request, outsider, organiser):
    campaign = make_campaign()
    upload(organiser, campaign, {"items.csv": ITEMS})
    job = UploadJob.objects.get()
    person = request.getfixturevalue(outsider)
    data = {"kind": "items", "data_files": SimpleUploadedFile("items.csv", ITEMS)}
    for response in [person.send("POST", upload_url(campaign), data), person.get(job_url(job))]:
        assert response.status_code == 302 and response.url.startswith(reverse("admin:login"))
    assert UploadJob.objects.count() == 1


def test_upload_needs_change_permission_and_its_page_view_permission(organiser):
    campaign = make_campaign()
    upload(organiser, campaign, {"items.csv": ITEMS})
    job = UploadJob.objects.get()
    reader = logged_in("reader", is_staff=True)
    assert reader.get(upload_url(campaign)).status_code == 403
    assert reader.get(job_url(job)).status_code == 403
    reader.user.user_permissions.add(Permission.objects.get(codename="view_campaign"))
    reader = logged_in("reader2", is_staff=True)
    reader.user.user_permissions.add(Permission.objects.get(codename="view_campaign"))
    assert reader.get(job_url(job)).status_code == 200
    assert reader.get(upload_url(campaign)).status_code == 403


def test_upload_wrong_method_and_unknown_campaign_or_job(organiser):
    campaign = make_campaign()
    other = make_campaign()
    upload(organiser, campaign, {"items.csv": ITEMS})
    job = UploadJob.objects.get()
    assert organiser.send("PUT", upload_url(campaign)).status_code == 405
    assert organiser.send("POST", job_url(job)).status_code == 405
    assert organiser.get(reverse("admin:annotation_campaign_upload", args=[999])).status_code == 404
    elsewhere = reverse("admin:annotation_campaign_upload_job", args=[other.pk, job.pk])
    assert organiser.get(elsewhere).status_code == 404


def test_upload_job_held_by_another_worker_is_left_alone(organiser, upload_dir):
    campaign = make_campaign()
    upload(organiser, campaign, {"items.csv": ITEMS})
    job = UploadJob.objects.get()
    assert job.claim() is not None  # another worker, heartbeat fresh
    assert not execute_upload(UploadJob.objects.get(pk=job.pk))
    assert not Item.objects.exists() and (upload_dir / str(job.pk)).exists()


def test_datafile_list_shows_an_uploaded_file(organiser):
    campaign = make_campaign()
    upload_and_import(organiser, campaign, {"items.csv": ITEMS})
    rows = changelist_rows(organiser.get(reverse("admin:annotation_datafile_changelist")))
    shown = [(r["name"], r["campaign"], r["kind"], r["rows"], r["imported_by"]) for r in rows]
    assert shown == [("items.csv", campaign.name, "Items", "1", "organiser")]


def test_upload_posted_without_a_file_is_a_form_error_and_no_job(organiser):
    """Issue 39: the form took an upload of no file, and its job said "done"."""
    campaign = make_campaign()
    page = organiser.get(upload_url(campaign))
    response = organiser.submit(page, {"kind": "items"}, action=upload_url(campaign))
    assert response.status_code == 200
    assert "This field is required." in text_of(response)
    assert not UploadJob.objects.exists() and not Item.objects.exists()
