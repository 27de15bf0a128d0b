"""The deployment's rule for which environment variables organisers' settings may read
secrets from: one place, used by hosted systems (generation) and Prolific's API."""

from django.conf import settings

from nlgdata.secrets import SecretEnvPolicy


def secret_env_policy() -> SecretEnvPolicy:
    return SecretEnvPolicy(
        prefix=settings.HOSTED_SECRET_ENV_PREFIX,
        allowed=frozenset(settings.HOSTED_SECRET_ENV_ALLOWED),
    )
