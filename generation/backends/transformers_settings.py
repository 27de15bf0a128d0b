"""Settings of the "transformers" backend, checked without importing torch.

Kept apart from the backend so that the web process (which has no torch) can validate an
organiser's settings; what needs the worker's machine (the checkpoint on disk, CUDA) is
checked when the backend is built there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .base import Settings

ARCHITECTURES = ("auto", "seq2seq", "causal")
DTYPES = ("auto", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class TransformersSettings:
    checkpoint: str  # a local directory written by save_pretrained
    architecture: str = "auto"  # "auto" reads config.is_encoder_decoder
    device: str = "auto"  # "auto", "cpu", "cuda" or "cuda:N"
    dtype: str = "auto"  # "auto": half precision on CUDA, float32 on CPU
    prompt_template: str = "{input}"
    batch_size: int = 8
    max_new_tokens: int = 128
    max_input_tokens: int | None = None  # truncate longer prompts; None keeps them whole
    num_beams: int = 1
    do_sample: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None  # re-seeds torch at each generate() call when sampling

    @classmethod
    def from_settings(cls, values: Mapping[str, Any]) -> TransformersSettings:
        s = Settings("transformers", values)
        settings = cls(
            checkpoint=s.string("checkpoint", required=True),
            architecture=s.choice("architecture", ARCHITECTURES, "auto"),
            device=_device(s),
            dtype=s.choice("dtype", DTYPES, "auto"),
            prompt_template=s.prompt_template(),
            batch_size=s.integer("batch_size", 8, minimum=1),
            max_new_tokens=s.integer("max_new_tokens", 128, minimum=1),
            max_input_tokens=s.integer("max_input_tokens", None, minimum=1),
            num_beams=s.integer("num_beams", 1, minimum=1),
            do_sample=s.boolean("do_sample", False),
            temperature=_temperature(s),
            top_p=s.number("top_p", 1.0, minimum=0.0, maximum=1.0),
            seed=s.integer("seed", None, minimum=0),
        )
        if settings.top_p == 0.0:
            raise s.error("top_p", "must be above 0")
        s.reject_unknown()
        return settings

    @property
    def generation_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "num_beams": self.num_beams,
            "do_sample": self.do_sample,
        }
        if self.do_sample:
            kwargs.update(temperature=self.temperature, top_p=self.top_p)
        return kwargs


def _device(s: Settings) -> str:
    device = s.string("device", "auto")
    if device in ("auto", "cpu", "cuda") or (device.startswith("cuda:") and device[5:].isdigit()):
        return device
    raise s.error("device", f"must be auto, cpu, cuda or cuda:N; got {device!r}")


def _temperature(s: Settings) -> float:
    temperature = s.number("temperature", 1.0, minimum=0.0)
    if temperature == 0.0:
        raise s.error("temperature", "must be above 0 (for greedy decoding set do_sample false)")
    return temperature
