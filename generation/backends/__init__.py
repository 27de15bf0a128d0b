"""Generation backends: typed inputs in, one result per input out. No Django here.

    backend = make_backend("template-e2e", {})
    results = backend.generate([TypedInput("mr", {"attributes": [["name", "The Vaults"]]})])

`check_settings` validates settings without building the backend (no model load, no torch
import), for forms in the web process; `make_backend` validates and builds. Both take the
deployment's SecretEnvPolicy: the environment variables a backend may read a key from
(by default none), and its AddressPolicy (outbound/addresses.py): the internal hosts an
endpoint may reach (by default none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlgdata.secrets import NO_SECRETS, SecretEnvPolicy
from outbound import PUBLIC_ONLY, AddressPolicy

from .base import Backend, GenerationResult, Settings, TypedInput
from .openai_backend import OpenAIBackend, OpenAISettings
from .template import TEMPLATE_BACKENDS
from .transformers_settings import TransformersSettings

# Every backend's name, with a label for organisers; the admin's choices come from here.
BACKEND_LABELS = {
    **{name: backend.label for name, backend in TEMPLATE_BACKENDS.items()},
    "transformers": "Local transformers checkpoint",
    "openai": "OpenAI-compatible HTTP endpoint",
}
BACKEND_NAMES = tuple(BACKEND_LABELS)


def check_settings(
    name: str,
    settings: Mapping[str, Any],
    secret_env: SecretEnvPolicy = NO_SECRETS,
    endpoints: AddressPolicy = PUBLIC_ONLY,
) -> None:
    """Raise ValueError naming the backend or the setting that is wrong."""
    _parse_settings(name, settings, secret_env, endpoints)


def make_backend(
    name: str,
    settings: Mapping[str, Any],
    secret_env: SecretEnvPolicy = NO_SECRETS,
    endpoints: AddressPolicy = PUBLIC_ONLY,
) -> Backend:
    """Build the named backend; invalid settings raise ValueError naming the setting."""
    parsed = _parse_settings(name, settings, secret_env, endpoints)
    if name in TEMPLATE_BACKENDS:
        return TEMPLATE_BACKENDS[name]
    if name == "transformers":
        return _transformers_backend(parsed)
    return OpenAIBackend(parsed, secret_env, endpoints)


def _transformers_backend(settings: TransformersSettings) -> Backend:
    # Imported here: torch and transformers are the optional "generation" extra.
    try:
        from .transformers_backend import TransformersBackend  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(
            "the transformers backend needs torch and transformers: "
            "pip install torch transformers (the project's 'generation' extra)"
        ) from exc
    return TransformersBackend(settings)


def _parse_settings(
    name: str, settings: Mapping[str, Any], secret_env: SecretEnvPolicy, endpoints: AddressPolicy
) -> Any:
    if name in TEMPLATE_BACKENDS:
        # Templates take no settings; reject any, so that a typo is not silently ignored.
        Settings(name, settings).reject_unknown()
        return None
    if name == "transformers":
        return TransformersSettings.from_settings(settings)
    if name == "openai":
        return OpenAISettings.from_settings(settings, secret_env, endpoints)
    raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKEND_NAMES)}")


__all__ = [
    "BACKEND_LABELS",
    "BACKEND_NAMES",
    "Backend",
    "AddressPolicy",
    "GenerationResult",
    "NO_SECRETS",
    "PUBLIC_ONLY",
    "SecretEnvPolicy",
    "TypedInput",
    "check_settings",
    "make_backend",
]
