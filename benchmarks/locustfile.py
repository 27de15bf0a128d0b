"""Crowd workers for benchmarks/bench_load.py: each user does whole visits as a Prolific
worker would (entry link, instructions, start, 5-10 HITs each read then submitted, finish).

Run by bench_load.py (locust headless); the scenario comes from the environment:

    LOAD_CAMPAIGN    the campaign's slug (criterion quality)
    LOAD_SCENARIO    "saturation": visits back to back, no think time;
                     "launch": one visit per user, a think time per HIT around 10 s
"""

import itertools
import os
import random
import re
import uuid

import gevent
from locust import FastHttpUser, task
from locust.exception import StopUser

CAMPAIGN = os.environ.get("LOAD_CAMPAIGN", "load")
SCENARIO = os.environ.get("LOAD_SCENARIO", "saturation")
BASE = f"/annotate/{CAMPAIGN}/quality/"
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SCORE = re.compile(r'name="score_(\d+)"')
KEY = re.compile(r'name="submission_key" value="([^"]*)"')
visits = itertools.count()


def think() -> float:
    """Seconds spent on one HIT in the launch scenario: around 10, never under 3."""
    return max(3.0, random.gauss(10.0, 3.0)) if SCENARIO == "launch" else 0.0


class CrowdWorker(FastHttpUser):
    # Every request is checked by hand (status, location), so none follows redirects.
    def on_start(self) -> None:
        self.client.client.max_redirects = 0

    @task
    def visit(self) -> None:
        self.client.cookiejar.clear()
        pid = f"load-{uuid.uuid4().hex[:16]}"
        self.expect("entry", "GET", f"{BASE}?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID={pid}", 302)
        page = self.expect("instructions", "GET", BASE, 200).text
        token = CSRF.search(page).group(1)
        where = self.expect("start", "POST", f"{BASE}start/", 302, {"csrfmiddlewaretoken": token})
        for _ in range(random.randint(5, 10)):
            if "/hit/" not in where:
                break
            where = self.do_hit(where)
        if "/hit/" in where:
            self.expect("finish", "POST", f"{BASE}finish/", 302, {"csrfmiddlewaretoken": token})
        next(visits)
        if SCENARIO == "launch":
            raise StopUser()

    def do_hit(self, hit_url: str) -> str:
        page = self.expect("HIT GET", "GET", hit_url, 200).text
        data = {
            "csrfmiddlewaretoken": CSRF.search(page).group(1),
            "submission_key": KEY.search(page).group(1),
        }
        for position in SCORE.findall(page):
            data[f"score_{position}"] = str(random.randint(10, 150))
            data[f"perfect_{position}"] = "on"
        self.wait_think(think())
        return self.expect("HIT POST", "POST", hit_url, 302, data)

    def wait_think(self, seconds: float) -> None:
        if seconds:
            gevent.sleep(seconds)

    def expect(self, name: str, method: str, url: str, status: int, data=None):
        """The response of one request, failed in the statistics unless it has `status`;
        for a redirect, the address it leads to."""
        with self.client.request(
            method, url, data=data, name=name, catch_response=True, allow_redirects=False
        ) as response:
            if response.status_code != status:
                response.failure(f"{name}: {response.status_code}, expected {status}")
                raise StopUser() if SCENARIO == "launch" else RuntimeError(name)
            if status == 302:
                return response.headers.get("Location", "")
            return response
