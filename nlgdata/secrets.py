"""The rule for which environment variables settings written by organisers may name as
holding a secret (a hosted system's API key, a campaign's Prolific token)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class SecretEnvPolicy:
    """The environment variables an organiser's setting may name as holding a secret.

    Settings are written by organisers; the environment is the deployment's, and holds its
    own secrets (DATABASE_URL, SECRET_KEY). Without this rule a setting could name one of
    those and the platform would send it to a URL of the organiser's choosing. The default
    allows no variable at all.
    """

    prefix: str = ""  # names that start with it are allowed; "" allows none by prefix
    allowed: frozenset[str] = frozenset()  # names allowed whatever they start with

    def allows(self, name: str) -> bool:
        return (bool(self.prefix) and name.startswith(self.prefix)) or name in self.allowed

    def refusal(self, name: str) -> str:
        """Why `name` is refused, for a message about the setting that names it."""
        prefix = f"start with {self.prefix}" if self.prefix else "have the allowed prefix (none)"
        return (
            f"names {name}, which this deployment does not allow: a key is read only from a "
            f"variable whose name must {prefix} (HOSTED_SECRET_ENV_PREFIX) or be listed in "
            "HOSTED_SECRET_ENV_ALLOWED"
        )


NO_SECRETS = SecretEnvPolicy()
