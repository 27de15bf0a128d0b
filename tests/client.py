"""Test clients whose requests arrive over HTTPS, as a browser's do in production.

The suite runs with production's defaults, which redirect plain HTTP to HTTPS
(SECURE_SSL_REDIRECT): Django's client asks over HTTP unless each call says `secure=True`.

`HttpsClient` skips the CSRF check, as Django's test client does by default. `Browser`,
which the view tests use (see tests/world.py), keeps it: a POST needs the token of a page,
and it gets it the way a person does, by submitting a form that the site showed.
"""

from html.parser import HTMLParser
from urllib.parse import urljoin

from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

ORIGIN = "https://testserver"


class HttpsClient(Client):
    def request(self, **request):
        request.update({"wsgi.url_scheme": "https", "SERVER_PORT": "443"})
        return super().request(**request)


class Form:
    """A form as a page shows it: where it goes, the names of its fields, and the values of
    its hidden ones."""

    def __init__(self, method: str, action: str) -> None:
        self.method = method
        self.action = action
        self.fields: list[str] = []
        self.hidden: dict[str, str] = {}


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._open: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        fields = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._open = Form(fields.get("method", "get").lower(), fields.get("action", ""))
            self.forms.append(self._open)
        elif tag in ("input", "select", "textarea") and self._open is not None:
            name = fields.get("name")
            if name is not None:
                self._open.fields.append(name)
            if name is not None and tag == "input" and fields.get("type") == "hidden":
                self._open.hidden[name] = fields.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = None


def forms_on(page: HttpResponse) -> list[Form]:
    """The forms of an HTML response, their actions made absolute paths."""
    parser = _FormParser()
    parser.feed(page.content.decode())
    for form in parser.forms:
        form.action = urljoin(page.wsgi_request.path, form.action)
    return parser.forms


def csrf_token_of(page: HttpResponse) -> str:
    """The CSRF token in the first form of `page` that carries one."""
    for form in forms_on(page):
        if "csrfmiddlewaretoken" in form.hidden:
            return form.hidden["csrfmiddlewaretoken"]
    raise AssertionError(f"no form with a CSRF token on {page.wsgi_request.path}")


class Browser(HttpsClient):
    """A person's browser: HTTPS, CSRF checked as in production, and on unsafe methods the
    Origin header that browsers send with them (Django checks it on HTTPS requests).

    A plain `post()` carries no token and is refused (403) as a forged request would be.
    `submit()` posts a form the site showed; `send()` is for requests no page offers (an
    outsider trying someone else's address, a method the view does not take), with a valid
    token from a page of the site so that the view itself answers.
    """

    def __init__(self) -> None:
        super().__init__(enforce_csrf_checks=True)

    def request(self, **request):
        if request["REQUEST_METHOD"] not in ("GET", "HEAD", "OPTIONS", "TRACE"):
            request.setdefault("HTTP_ORIGIN", ORIGIN)
        return super().request(**request)

    def submit(
        self, page: HttpResponse, data: dict | None = None, action: str | None = None, **extra
    ) -> HttpResponse:
        """Submit the POST form of `page` whose action is `action` (the page's only POST
        form if not given) with its hidden fields, the CSRF token among them, and `data`
        for the fields a person fills in."""
        assert page.status_code == 200, f"no page to submit: {page.status_code}"
        forms = [form for form in forms_on(page) if form.method == "post"]
        if action is not None:
            forms = [form for form in forms if form.action == action]
        assert len(forms) == 1, f"{len(forms)} POST forms to {action or 'anywhere'} on the page"
        form = forms[0]
        assert "csrfmiddlewaretoken" in form.hidden, f"the form to {form.action} has no token"
        return self.post(form.action, {**form.hidden, **(data or {})}, **extra)

    def send(self, method: str, path: str, data: dict | None = None) -> HttpResponse:
        """`method` to `path` with a CSRF token that passes, taken from a page of the site
        that carries a form (the admin's login page, or its index for staff)."""
        token = csrf_token_of(self.get(reverse("admin:login"), follow=True))
        if method == "POST":
            return self.post(path, {**(data or {}), "csrfmiddlewaretoken": token})
        return self.generic(method, path, headers={"X-CSRFToken": token})


class _ChangeListParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self._in_results = False
        self._field: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        fields = {name: value or "" for name, value in attrs}
        if tag == "table" and fields.get("id") == "result_list":
            self._in_results = True
        elif not self._in_results:
            return
        elif tag == "tr" and self._in_results:
            self.rows.append({})
        elif tag in ("td", "th"):
            classes = fields.get("class", "").split()
            names = [c.removeprefix("field-") for c in classes if c.startswith("field-")]
            self._field = names[0] if names else None
            if self._field is not None:
                self.rows[-1][self._field] = ""
        elif tag == "img" and self._field is not None:  # the admin's boolean icons
            self.rows[-1][self._field] += fields.get("alt", "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._field = None
        elif tag == "table":
            self._in_results = False

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.rows[-1][self._field] += data


def changelist_rows(page: HttpResponse) -> list[dict[str, str]]:
    """The rows of an admin change list as it shows them: one dict per row, from the name of
    each column (its `field-<name>` class) to the text of its cell."""
    assert page.status_code == 200, page.status_code
    parser = _ChangeListParser()
    parser.feed(page.content.decode())
    rows = [{name: " ".join(text.split()) for name, text in row.items()} for row in parser.rows]
    return [row for row in rows if row]  # the header row has no field cells
