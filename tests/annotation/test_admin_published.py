"""The admin's "Load a published dataset": the form, a .zip archive or a server folder
queued as a PublishedLoad, loaded by the worker's function (annotation/published_uploads.py),
and the archive's bounds: paths that leave the folder, zip bombs, too many entries."""

import html
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Campaign, Item, Output, PublishedLoad, System
from annotation.published_uploads import (
    PROGRESS,
    execute_published_load,
    job_folder,
    write_progress,
)
from tests.world import logged_in

pytestmark = pytest.mark.django_db

FORM = reverse("admin:annotation_campaign_load_published")
TRIPLES = {"1": [["Alan_Bean", "occupation", "Test_pilot"]], "2": [["Rome", "country", "Italy"]]}
TEAM_A = "Alan Bean was a test pilot.\nRome is in Italy.\n"


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.UPLOAD_DIR = tmp_path / "uploads"
    settings.PUBLISHED_DATA_DIR = ""
    return settings.UPLOAD_DIR


def webnlg_files(triples: str | None = None) -> dict[str, bytes]:
    """A two-item WebNLG+ 2020 folder, as its paths and contents."""
    return {
        "webnlg2020/inputs/en_sampled_triples.json": (triples or json.dumps(TRIPLES)).encode(),
        "webnlg2020/outputs/Team_A.primary.en": TEAM_A.encode(),
    }


def zipped(files: dict[str, bytes], name="webnlg2020.zip") -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/zip")


def job_url(job) -> str:
    return reverse("admin:annotation_campaign_load_published_job", args=[job.pk])


def send_form(person, **data):
    return person.submit(person.get(FORM), {"dataset": "webnlg2020", **data}, action=FORM)


def load_through_the_admin(person, **data) -> tuple[PublishedLoad, str]:
    """Fill in the form, let the worker's function load, and read the job's page."""
    response = send_form(person, **data)
    assert response.status_code == 302, text_of(response)[:2000]
    job = PublishedLoad.objects.latest("pk")
    assert response["Location"] == job_url(job)
    assert execute_published_load(job)
    job.refresh_from_db()
    return job, text_of(person.get(job_url(job)))


def text_of(response) -> str:
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split()))


def test_campaign_list_links_to_the_load_page(organiser, viewer):
    changelist = reverse("admin:annotation_campaign_changelist")
    assert FORM in organiser.get(changelist).content.decode()
    assert FORM not in viewer.get(changelist).content.decode()


def test_load_queues_a_job_and_stores_the_archive(organiser, upload_dir):
    response = send_form(organiser, archive=zipped(webnlg_files()))
    job = PublishedLoad.objects.get()
    assert response.status_code == 302 and response["Location"] == job_url(job)
    assert (job.status, job.dataset, job.campaign_slug) == ("queued", "webnlg2020", "webnlg2020")
    assert (job.archive, job.folder, job.created_by) == ("webnlg2020.zip", "", organiser.user)
    assert zipfile.is_zipfile(job_folder(job) / "dataset.zip")
    assert not Campaign.objects.exists()  # the worker loads it, not the request
    page = organiser.get(job_url(job))
    assert "Waiting for a worker" in text_of(page)
    assert 'http-equiv="refresh"' in page.content.decode()


def test_load_from_an_archive_makes_the_campaign_and_shows_what_it_brought(organiser):
    job, page = load_through_the_admin(organiser, archive=zipped(webnlg_files()), campaign="web")
    campaign = Campaign.objects.get(slug="web")
    assert (job.status, job.campaign, job.error) == ("done", campaign, "")
    assert "Loaded." in page and "'web': loaded 2 items, 2 outputs of Team_A" in page
    assert campaign.items.get(external_id="2").input_data == {"triples": [TRIPLES["2"][0]]}
    assert Output.objects.get(item__external_id="1").text == "Alan Bean was a test pilot."
    assert campaign.criteria.count() == 2 and campaign.standard_input_kind == "triples"
    assert not job_folder(job).exists()  # the archive and what it unpacked to are removed


def test_load_again_changes_nothing(organiser):
    load_through_the_admin(organiser, archive=zipped(webnlg_files()))
    job, page = load_through_the_admin(organiser, archive=zipped(webnlg_files()))
    assert job.status == "done" and "nothing new to load" in page
    assert Item.objects.count() == 2 and Output.objects.count() == 2


def test_load_error_names_the_file_and_line_and_keeps_nothing(organiser):
    broken = webnlg_files(triples='{"1": [["a", "b", "c"]],\n "2": oops}')
    job, page = load_through_the_admin(organiser, archive=zipped(broken))
    assert job.status == "failed"
    assert "en_sampled_triples.json" in job.error and "line 2" in job.error
    assert "Nothing from this load was kept" in page
    assert not Campaign.objects.exists() and not System.objects.exists()


def test_load_refuses_an_archive_entry_outside_its_folder(organiser, upload_dir):
    files = {**webnlg_files(), "../../escaped.txt": b"x"}
    job, page = load_through_the_admin(organiser, archive=zipped(files))
    assert job.status == "failed"
    assert "entry '../../escaped.txt' points outside the archive's folder" in page
    assert not list(upload_dir.parent.rglob("escaped.txt"))
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("name", ["/etc/evil", "C:/evil", "a\\..\\..\\evil"])
def test_load_refuses_absolute_and_windows_entry_names(organiser, name):
    job, _ = load_through_the_admin(organiser, archive=zipped({**webnlg_files(), name: b"x"}))
    assert job.status == "failed" and "points outside the archive's folder" in job.error


def test_load_refuses_an_archive_that_holds_a_link(organiser):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, content in webnlg_files().items():
            archive.writestr(path, content)
        link = zipfile.ZipInfo("webnlg2020/outputs/B.primary.en")
        link.external_attr = 0o120777 << 16  # a symbolic link, to /etc/passwd
        archive.writestr(link, "/etc/passwd")
    upload = SimpleUploadedFile("w.zip", buffer.getvalue())
    job, _ = load_through_the_admin(organiser, archive=upload)
    assert job.status == "failed" and "is a link" in job.error
    assert not Campaign.objects.exists()


def test_load_refuses_a_zip_bomb_before_unpacking_it(organiser, settings, upload_dir):
    settings.PUBLISHED_UNPACKED_MAX_BYTES = 1_000_000
    bomb = zipped({**webnlg_files(), "webnlg2020/zeros": bytes(5_000_000)})
    assert bomb.size < 20_000  # five megabytes of zeros pack to a few kilobytes
    job, page = load_through_the_admin(organiser, archive=bomb)
    assert job.status == "failed"
    assert "unpacks to 5,000," in page and "the limit is 1,000,000" in page
    assert not Campaign.objects.exists()


def test_load_refuses_an_archive_of_too_many_entries(organiser, settings):
    settings.PUBLISHED_UNPACKED_MAX_FILES = 10
    files = {**webnlg_files(), **{f"webnlg2020/extra/{n}.txt": b"" for n in range(20)}}
    job, _ = load_through_the_admin(organiser, archive=zipped(files))
    assert job.status == "failed" and "22 entries; the limit is 10" in job.error


def test_load_of_a_file_that_is_no_zip_fails_with_a_reason(organiser):
    upload = SimpleUploadedFile("data.zip", b"not a zip at all")
    job, _ = load_through_the_admin(organiser, archive=upload)
    assert job.status == "failed" and "data.zip: not a readable .zip archive" in job.error


def test_load_form_refuses_other_files_and_nothing_is_queued(organiser, settings):
    response = send_form(organiser, archive=SimpleUploadedFile("triples.json", b"{}"))
    assert response.status_code == 200 and "a .zip archive, please" in text_of(response)
    settings.IMPORT_MAX_BYTES = 100
    response = send_form(organiser, archive=zipped(webnlg_files()))
    assert "the limit is 100 bytes" in text_of(response)
    response = send_form(organiser)
    assert "Give a .zip archive, one of the two." in text_of(response)
    assert not PublishedLoad.objects.exists()


def test_server_folders_are_off_without_published_data_dir(organiser, tmp_path):
    (tmp_path / "webnlg2020").mkdir()
    page = organiser.get(FORM)
    assert 'name="folder"' not in page.content.decode()
    assert "the server has no PUBLISHED_DATA_DIR" in text_of(page)
    response = send_form(organiser, folder="webnlg2020")  # a field the page did not show
    assert "Give a .zip archive, one of the two." in text_of(response)
    assert not PublishedLoad.objects.exists()


def write_folder(base: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def test_load_from_a_folder_under_published_data_dir(organiser, settings, tmp_path):
    data = tmp_path / "data"
    write_folder(data, webnlg_files())
    (tmp_path / "secret").mkdir()
    (data / "outside").symlink_to(tmp_path / "secret")
    settings.PUBLISHED_DATA_DIR = str(data)
    page = organiser.get(FORM).content.decode()
    assert '<option value="webnlg2020">' in page and "outside" not in page
    job, text = load_through_the_admin(organiser, folder="webnlg2020")
    assert job.status == "done" and "server folder webnlg2020" in text
    assert Campaign.objects.get(slug="webnlg2020").items.count() == 2
    for name in ("outside", "../secret", "/etc"):
        response = send_form(organiser, folder=name)
        assert response.status_code == 200 and "Select a valid choice" in text_of(response)
    assert PublishedLoad.objects.count() == 1


def test_load_of_a_folder_fails_closed_once_the_setting_is_gone(organiser, settings, tmp_path):
    write_folder(tmp_path / "data", webnlg_files())
    settings.PUBLISHED_DATA_DIR = str(tmp_path / "data")
    send_form(organiser, folder="webnlg2020")
    settings.PUBLISHED_DATA_DIR = ""
    job = PublishedLoad.objects.get()
    assert execute_published_load(job)
    job.refresh_from_db()
    assert job.status == "failed" and "not a folder under PUBLISHED_DATA_DIR" in job.error
    assert not Campaign.objects.exists()


def test_load_pages_refuse_who_may_not_add_campaigns(viewer, clerk, organiser):
    job, _ = load_through_the_admin(organiser, archive=zipped(webnlg_files()))
    for person in (viewer, clerk):
        assert person.get(FORM).status_code == 403
        assert person.send("POST", FORM, {"dataset": "webnlg2020"}).status_code == 403
    assert viewer.get(job_url(job)).status_code == 200  # may view, as campaigns
    assert clerk.get(job_url(job)).status_code == 403
    assert PublishedLoad.objects.count() == 1


def test_load_job_page_is_get_only(organiser):
    job, _ = load_through_the_admin(organiser, archive=zipped(webnlg_files()))
    assert organiser.send("POST", job_url(job)).status_code == 405


def test_load_of_the_real_rotowire_games_from_an_archive(organiser, rotowire_data):
    files = {
        f"rotowire/{path.relative_to(rotowire_data)}": path.read_bytes()
        for path in rotowire_data.rglob("*")
        if path.is_file()
    }
    job, page = load_through_the_admin(organiser, dataset="rotowire", archive=zipped(files))
    assert job.status == "done", job.error
    assert "loaded 90 items, 90 outputs of human, 90 outputs of accuracy-shared-task" in page
    assert "90 of 90 texts share at least 90% of their words" in page
    assert Campaign.objects.get(slug="rotowire").items.count() == 90


def test_running_load_shows_its_latest_step(organiser):
    send_form(organiser, archive=zipped(webnlg_files()))
    job = PublishedLoad.objects.get()
    job.claim()
    write_progress(job_folder(job) / PROGRESS, "team-a: 2/2 outputs")
    page = text_of(organiser.get(job_url(job)))
    assert "Loading: team-a: 2/2 outputs. Nothing is kept unless all of it loads." in page


def test_loading_into_an_existing_campaign_needs_the_change_permission(organiser):
    adder = logged_in("adder", is_staff=True)
    adder.user.user_permissions.add(
        Permission.objects.get(codename="add_campaign", content_type__app_label="annotation")
    )
    load_through_the_admin(organiser, archive=zipped(webnlg_files()))
    response = send_form(adder, archive=zipped(webnlg_files()))
    assert "You may not change the campaign 'webnlg2020'." in text_of(response)
    response = send_form(adder, archive=zipped(webnlg_files()), campaign="mine")
    assert response.status_code == 302
    assert PublishedLoad.objects.filter(campaign_slug="mine", created_by=adder.user).exists()


def test_archive_of_files_at_its_top_level_loads_too(organiser):
    flat = {name.removeprefix("webnlg2020/"): content for name, content in webnlg_files().items()}
    flat["__MACOSX/._inputs"] = b"resource fork"
    job, _ = load_through_the_admin(organiser, archive=zipped(flat))
    assert job.status == "done", job.error
    assert Item.objects.count() == 2


# Files the data names (issue 39) ----------------------------------------------------------------

SECRET = "export SECRET_KEY=the-workers-own-secret"


def logicnlg_files(table_id: str) -> dict[str, bytes]:
    """A LogicNLG folder whose one table is named `table_id` in test_lm.json and in every
    outputs file (a load checks that the outputs name the same tables)."""
    files = {
        "logicnlg/data/test_lm.json": json.dumps({table_id: [["s", [0], "title"]]}).encode(),
        "logicnlg/tables/t.html.csv": b"a#b\n1#2\n",
    }
    for name in ("field_infusing.json", "GPT_gpt2_12.65.json", "GPT_gpt2_C2F_13.35.json"):
        files[f"logicnlg/outputs/{name}"] = json.dumps({table_id: ["a statement"]}).encode()
    return files


@pytest.fixture
def secret_file(tmp_path) -> Path:
    """A file of the worker's, outside any dataset: a valid LogicNLG table, so that a load
    which opened it would succeed and put its first line into the items."""
    path = tmp_path / "worker" / "env.html.csv"
    path.parent.mkdir()
    path.write_text(f"{SECRET}#b\n1#2\n")
    return path


def nothing_of_the_secret_anywhere(page: str) -> None:
    assert SECRET not in page
    for item in Item.objects.all():
        assert SECRET not in json.dumps(item.input_data)
    assert not Item.objects.exists() and not Campaign.objects.filter(slug="logicnlg").exists()


@pytest.mark.parametrize("table_id", ["{secret}", "../../../worker/env.html.csv"])
def test_logicnlg_table_id_naming_a_file_outside_the_archive_is_refused(
    organiser, secret_file, table_id
):
    table_id = table_id.format(secret=secret_file)
    archive = zipped(logicnlg_files(table_id), name="logicnlg.zip")
    job, page = load_through_the_admin(organiser, dataset="logicnlg", archive=archive)
    assert job.status == "failed"
    assert "not a table file name inside the dataset's folder" in job.error
    assert "Nothing from this load was kept" in page
    nothing_of_the_secret_anywhere(page)


def test_logicnlg_table_id_of_proc_self_environ_shows_none_of_its_bytes(organiser):
    archive = zipped(logicnlg_files("/proc/self/environ"), name="logicnlg.zip")
    job, page = load_through_the_admin(organiser, dataset="logicnlg", archive=archive)
    assert job.status == "failed"
    assert (
        job.error == "tables//proc/self/environ: not a table file name inside the dataset's folder"
    )
    environ = Path("/proc/self/environ").read_bytes().decode(errors="replace")
    assert not any(part[:16] in page for part in environ.split("\0") if len(part) >= 16)


def test_server_folder_table_linked_to_a_file_outside_is_refused(
    organiser, settings, tmp_path, secret_file
):
    data = tmp_path / "data"
    write_folder(data, logicnlg_files("t.html.csv"))
    table = data / "logicnlg" / "tables" / "t.html.csv"
    table.unlink()
    table.symlink_to(secret_file)
    settings.PUBLISHED_DATA_DIR = str(data)
    job, page = load_through_the_admin(organiser, dataset="logicnlg", folder="logicnlg")
    assert job.status == "failed"
    assert job.error == "tables/t.html.csv: leads outside the dataset's folder: refused"
    nothing_of_the_secret_anywhere(page)


def test_server_folder_e2e_outputs_linked_outside_are_refused(
    organiser, settings, tmp_path, secret_file
):
    data = tmp_path / "data"
    write_folder(data, {"e2e/testset_w_refs.csv": b"mr,ref\n"})
    (data / "e2e" / "outputs").mkdir()
    (data / "e2e" / "outputs" / "tgen.tsv").symlink_to(secret_file)
    settings.PUBLISHED_DATA_DIR = str(data)
    job, page = load_through_the_admin(organiser, dataset="e2e", folder="e2e")
    assert job.status == "failed"
    assert job.error == "outputs/tgen.tsv: leads outside the dataset's folder: refused"
    assert SECRET not in page and not System.objects.exists()


def test_a_100000_deep_test_lm_json_fails_the_load_with_a_clear_error(organiser):
    files = logicnlg_files("t.html.csv")
    files["logicnlg/data/test_lm.json"] = b"[" * 100_000 + b"]" * 100_000
    archive = zipped(files, name="logicnlg.zip")
    job, page = load_through_the_admin(organiser, dataset="logicnlg", archive=archive)
    assert (job.status, job.error) == (
        "failed",
        "test_lm.json, line 1: nested deeper than 32 levels",
    )
    assert "Traceback" not in page and "RecursionError" not in page


def test_an_archive_entry_nested_past_the_limit_is_refused(organiser):
    deep = "webnlg2020/" + "d/" * 40 + "x.txt"
    job, _ = load_through_the_admin(organiser, archive=zipped({**webnlg_files(), deep: b"x"}))
    assert job.status == "failed" and "is nested too deep or named too long" in job.error
