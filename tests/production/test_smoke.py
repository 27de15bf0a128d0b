"""Smoke test of the production install: the commands of docs/production.md, run as a server
runs them (see conftest.py), and used as a crowd worker and an attacker would, over HTTP."""

import http.cookiejar
import random
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urlencode

import psycopg
import pytest

from annotation.models import QUALITY
from annotation.screening import WORKED_PAIRS
from tests.production.conftest import ORGANISER

pytestmark = [pytest.mark.production, pytest.mark.slow]

TASK = "/annotate/demo/quality/"
NEXT_PAGE = re.compile(rf"{TASK}(hit/\d+|done)/")
CHECK = f"{TASK}check/"
PROTOCOLS = {"e2e", "bootstrap"}
RANKING_BOUND_SECONDS = 90
# What Django's debug pages show and its production error pages never do.
DEBUG_PAGE_MARKS = (
    "Traceback",
    "DEBUG = True",
    "Django tried these URL patterns",
    "DisallowedHost",
)


@dataclass
class Form:
    id: str
    action: str
    inputs: list[tuple[str, str, str]]  # name, type, value

    def hidden(self) -> dict[str, str]:
        return {name: value for name, kind, value in self.inputs if kind == "hidden"}

    def names(self, prefix: str) -> list[str]:
        return [name for name, _, _ in self.inputs if name.startswith(prefix)]


class FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._open: Form | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._open = Form(attrs.get("id") or "", attrs.get("action") or "", [])
            self.forms.append(self._open)
        elif tag == "input" and self._open is not None and attrs.get("name"):
            self._open.inputs.append(
                (attrs["name"], attrs.get("type") or "text", attrs.get("value") or "")
            )

    def handle_endtag(self, tag):
        if tag == "form":
            self._open = None


@dataclass
class Page:
    status: int
    headers: dict
    text: str

    @property
    def location(self) -> str:
        return self.headers.get("Location", "")

    def summary(self) -> str:
        """The page's title, or its start: enough to tell an error page in a message."""
        title = re.search(r"<title>(.*?)</title>", self.text, re.DOTALL)
        return " ".join(title.group(1).split()) if title else self.text[:500]

    def form(self, **attributes: str) -> Form:
        parser = FormParser()
        parser.feed(self.text)
        for form in parser.forms:
            if all(getattr(form, name) == value for name, value in attributes.items()):
                return form
        raise AssertionError(f"no form with {attributes} on the page:\n{self.text[:2000]}")


class NoRedirects(urllib.request.HTTPRedirectHandler):
    # Each redirect is an answer the test checks, so it is returned rather than followed.
    def redirect_request(self, *args, **kwargs):
        return None


class Visitor:
    """A browser as far as the site needs one: cookies and forms, over plain HTTP."""

    def __init__(self, site) -> None:
        self.site = site
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirects()
        )

    def get(self, path: str, **headers: str) -> Page:
        return self._open(urllib.request.Request(self.site.url + path, headers=headers))

    def post(self, path: str, data: dict) -> Page:
        # Browsers send the page's origin with a POST; Django's CSRF check compares it.
        request = urllib.request.Request(
            self.site.url + path, data=urlencode(data).encode(), headers={"Origin": self.site.url}
        )
        return self._open(request)

    def _open(self, request: urllib.request.Request) -> Page:
        try:
            with self.opener.open(request, timeout=30) as response:
                return Page(response.status, dict(response.headers), response.read().decode())
        except urllib.error.HTTPError as answer:
            return Page(answer.code, dict(answer.headers), answer.read().decode(errors="replace"))

    def expect(self, page: Page, status: int, what: str) -> Page:
        assert page.status == status, (
            f"{what}: {page.status}, expected {status} ({page.summary()})\n{self.site.log_tails()}"
        )
        return page


class CrowdWorker(Visitor):
    """A Prolific participant doing quality HITs in the demo campaign."""

    def __init__(self, site, pid: str) -> None:
        super().__init__(site)
        self.pid = pid
        self.scores = random.Random(pid)

    def enter(self) -> str:
        """Follow the study link through the instructions; the path of the first HIT."""
        link = f"{TASK}?PROLIFIC_PID={self.pid}&STUDY_ID=s&SESSION_ID=x"
        page = self.expect(self.get(link), 302, f"entry link {link}")
        assert page.location == TASK, page.location
        instructions = self.expect(self.get(TASK), 200, "instructions")
        start = instructions.form(action=f"{TASK}start/")
        page = self.expect(self.post(start.action, start.hidden()), 302, "start")
        if page.location == CHECK:  # the demo's comprehension check comes first
            page = self.pass_check()
        assert NEXT_PAGE.fullmatch(page.location), page.location
        return page.location

    def pass_check(self) -> Page:
        """Score the worked pair as a careful person does: the scrambled copy lower."""
        check = self.expect(self.get(CHECK), 200, "comprehension check")
        pair = WORKED_PAIRS[QUALITY]
        sentence_first = check.text.index(pair.sentence) < check.text.index(pair.degraded)
        scores = {"score_a": "120", "score_b": "15"}
        if not sentence_first:
            scores = {"score_a": "15", "score_b": "120"}
        form = check.form(id="check-form")
        self.expect(self.post(CHECK, {**form.hidden(), **scores}), 302, "check answered")
        return self.expect(self.get(CHECK), 302, "check passed")

    def submit_hit(self, path: str) -> str:
        """Answer the HIT at `path` as a person would; where the site sends them next."""
        hit = self.expect(self.get(path), 200, f"HIT page {path}").form(id="hit-form")
        answers = hit.hidden()
        for score in hit.names("score_"):
            answers[score] = str(self.scores.randint(1, 300))
            # Quality asks for a coverage box per sentence.
            mark = "perfect_" if self.scores.random() < 0.5 else "misses_"
            answers[score.replace("score_", mark)] = "on"
        page = self.expect(self.post(path, answers), 302, f"submitting {path}")
        assert NEXT_PAGE.fullmatch(page.location), page.location
        return page.location


def ranking_runs(database_url: str) -> list[tuple[str, str, int, str]]:
    """(protocol, status, hits, error) of every ranking run of demo/quality."""
    with psycopg.connect(database_url) as connection:
        return connection.execute(
            "SELECT r.protocol, r.status, r.hits, r.error FROM ranking_rankingrun r"
            " JOIN annotation_campaign c ON c.id = r.campaign_id"
            " JOIN annotation_campaigncriterion k ON k.id = r.criterion_id"
            " WHERE c.slug = 'demo' AND k.name = 'quality' ORDER BY r.id"
        ).fetchall()


def assert_ranked(site, hits: int) -> None:
    """Within the bound, each protocol has a finished run over exactly `hits` HITs, and no
    run failed."""
    deadline = time.monotonic() + RANKING_BOUND_SECONDS
    while True:
        runs = ranking_runs(site.database_url)
        failed = [run for run in runs if run[1] == "failed"]
        assert not failed, f"ranking runs failed: {failed}\n{site.log_tails()}"
        covered = {
            protocol for protocol, status, count, _ in runs if (status, count) == ("done", hits)
        }
        if covered >= PROTOCOLS:
            return
        assert time.monotonic() < deadline, (
            f"no finished ranking over {hits} HITs for {PROTOCOLS - covered} within "
            f"{RANKING_BOUND_SECONDS}s; runs: {runs}\n{site.log_tails()}"
        )
        time.sleep(0.5)


def test_production_site_serves_static_files_without_debug_pages(site):
    visitor = Visitor(site)
    login = visitor.expect(visitor.get("/admin/login/"), 200, "admin login page")
    stylesheets = re.findall(r'href="(/static/admin/css/base[^"]*\.css)"', login.text)
    assert stylesheets, f"the admin login page names no admin stylesheet:\n{login.text[:1500]}"
    # The name the page uses (hashed, where the storage adds a hash) and the plain one.
    for path in {stylesheets[0], "/static/admin/css/base.css"}:
        css = visitor.expect(visitor.get(path), 200, path)
        assert css.headers.get("Content-Type", "").startswith("text/css"), css.headers
        assert "body" in css.text, css.text[:300]

    evil = visitor.get("/admin/login/", Host="evil.example")
    assert evil.status == 400, f"Host: evil.example gave {evil.status}: {evil.summary()}"
    missing = visitor.get("/no/such/page/")
    assert missing.status == 404, f"an unknown URL gave {missing.status}"
    for page in (evil, missing):
        shown = [mark for mark in DEBUG_PAGE_MARKS if mark in page.text]
        assert not shown, f"a debug page was served ({shown}): {page.summary()}"


def test_production_hits_are_ranked_and_outlive_lost_database_connections(site):
    submitted = 0
    for number in range(3):
        worker = CrowdWorker(site, f"smoke-worker-{number}")
        page = worker.enter()
        for _ in range(3):
            page = worker.submit_hit(page)
            submitted += 1
    assert_ranked(site, submitted)

    # The database restarts, or a pooler or firewall drops idle connections: every
    # connection the web and worker processes hold is cut. The next requests must be served
    # and the next HIT ranked, not answered with errors from dead connections.
    assert site.cut_database_connections(), "the site's processes held no connection to cut"

    # More requests than gunicorn has workers, so each worker meets its cut connection;
    # each reads the session and the assignment from the database.
    assert "/hit/" in page, f"the last crowd worker has no HIT left to do: {page}"
    for _ in range(4):
        worker.expect(worker.get(page), 200, f"{page} after the cut")
    CrowdWorker(site, "smoke-latecomer").enter()
    visitor = Visitor(site)
    visitor.expect(visitor.get("/admin/login/"), 200, "admin login page after the cut")
    worker.submit_hit(page)
    assert_ranked(site, submitted + 1)


def test_production_admin_is_styled_and_its_inlines_work_in_a_browser(site, browser):
    """The admin needs its CSS and JavaScript: without them 'Add another Criterion' is
    missing and a campaign saved from the page has no criteria. In the test process's
    Chromium (tests/chromium.py)."""
    page = browser.new_page()
    page.goto(f"{site.url}/admin/login/")
    page.fill("#id_username", ORGANISER["username"])
    page.fill("#id_password", ORGANISER["password"])
    page.click("input[type=submit]")
    page.goto(f"{site.url}/admin/annotation/campaign/add/")
    # Styled: the admin's stylesheet gives its header a coloured background.
    header = page.eval_on_selector("#header", "e => getComputedStyle(e).backgroundColor")
    assert header not in ("rgba(0, 0, 0, 0)", "transparent"), site.log_tails()
    page.fill("#id_name", "Browser pilot")  # the admin's JavaScript fills the slug in
    page.click("text=Add another Criterion")  # made by the admin's inlines.js
    page.fill("input[name='criteria-0-name']", "naturalness")
    page.click("input[name=_save]")
    page.wait_for_url(f"{site.url}/admin/annotation/campaign/")
    with psycopg.connect(site.database_url) as connection:
        rows = connection.execute(
            "SELECT c.name FROM annotation_campaigncriterion c "
            "JOIN annotation_campaign p ON p.id = c.campaign_id WHERE p.slug = 'browser-pilot'"
        ).fetchall()
    assert rows == [("naturalness",)]
