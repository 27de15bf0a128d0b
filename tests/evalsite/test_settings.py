"""Settings fail closed: production is the default, development says so.

Most tests start Python afresh with a cleaned environment, since settings are read once per
process, and pytest-django turns DEBUG off in this one whatever the environment says.
"""

import ast
import os
import re
import secrets
import subprocess
import sys

import pytest
from django.conf import settings

from evalsite.settings import secret_key_problem
from tests.processes import REPO

# A key as production needs one: long and random, made afresh for this run.
KEY = secrets.token_urlsafe(50)


def clean_env(tmp_path, **variables: str) -> dict:
    """Only what Python needs, a var/ of the test's own, and `variables`."""
    return {"PATH": os.environ["PATH"], "VAR_DIR": str(tmp_path / "var"), **variables}


def run_python(code: str, env: dict) -> subprocess.CompletedProcess:
    env = {**env, "DJANGO_SETTINGS_MODULE": "evalsite.settings"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )


def settings_in(env: dict, *names: str) -> dict:
    """The named settings as a fresh process with `env` sees them: read from the settings
    module alone, as django.setup() reads them first; not after setup, whose import of the
    apps (the engines' numpy, scipy and numba) takes some 3 s a process, 0.2 s without."""
    code = (
        "from django.conf import settings as s; "
        f"print({{name: getattr(s, name) for name in {names!r}}})"
    )
    result = run_python(code, env)
    assert result.returncode == 0, result.stderr
    return ast.literal_eval(result.stdout)


def production_guide_environment() -> dict:
    """The NAME=value lines of the first code block of docs/production.md."""
    guide = (REPO / "docs" / "production.md").read_text()
    block = guide.split("```", 2)[1]
    lines = re.findall(r"^([A-Z_]+)=(\S*)", block, flags=re.MULTILINE)
    assert lines, "no NAME=value lines in docs/production.md's first code block"
    return dict(lines)


def test_settings_debug_is_off_in_the_suite(tmp_path):
    assert settings.DEBUG is False
    # pytest-django turns DEBUG off in this process anyway: ask a fresh one with the
    # environment the suite runs in (bin/test leaves DEBUG unset).
    env = {**os.environ, "VAR_DIR": str(tmp_path / "var")}
    assert settings_in(env, "DEBUG", "SECURE_SSL_REDIRECT") == {
        "DEBUG": False,
        "SECURE_SSL_REDIRECT": True,
    }


def test_settings_without_secret_key_refuse_to_start(tmp_path):
    result = run_python("import django; django.setup()", clean_env(tmp_path))
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set" in result.stderr
    assert "DEBUG=true" in result.stderr


@pytest.mark.parametrize(
    "key",
    [*settings.DEVELOPMENT_SECRET_KEYS, "django-insecure-" + secrets.token_urlsafe(50)],
    ids=["old-settings-default", "bin-serve", "startproject"],
)
def test_settings_refuse_a_public_development_key(tmp_path, key):
    result = run_python("import django; django.setup()", clean_env(tmp_path, SECRET_KEY=key))
    assert "ImproperlyConfigured: SECRET_KEY is not set (or is a public" in result.stderr


@pytest.mark.parametrize(
    "key",
    ["abc", "x" * 49, "ab" * 40, "test-only-secret-key-from-bin-test", "ci-only-secret-key"],
    ids=["short", "49-characters", "2-distinct", "old-bin-test-key", "old-ci-key"],
)
def test_settings_refuse_a_weak_key(tmp_path, key):
    result = run_python("import django; django.setup()", clean_env(tmp_path, SECRET_KEY=key))
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is weak (" in result.stderr
    assert "at least 50 and 5 are needed" in result.stderr


def test_settings_accept_a_weak_key_in_debug(tmp_path):
    env = clean_env(tmp_path, SECRET_KEY="abc", DEBUG="true")
    assert settings_in(env, "SECRET_KEY") == {"SECRET_KEY": "abc"}


def test_settings_suite_key_is_strong():
    # bin/test and .ci/run make a key for each run unless given one: the suite starts with it.
    assert secret_key_problem(settings.SECRET_KEY) == ""
    for script in ("bin/test", ".ci/run"):
        line = re.search(r"^export SECRET_KEY=.*$", (REPO / script).read_text(), re.MULTILINE)
        assert line and "secrets.token_urlsafe(50)" in line[0], script


def test_settings_defaults_without_debug_are_secure(tmp_path):
    names = (
        "DEBUG",
        "ALLOWED_HOSTS",
        "SECURE_SSL_REDIRECT",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_PROXY_SSL_HEADER",
    )
    assert settings_in(clean_env(tmp_path, SECRET_KEY=KEY), *names) == {
        "DEBUG": False,
        "ALLOWED_HOSTS": ["localhost", "127.0.0.1", "[::1]"],
        "SECURE_SSL_REDIRECT": True,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_PROXY_SSL_HEADER": None,
    }


def test_settings_plain_http_trial_says_so(tmp_path):
    env = clean_env(tmp_path, SECRET_KEY=KEY, SECURE_HTTPS="false")
    names = ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "SECURE_HSTS_SECONDS")
    assert settings_in(env, *names) == {
        "SECURE_SSL_REDIRECT": False,
        "SESSION_COOKIE_SECURE": False,
        "SECURE_HSTS_SECONDS": 0,
    }


def test_settings_debug_runs_without_a_key_and_without_https(tmp_path):
    env = clean_env(tmp_path, DEBUG="true")
    shown = settings_in(env, "DEBUG", "SECRET_KEY", "SECURE_SSL_REDIRECT")
    assert shown == {
        "DEBUG": True,
        "SECRET_KEY": "django-insecure-development-only",
        "SECURE_SSL_REDIRECT": False,
    }


def test_settings_proxy_header_and_origins_come_from_the_environment(tmp_path):
    env = clean_env(
        tmp_path,
        SECRET_KEY=KEY,
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
        CSRF_TRUSTED_ORIGINS="https://eval.example.org, https://other.example.org",
        ALLOWED_HOSTS="eval.example.org",
    )
    names = ("SECURE_PROXY_SSL_HEADER", "CSRF_TRUSTED_ORIGINS", "ALLOWED_HOSTS")
    assert settings_in(env, *names) == {
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
        "CSRF_TRUSTED_ORIGINS": ["https://eval.example.org", "https://other.example.org"],
        "ALLOWED_HOSTS": ["eval.example.org"],
    }


@pytest.mark.parametrize(
    "variable, value",
    [
        ("DEBUG", "ture"),
        ("SECURE_HTTPS", "flase"),
        ("SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto"),
        ("RANKING_GPU", "on"),
        ("RATE_LIMIT_API", "600"),
        ("RATE_LIMIT_ENTRY", "0/60"),
        ("RATE_LIMIT_LOGIN_ACCOUNT", "10/100000"),
        ("CACHE_URL", "memcached://cache:11211"),
        ("RATE_LIMIT_CLIENT_HEADER", "X-Forwarded-For"),
    ],
)
def test_settings_misspelt_values_are_refused(tmp_path, variable, value):
    env = clean_env(tmp_path, SECRET_KEY=KEY, **{variable: value})
    result = run_python("import django; django.setup()", env)
    assert f"ImproperlyConfigured: {variable}=" in result.stderr


def test_settings_rate_limits_are_on_unless_turned_off(tmp_path):
    names = ("RATE_LIMIT_API", "RATE_LIMIT_LOGIN_ACCOUNT", "RATE_LIMIT_ENTRY", "API_TOKEN_DAYS")
    defaults = settings_in(clean_env(tmp_path, SECRET_KEY=KEY), *names)
    assert defaults == {
        "RATE_LIMIT_API": (600, 60),
        "RATE_LIMIT_LOGIN_ACCOUNT": (10, 900),
        "RATE_LIMIT_ENTRY": (120, 60),
        "API_TOKEN_DAYS": 90,
    }
    env = clean_env(tmp_path, SECRET_KEY=KEY, RATE_LIMIT_API="50/10", RATE_LIMIT_ENTRY="off")
    chosen = settings_in(env, "RATE_LIMIT_API", "RATE_LIMIT_ENTRY")
    assert chosen == {"RATE_LIMIT_API": (50, 10), "RATE_LIMIT_ENTRY": None}


def test_settings_count_rates_where_every_web_process_sees_them(tmp_path):
    """A per-process memory cache would let each gunicorn process allow the whole limit:
    the counts go to the broker's Redis where there is one, else to files under VAR_DIR."""
    redis = "redis://:pw@redis.internal:6379/0"
    env = clean_env(tmp_path, SECRET_KEY=KEY, CELERY_BROKER_URL=redis)
    cache = settings_in(env, "CACHES")["CACHES"]["default"]
    assert (cache["BACKEND"], cache["LOCATION"]) == (
        "django.core.cache.backends.redis.RedisCache",
        redis,
    )
    cache = settings_in(clean_env(tmp_path, SECRET_KEY=KEY), "CACHES")["CACHES"]["default"]
    assert cache["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache"
    assert cache["LOCATION"] == str(tmp_path / "var" / "cache")
    env = clean_env(tmp_path, SECRET_KEY=KEY, CACHE_URL="redis://cache.internal:6379/2")
    assert settings_in(env, "CACHES")["CACHES"]["default"]["LOCATION"].endswith("/2")


def test_settings_postgresql_checks_kept_connections(tmp_path):
    env = clean_env(tmp_path, SECRET_KEY=KEY, DATABASE_URL="postgres://u:p@db:5432/evaluation")
    database = settings_in(env, "DATABASES")["DATABASES"]["default"]
    assert database["CONN_HEALTH_CHECKS"] is True


def test_check_deploy_with_the_guide_environment_is_clean(tmp_path):
    guide_env = production_guide_environment()
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "CELERY_BROKER_URL"} <= set(guide_env)
    guide_env["SECRET_KEY"] = secrets.token_urlsafe(50)  # the guide shows how to make one
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=REPO,
        env=clean_env(tmp_path, **guide_env),
        capture_output=True,
        text=True,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues (0 silenced)." in output, output
    assert "WARNING" not in output


def test_request_for_another_host_is_refused_without_a_debug_page(client):
    response = client.get("/", headers={"host": "evil.example"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "DisallowedHost" not in page and "Traceback" not in page


def test_request_for_another_host_shows_no_settings_in_production(tmp_path):
    # The reported case: production services configured, nothing else; the broker URL
    # carries a password that a debug page would show.
    env = clean_env(
        tmp_path,
        SECRET_KEY=KEY,
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        CELERY_BROKER_URL="redis://:broker-password@127.0.0.1:6379/5",
    )
    code = (
        "import django; django.setup(); from django.test import Client; "
        "r = Client().get('/', headers={'host': 'evil.example'}); "
        "print(r.status_code, b'broker-password' in r.content, b'DisallowedHost' in r.content)"
    )
    result = run_python(code, env)
    assert result.stdout.split() == ["400", "False", "False"], result.stderr
