"""Request bodies are bounded before anything reads them (evalsite/middleware.py).

The attack: a multipart POST of 1.8 GB to the upload page, from anyone, was spooled to
/tmp before the CSRF token or the user's permissions were looked at. Here the body is a
stream that fails the test if it is read at all: a refused request must be answered from
its headers alone.
"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from annotation.models import DataFile, Judgment, UploadJob
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db

ITEMS = b'mr,ref\n"name[The Vaults], eatType[pub]","The Vaults is a pub."\n'
HUGE = 1_800_000_000


class Unread:
    """A request body that must not be read."""

    def read(self, *args):
        raise AssertionError("the request body was read")

    readline = read


def declare(person, path: str, length: int):
    """A multipart POST that declares `length` bytes and sends none, from a browser that
    holds a CSRF cookie (any page of the site gives one): Django's CSRF check would then
    read the body for the token."""
    person.get(reverse("admin:login"))
    return person.generic(
        "POST",
        path,
        b"-",
        content_type="multipart/form-data; boundary=xyz",
        CONTENT_LENGTH=str(length),
        **{"wsgi.input": Unread()},
    )


def upload_url(campaign) -> str:
    return reverse("admin:annotation_campaign_upload", args=[campaign.pk])


@pytest.mark.parametrize("visitor", ["stranger", "worker", "non_staff", "clerk", "viewer"])
def test_large_upload_from_anyone_who_may_not_upload_is_refused_unread(request, visitor):
    campaign = make_campaign()
    person = request.getfixturevalue(visitor)
    assert declare(person, upload_url(campaign), HUGE).status_code == 413
    assert declare(person, upload_url(campaign), 50_000_000).status_code == 413
    assert not DataFile.objects.exists()


def test_large_body_to_any_other_page_is_refused_unread(organiser, worker, campaign):
    hit = reverse("annotation:start", args=[campaign.slug, "quality"])
    assert declare(worker, hit, 6 * 1024 * 1024).status_code == 413
    change = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    assert declare(organiser, change, 6 * 1024 * 1024).status_code == 413
    assert not Judgment.objects.exists()


def test_upload_over_the_upload_limit_is_refused_unread_even_to_an_organiser(organiser):
    campaign = make_campaign()
    assert declare(organiser, upload_url(campaign), HUGE).status_code == 413


@override_settings(REQUEST_MAX_BYTES=100)
def test_upload_larger_than_other_requests_goes_through_for_an_organiser(organiser, clerk):
    campaign = make_campaign()
    for person in (clerk, organiser):
        data = {"kind": "items", "data_files": SimpleUploadedFile("items.csv", ITEMS)}
        response = person.send("POST", upload_url(campaign), data)
        assert response.status_code == (302 if person is organiser else 413)
    # The organiser's file was taken: it waits, stored, for the worker that imports it.
    [job] = UploadJob.objects.filter(campaign=campaign)
    assert job.created_by.username == "organiser"


def test_request_with_a_bad_length_is_refused(stranger):
    response = stranger.generic("POST", reverse("home"), b"x", CONTENT_LENGTH="lots")
    assert response.status_code == 400
