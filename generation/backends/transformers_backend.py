"""The "transformers" backend: a local Hugging Face checkpoint, seq2seq or causal.

Models are loaded once per worker process and kept in a module-level cache keyed by
checkpoint, device, dtype and architecture: a Celery worker builds a backend per job, and
reloading weights for each job would cost more than generating. Nothing is fetched from a
hub (local_files_only), so a checkpoint must be a directory written by save_pretrained.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import transformers
from packaging.version import Version
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
)

from nlgdata.inputs import InputError

from .base import GenerationResult, TypedInput
from .linearize import linearize
from .transformers_settings import TransformersSettings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoadedModel:
    model: Any
    tokenizer: Any
    architecture: str  # "seq2seq" or "causal"
    device: str
    dtype: torch.dtype


_MODEL_CACHE: dict[tuple[str, str, str, str], LoadedModel] = {}
_CACHE_LOCK = threading.Lock()


def clear_model_cache() -> None:
    """Forget loaded models (tests; a worker that must free its GPU)."""
    with _CACHE_LOCK:
        _MODEL_CACHE.clear()


def resolve_device(requested: str) -> str:
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"transformers: setting 'device' is {requested!r} but CUDA is unavailable")
    return requested


def resolve_dtype(requested: str, device: str) -> torch.dtype:
    if requested != "auto":
        return getattr(torch, requested)
    if device == "cpu":
        return torch.float32
    # Half precision on the GPU. bfloat16 where the card has it: T5-family checkpoints
    # overflow to inf/NaN in float16, and bfloat16 has float32's range.
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def get_model(settings: TransformersSettings) -> LoadedModel:
    """The loaded model for these settings, from the cache or loaded now (once)."""
    checkpoint = os.path.realpath(settings.checkpoint)
    device = resolve_device(settings.device)
    dtype = resolve_dtype(settings.dtype, device)
    key = (checkpoint, device, str(dtype), settings.architecture)
    with _CACHE_LOCK:
        if key not in _MODEL_CACHE:
            _MODEL_CACHE[key] = _load(checkpoint, settings.architecture, device, dtype)
        return _MODEL_CACHE[key]


def _load(checkpoint: str, architecture: str, device: str, dtype: torch.dtype) -> LoadedModel:
    if not os.path.isfile(os.path.join(checkpoint, "config.json")):
        raise ValueError(
            f"transformers: setting 'checkpoint' must be a directory with a config.json "
            f"(written by save_pretrained); got {checkpoint!r}"
        )
    if architecture == "auto":
        config = AutoConfig.from_pretrained(checkpoint, local_files_only=True)
        architecture = "seq2seq" if config.is_encoder_decoder else "causal"
    model_class = AutoModelForSeq2SeqLM if architecture == "seq2seq" else AutoModelForCausalLM
    logger.info("loading %s model %s on %s (%s)", architecture, checkpoint, device, dtype)
    model = model_class.from_pretrained(checkpoint, local_files_only=True, **_dtype_kwarg(dtype))
    model.to(device).eval()
    tokenizer = _load_tokenizer(checkpoint, architecture)
    return LoadedModel(model, tokenizer, architecture, device, dtype)


def _dtype_kwarg(dtype: torch.dtype) -> dict[str, torch.dtype]:
    # transformers 4.56 renamed torch_dtype to dtype; the extra allows versions from 4.44.
    name = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
    return {name: dtype}


def _load_tokenizer(checkpoint: str, architecture: str) -> Any:
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, local_files_only=True)
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ValueError(
                f"transformers: setting 'checkpoint': the tokenizer of {checkpoint!r} has "
                "neither a pad nor an end-of-sequence token, so batches cannot be padded"
            )
        tokenizer.pad_token = tokenizer.eos_token
    if architecture == "causal":
        # A decoder-only model continues from the last position: padding must be on the left.
        tokenizer.padding_side = "left"
    return tokenizer


class TransformersBackend:
    """Backend "transformers": batched generation from a local checkpoint."""

    def __init__(self, settings: TransformersSettings) -> None:
        self.settings = settings
        self.loaded = get_model(settings)

    def generate(self, inputs: Sequence[TypedInput]) -> list[GenerationResult]:
        results: list[GenerationResult | None] = [None] * len(inputs)
        prompts: list[tuple[int, str]] = []
        for index, item in enumerate(inputs):
            try:
                prompts.append((index, self.prompt(item)))
            except InputError as exc:
                results[index] = GenerationResult(text=None, error=str(exc))
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                results[index] = GenerationResult(None, f"invalid {item.kind} input: {exc!r}")
        if self.settings.do_sample and self.settings.seed is not None:
            torch.manual_seed(self.settings.seed)
        size = self.settings.batch_size
        for start in range(0, len(prompts), size):
            indices, texts = zip(*prompts[start : start + size], strict=True)
            for index, result in zip(indices, self._generate_batch(list(texts)), strict=True):
                results[index] = result
        return [r for r in results if r is not None]

    def prompt(self, item: TypedInput) -> str:
        return self.settings.prompt_template.format(input=linearize(item))

    def _generate_batch(self, prompts: list[str]) -> list[GenerationResult]:
        try:
            return [GenerationResult(text=text) for text in self._run(prompts)]
        # Out of memory, an input too long for the model, ...: whatever it is, only the
        # inputs that cause it should fail, so retry one by one to find them.
        except Exception as exc:
            if len(prompts) == 1:
                logger.warning("generation failed for one input: %r", exc)
                return [GenerationResult(text=None, error=f"generation failed: {exc!r}")]
            logger.warning("batch of %d failed (%r); retrying one by one", len(prompts), exc)
            self._free_memory()
            return [self._generate_batch([prompt])[0] for prompt in prompts]

    def _run(self, prompts: list[str]) -> list[str]:
        loaded = self.loaded
        truncate = self.settings.max_input_tokens is not None
        encoded = loaded.tokenizer(
            prompts,
            return_tensors="pt",
            padding=True,
            truncation=truncate,
            max_length=self.settings.max_input_tokens,
        )
        input_ids = encoded["input_ids"].to(loaded.device)
        attention_mask = encoded["attention_mask"].to(loaded.device)
        with torch.inference_mode():
            output = loaded.model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                pad_token_id=loaded.tokenizer.pad_token_id,
                **self.settings.generation_kwargs,
            )
        if loaded.architecture == "causal":
            # The output repeats the (left-padded) prompt; keep only what was generated.
            output = output[:, input_ids.shape[1] :]
        texts = loaded.tokenizer.batch_decode(output, skip_special_tokens=True)
        return [text.strip() for text in texts]

    def _free_memory(self) -> None:
        if self.loaded.device.startswith("cuda"):
            torch.cuda.empty_cache()
