import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import DataFile, Item
from tests.factories import make_annotator, make_campaign, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db

ITEMS = b'mr,ref\n"name[The Vaults], eatType[pub]","The Vaults is a pub."\n'


def upload(client, campaign, content: bytes, name="items.csv", **fields):
    url = reverse("admin:annotation_campaign_upload", args=[campaign.pk])
    data = {"kind": "items", "file": SimpleUploadedFile(name, content), **fields}
    return client.post(url, data, follow=True)


def test_admin_upload_imports_items(admin_client):
    campaign = make_campaign()
    response = upload(admin_client, campaign, ITEMS)
    assert response.status_code == 200
    assert "1 rows read; created 1 items" in response.content.decode()
    assert Item.objects.filter(campaign=campaign).count() == 1
    assert DataFile.objects.get(campaign=campaign).imported_by.username == "admin"


def test_admin_upload_bad_file_shows_error_and_writes_nothing(admin_client):
    campaign = make_campaign()
    response = upload(admin_client, campaign, b"ref\nx\n")
    # The admin capitalises the first letter of messages.
    assert "Items.csv, line 1: missing column(s): mr Nothing was imported." in (
        response.content.decode()
    )
    assert not Item.objects.filter(campaign=campaign).exists()
    assert not DataFile.objects.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'{"id": "1", "kind": ["mr"], "input": {}}\n',
            "Items.jsonl, line 1, column kind: unknown",
        ),
        (b'{"id": "1", "kind": "mr", "input": NaN}\n', "Items.jsonl, line 1, column input: NaN"),
        (b'{"id": "1", "kind": "mr", "x": "\\ud800"}\n', "Items.jsonl, line 1, column x: contains"),
        (b"[" * 100_000 + b"]" * 100_000, "Items.jsonl, line 1: nested deeper than 32 levels"),
    ],
    ids=["kind-list", "nan", "surrogate", "deep"],
)
def test_admin_upload_hostile_file_shows_error_and_writes_nothing(admin_client, content, message):
    campaign = make_campaign()
    response = upload(admin_client, campaign, content, name="items.jsonl")
    assert response.status_code == 200
    assert message in response.content.decode()
    assert "Nothing was imported." in response.content.decode()
    assert not Item.objects.exists() and not DataFile.objects.exists()


def test_admin_upload_streams_a_file_spooled_to_disk(admin_client, settings):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 10  # the upload becomes a temporary file
    campaign = make_campaign()
    response = upload(admin_client, campaign, ITEMS)
    assert "1 rows read; created 1 items" in response.content.decode()
    assert Item.objects.filter(campaign=campaign).count() == 1


def test_admin_upload_outputs_need_a_system(admin_client):
    campaign = make_campaign()
    response = upload(admin_client, campaign, b"MR\toutput\n", kind="outputs")
    assert "Outputs need a system" in response.content.decode()


def test_admin_upload_outsider_cannot_import(client, django_user_model):
    campaign = make_campaign()
    user = django_user_model.objects.create_user("annotator", password="x")
    client.force_login(user)
    upload(client, campaign, ITEMS)
    assert not Item.objects.filter(campaign=campaign).exists()


def test_admin_exclude_action_is_reversible(admin_client):
    annotator = make_annotator()
    url = reverse("admin:annotation_annotator_changelist")
    admin_client.post(url, {"action": "exclude_from_rankings", "_selected_action": [annotator.pk]})
    annotator.refresh_from_db()
    assert annotator.is_excluded
    admin_client.post(url, {"action": "include_in_rankings", "_selected_action": [annotator.pk]})
    annotator.refresh_from_db()
    assert not annotator.is_excluded


@pytest.mark.parametrize(
    ("model", "shows"),
    [
        ("campaign", "Campaign"),
        ("item", "Place"),
        ("system", "sys1"),
        ("output", "Output of"),
        ("annotator", "worker-"),
        ("hit", "quality"),
        ("assignment", "submitted"),
        ("judgment", "sys1"),
        ("datafile", "0 data files"),
    ],
)
def test_admin_changelists_render(admin_client, model, shows):
    campaign, systems, items = make_system_set()
    make_judged_hit(list(items[0].outputs.order_by("system__name")[:3]), [100, 50, 50])
    response = admin_client.get(reverse(f"admin:annotation_{model}_changelist"))
    assert response.status_code == 200
    assert shows in response.content.decode()
