"""The contract every generation backend keeps, and small helpers they share.

A backend takes a batch of typed inputs and returns one result per input, in order. One input
that fails never fails the batch: its result carries `text=None` and the reason in `error`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from nlgdata.inputs import InputError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TypedInput:
    """One item's input as stored by the platform: its kind and its JSON data."""

    kind: str
    data: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class GenerationResult:
    text: str | None  # None when this input failed
    error: str = ""  # why it failed (empty on success)

    @property
    def ok(self) -> bool:
        return self.text is not None


class Backend(Protocol):
    def generate(self, inputs: Sequence[TypedInput]) -> list[GenerationResult]: ...


def generate_each(
    inputs: Sequence[TypedInput], realise: Callable[[TypedInput], str]
) -> list[GenerationResult]:
    """Apply `realise` to each input, turning a failure into that input's error: an
    InputError (an input this backend cannot realise) or any error of a malformed input."""
    return [_realise_one(item, realise) for item in inputs]


def _realise_one(item: TypedInput, realise: Callable[[TypedInput], str]) -> GenerationResult:
    try:
        return GenerationResult(text=realise(item))
    except InputError as exc:
        return GenerationResult(text=None, error=str(exc))
    # Stored inputs are JSON edited by people: a missing key or a wrong type in one item
    # must not stop the others.
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return GenerationResult(text=None, error=f"invalid {item.kind} input: {exc!r}")


class Settings:
    """Read-and-check access to a backend's settings mapping.

    Every getter names the setting in its ValueError, and `reject_unknown` catches typos
    ("max_token" for "max_tokens") that would otherwise be silently ignored.
    """

    def __init__(self, backend: str, values: Mapping[str, Any]) -> None:
        if not isinstance(values, Mapping):
            raise ValueError(f"{backend}: settings must be a mapping, got {type(values).__name__}")
        self.backend = backend
        self.values = dict(values)
        self.read: set[str] = set()

    def error(self, key: str, problem: str) -> ValueError:
        return ValueError(f"{self.backend}: setting '{key}' {problem}")

    def get(self, key: str, default: Any = None, *, required: bool = False) -> Any:
        self.read.add(key)
        if key not in self.values or self.values[key] is None:
            if required:
                raise self.error(key, "is required")
            return default
        return self.values[key]

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> Any:
        value = self.get(key, default, required=required)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise self.error(key, f"must be a non-empty string, got {value!r}")
        return value

    def choice(self, key: str, options: Sequence[str], default: str) -> str:
        value = self.get(key, default)
        if value not in options:
            raise self.error(key, f"must be one of {', '.join(options)}; got {value!r}")
        return value

    def integer(self, key: str, default: int | None, *, minimum: int | None = None) -> Any:
        value = self.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be at least {minimum}, got {value}")
        return value

    def number(
        self, key: str, default: float, *, minimum: float = 0.0, maximum: float | None = None
    ) -> float:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"must be a number, got {value!r}")
        if value < minimum or (maximum is not None and value > maximum):
            upper = "" if maximum is None else f" and at most {maximum}"
            raise self.error(key, f"must be at least {minimum}{upper}, got {value}")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {value!r}")
        return value

    def prompt_template(self, key: str = "prompt_template", default: str = "{input}") -> str:
        template = self.string(key, default)
        try:
            template.format(input="")
        except (KeyError, IndexError, ValueError) as exc:
            raise self.error(key, f"must use only the {{input}} field: {exc!r}") from exc
        if "{input}" not in template:
            raise self.error(key, "must contain {input}")
        return template

    def reject_unknown(self) -> None:
        unknown = sorted(set(self.values) - self.read)
        if unknown and not self.read:
            raise self.error(unknown[0], "is not a known setting (this backend takes none)")
        if unknown:
            known = ", ".join(sorted(self.read))
            raise self.error(unknown[0], f"is not a known setting (known: {known})")
