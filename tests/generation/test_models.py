"""A hosted system is checked when saved: the variable its key comes from must be one the
deployment allows, and only HTTP(S) endpoints at public addresses, or at hosts the
deployment allows by name, are called."""

import pytest
from django.core.exceptions import ValidationError

from generation.models import HostedSystem
from tests.factories import make_system

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def example_host_allowed(settings):
    """llm.example.org does not resolve here: allowed by name, it is not looked up."""
    settings.HOSTED_ENDPOINT_ALLOWED_HOSTS = ["llm.example.org"]


def hosted_openai(**settings) -> HostedSystem:
    values = {"base_url": "https://llm.example.org/v1", "model": "m", **settings}
    return HostedSystem(system=make_system(), backend="openai", settings=values)


def settings_error(hosted: HostedSystem) -> str:
    with pytest.raises(ValidationError) as error:
        hosted.full_clean()
    return " ".join(error.value.message_dict["settings"])


@pytest.mark.parametrize("name", ["DATABASE_URL", "SECRET_KEY", "CELERY_BROKER_URL", "HOME"])
def test_hosted_system_refuses_a_key_variable_outside_the_rule(name):
    message = settings_error(hosted_openai(api_key_env=name))
    assert f"'api_key_env' names {name}" in message
    assert "start with EVAL_SECRET_ (HOSTED_SECRET_ENV_PREFIX)" in message
    assert "HOSTED_SECRET_ENV_ALLOWED" in message


def test_hosted_system_accepts_a_key_variable_with_the_prefix():
    hosted_openai(api_key_env="EVAL_SECRET_OPENAI").full_clean()


def test_hosted_system_accepts_a_listed_key_variable(settings):
    settings.HOSTED_SECRET_ENV_ALLOWED = ["OPENAI_API_KEY"]
    hosted_openai(api_key_env="OPENAI_API_KEY").full_clean()


def test_hosted_system_prefix_is_a_setting(settings):
    settings.HOSTED_SECRET_ENV_PREFIX = "LLM_KEY_"
    hosted_openai(api_key_env="LLM_KEY_A").full_clean()
    assert "start with LLM_KEY_" in settings_error(hosted_openai(api_key_env="EVAL_SECRET_A"))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://llm.example.org/v1", "http:///v1"])
def test_hosted_system_refuses_a_base_url_that_is_not_http(url):
    assert "'base_url' must be an http:// or https:// URL" in settings_error(
        hosted_openai(base_url=url)
    )


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/v1", "http://169.254.169.254/latest", "http://localhost/v1"]
)
def test_hosted_system_refuses_an_internal_endpoint(settings, url):
    message = settings_error(hosted_openai(base_url=url))
    assert "'base_url'" in message and "not a public address" in message
    settings.HOSTED_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    if "169.254" in url:
        assert "not a public address" in settings_error(hosted_openai(base_url=url))
    else:
        hosted_openai(base_url=url).full_clean()
