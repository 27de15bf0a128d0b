import pytest


@pytest.mark.celery
def test_celery_worker_starts_on_the_test_database(celery_worker_process):
    assert "ready." in celery_worker_process.read_text()
