"""An upload imported, and a published dataset loaded, through the real broker and a real
worker process."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Item, PublishedLoad, UploadJob
from tests.annotation.test_admin_published import FORM, webnlg_files, zipped
from tests.conftest import wait_until
from tests.factories import make_campaign

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]

ITEMS = b'mr,ref\n"name[The Vaults], eatType[pub]","The Vaults is a pub."\n'


def finished(job_id):
    job = UploadJob.objects.get(pk=job_id)
    return job if job.status in ("done", "failed") else None


def test_uploaded_items_are_imported_by_the_worker(celery_worker_process, organiser):
    campaign = make_campaign()
    url = reverse("admin:annotation_campaign_upload", args=[campaign.pk])
    data = {"kind": "items", "data_files": [SimpleUploadedFile("items.csv", ITEMS)]}
    response = organiser.submit(organiser.get(url), data, action=url)
    assert response.status_code == 302
    job = wait_until(
        lambda: finished(UploadJob.objects.get().pk),
        timeout=120,
        message="the worker did not import the upload",
    )
    assert job.status == "done", job.error
    assert Item.objects.filter(campaign=campaign).count() == 1
    page = organiser.get(response["Location"]).content.decode()
    assert "items.csv: 1 rows read; created 1 items" in page


def test_published_dataset_is_loaded_by_the_worker(celery_worker_process, organiser):
    data = {"dataset": "webnlg2020", "archive": zipped(webnlg_files())}
    response = organiser.submit(organiser.get(FORM), data, action=FORM)
    assert response.status_code == 302
    job = wait_until(
        lambda: finished_load(PublishedLoad.objects.get().pk),
        timeout=120,
        message="the worker did not load the dataset",
    )
    assert job.status == "done", job.error
    assert Item.objects.filter(campaign__slug="webnlg2020").count() == 2
    assert "loaded 2 items" in organiser.get(response["Location"]).content.decode()


def finished_load(job_id):
    job = PublishedLoad.objects.get(pk=job_id)
    return job if job.status in ("done", "failed") else None
