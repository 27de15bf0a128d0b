"""Production serves the admin's CSS and JS from the web process (WhiteNoise), once
collectstatic has run: nothing else in front of gunicorn needs to know about /static/."""

import gzip

import pytest
from django.core.management import call_command

from tests.client import HttpsClient


# Slow (about 9 s: collectstatic, then a gunicorn process): CI.
@pytest.mark.slow
def test_static_files_are_served_by_the_web_process_after_collectstatic(tmp_path, settings):
    settings.STATIC_ROOT = str(tmp_path / "static")
    call_command("collectstatic", "--noinput", verbosity=0)
    client = HttpsClient()  # a new one: WhiteNoise reads STATIC_ROOT when it starts

    response = client.get("/static/admin/css/base.css")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")
    assert b"body" in b"".join(response.streaming_content)

    compressed = client.get("/static/admin/js/core.js", headers={"accept-encoding": "gzip"})
    assert compressed["Content-Encoding"] == "gzip"
    assert b"function" in gzip.decompress(b"".join(compressed.streaming_content))
