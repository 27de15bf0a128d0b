"""Rate limits (annotation/rate_limits.py): counted in the cache every web process shares,
refused with 429 and Retry-After; the annotators' entry link per address."""

import os
import subprocess
import sys

import pytest
from django.core.cache import cache

from annotation import rate_limits
from annotation.models import Annotator
from tests.annotation.test_views import url
from tests.processes import REPO, RedisServer, redis_available
from tests.world import Person


def test_count_refuses_beyond_the_rate_until_the_window_ends():
    rate = (3, 60)
    for _ in range(3):
        rate_limits.count("test", "a", rate, now=600.0)
    with pytest.raises(rate_limits.RateLimited) as refused:
        rate_limits.count("test", "a", rate, now=615.5)
    assert refused.value.retry_after == 45  # the window of 600-660 s ends in 44.5 s
    rate_limits.count("test", "b", rate, now=615.5)  # another client has its own count
    rate_limits.count("other", "a", rate, now=615.5)  # and so has another limit
    rate_limits.count("test", "a", rate, now=660.0)  # the next window starts afresh


def test_count_with_no_rate_counts_nothing():
    for _ in range(1000):
        rate_limits.count("test", "a", None)


def test_count_lets_requests_through_when_the_cache_cannot_be_reached(settings, caplog):
    """The limits guard capacity, not correctness: Redis down must not stop every page."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    for _ in range(3):
        rate_limits.count("test", "a", (1, 60))
    assert "rate limit test not counted" in caplog.text


@pytest.mark.parametrize(
    "meta, address",
    [
        ({"REMOTE_ADDR": "192.0.2.7"}, "192.0.2.7"),
        ({"REMOTE_ADDR": "2001:db8:1:2:3:4:5:6"}, "2001:db8:1:2::/64"),  # a machine's /64
        ({"REMOTE_ADDR": "::ffff:192.0.2.7"}, "192.0.2.7"),
        ({"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "10.0.0.1"}, "127.0.0.1"),
    ],
)
def test_client_address_is_remote_addr_unless_a_header_is_named(rf, meta, address):
    assert rate_limits.client_address(rf.get("/", **meta)) == address


def test_client_address_behind_a_proxy_is_the_last_the_proxy_appended(rf, settings):
    settings.RATE_LIMIT_CLIENT_HEADER = "HTTP_X_FORWARDED_FOR"
    # A client may send its own X-Forwarded-For; the proxy appends the address it saw.
    request = rf.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.9")
    assert rate_limits.client_address(request) == "198.51.100.9"


# The entry link --------------------------------------------------------------------------------


def entry_link(pid: str) -> dict:
    return {"PROLIFIC_PID": pid, "STUDY_ID": "study-1", "SESSION_ID": f"s-{pid}"}


def test_entry_links_beyond_the_rate_of_an_address_get_429(campaign, settings):
    # A day: windows are fixed on the clock, and a short one could end between the requests.
    settings.RATE_LIMIT_ENTRY = (3, 86_400)
    crowd = [Person() for _ in range(4)]
    statuses = [
        person.get(url("entry", campaign), entry_link(f"p{n}"), REMOTE_ADDR="203.0.113.5")
        for n, person in enumerate(crowd)
    ]
    assert [r.status_code for r in statuses] == [302, 302, 302, 429]
    refused = statuses[-1]
    assert 1 <= int(refused["Retry-After"]) <= 86_400
    assert "too many study links" in refused.content.decode()
    assert set(Annotator.objects.values_list("external_id", flat=True)) == {"p0", "p1", "p2"}
    # Another address is not held back, and those in already go on without their link.
    other = Person().get(url("entry", campaign), entry_link("p3"), REMOTE_ADDR="203.0.113.6")
    assert other.status_code == 302
    assert crowd[0].get(url("entry", campaign), REMOTE_ADDR="203.0.113.5").status_code == 200


def test_entry_link_default_rate_takes_a_crowd_behind_one_address(campaign, settings):
    """The default (120 a minute per address) lets a lab or a mobile carrier's shared
    address bring dozens of participants in a minute."""
    assert settings.RATE_LIMIT_ENTRY == (120, 60)
    for n in range(50):
        assert Person().get(url("entry", campaign), entry_link(f"p{n}")).status_code == 302


# Shared by every process -----------------------------------------------------------------------

# Settings and the cache only: no django.setup(), whose imports take seconds.
COUNTER = """
from annotation import rate_limits
allowed = 0
for _ in range(10):
    try:
        rate_limits.count("shared", "one-address", (25, 3600))
        allowed += 1
    except rate_limits.RateLimited:
        pass
print(allowed)
"""


def counting_processes(env: dict, processes: int) -> list[int]:
    """How many requests each of `processes` processes, counting at once, was allowed."""
    env = {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "evalsite.settings"}
    started = [
        subprocess.Popen(
            [sys.executable, "-c", COUNTER], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(processes)
    ]
    return [int(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in started]


@pytest.mark.skipif(not redis_available(), reason="needs redis-server (apt-get install redis)")
def test_processes_share_their_counts_in_redis_exactly(tmp_path):
    """gunicorn's processes with the broker's Redis: 4 processes x 10 requests against a
    limit of 25 are allowed 25 in all, not 25 each (a per-process cache would allow 40)."""
    redis = RedisServer(tmp_path)
    redis.start()
    try:
        env = {"CELERY_BROKER_URL": redis.url, "VAR_DIR": str(tmp_path / "var")}
        assert sum(counting_processes(env, 4)) == 25
    finally:
        redis.kill()


def test_processes_of_one_machine_share_their_counts_in_files(tmp_path):
    """Without Redis the counts live in files under VAR_DIR, which one machine's processes
    share (not exactly at once: the file cache's increment is not atomic)."""
    env = {"CELERY_BROKER_URL": "", "CACHE_URL": "", "VAR_DIR": str(tmp_path / "var")}
    first, second, third = (counting_processes(env, 1)[0] for _ in range(3))
    assert (first, second, third) == (10, 10, 5)


def test_suite_counts_in_its_own_namespace_per_test(settings):
    """tests/conftest.py gives each test its own counts (own_rate_limits)."""
    assert settings.RATE_LIMIT_NAMESPACE
    assert cache.get("nothing") is None
