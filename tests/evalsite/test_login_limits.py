"""The admin's login: attempts counted per account and per address (evalsite/views.py),
refused with 429 and Retry-After before the password is checked."""

from django.contrib.auth.models import User
from django.urls import reverse

from tests.client import Browser

LOGIN = reverse("admin:login")


def attempt(username: str, password: str, address: str):
    """A login from a fresh browser at `address`, through the form the page shows."""
    browser = Browser()
    page = browser.get(LOGIN, REMOTE_ADDR=address)
    data = {"username": username, "password": password}
    return browser.submit(page, data, action=LOGIN, REMOTE_ADDR=address)


def logged_in(response) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.wsgi_request.session


def test_login_attempts_at_one_account_beyond_its_rate_get_429(organiser, settings):
    # A day: windows are fixed on the clock, and a short one could end between the requests.
    settings.RATE_LIMIT_LOGIN_ACCOUNT = (3, 86_400)
    # A password spray from many addresses, at one account; its name written otherwise too.
    guesses = [
        attempt(name, "guess", f"198.51.100.{n}")
        for n, name in enumerate(["organiser", "Organiser", "ORGANISER"])
    ]
    assert [r.status_code for r in guesses] == [200, 200, 200]  # the form again, refused
    refused = attempt("organiser", "pw", "198.51.100.9")  # even the right password now
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 86_400
    assert "too many attempts to log in" in refused.content.decode()
    assert not logged_in(refused)
    # Another account, from the same address, is not held back.
    User.objects.create_user("other", password="pw2", is_staff=True)
    assert logged_in(attempt("other", "pw2", "198.51.100.9"))


def test_login_attempts_from_one_address_beyond_its_rate_get_429(organiser, settings):
    # A day: windows are fixed on the clock, and a short one could end between the requests.
    settings.RATE_LIMIT_LOGIN_ADDRESS = (3, 86_400)
    for name in ("admin", "root", "organiser"):  # guessing accounts from one address
        assert attempt(name, "guess", "203.0.113.7").status_code == 200
    refused = attempt("organiser", "pw", "203.0.113.7")
    assert refused.status_code == 429 and not logged_in(refused)
    assert logged_in(attempt("organiser", "pw", "203.0.113.8"))  # another address


def test_login_page_itself_is_never_counted(settings):
    settings.RATE_LIMIT_LOGIN_ADDRESS = (1, 900)
    browser = Browser()
    for _ in range(5):
        assert browser.get(LOGIN).status_code == 200


def test_login_default_rates_let_an_organiser_mistype_a_few_times(organiser, settings):
    assert settings.RATE_LIMIT_LOGIN_ACCOUNT == (10, 900)
    assert settings.RATE_LIMIT_LOGIN_ADDRESS == (30, 900)
    for _ in range(5):
        assert attempt("organiser", "typo", "192.0.2.1").status_code == 200
    assert logged_in(attempt("organiser", "pw", "192.0.2.1"))
