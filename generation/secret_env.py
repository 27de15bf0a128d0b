"""The deployment's rule for which environment variables hosted systems may read keys from:
one place, used when a hosted system is saved and when a worker builds its backend."""

from django.conf import settings

from generation.backends import SecretEnvPolicy


def secret_env_policy() -> SecretEnvPolicy:
    return SecretEnvPolicy(
        prefix=settings.HOSTED_SECRET_ENV_PREFIX,
        allowed=frozenset(settings.HOSTED_SECRET_ENV_ALLOWED),
    )
