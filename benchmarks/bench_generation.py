"""Throughput of the transformers backend by batch size.

Builds a random-weight T5 of t5-small's dimensions (or a tiny one) with a local word-level
tokenizer, saves it to a temporary directory, loads it through the backend's real
from_pretrained path and times generate() on a fixed set of E2E-like MRs at each batch size.
The model has no end-of-sequence token, so every item generates exactly --max-new-tokens
tokens and batch sizes do the same work.

    python benchmarks/bench_generation.py                 # CPU, about a minute on 2 cores
    python benchmarks/bench_generation.py --threads 1 --repeats 2   # steadier on a busy machine
    python benchmarks/bench_generation.py --device cuda --items 1024 --max-new-tokens 32
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

# Run as a plain script from anywhere: the repository root holds the generation package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from generation.backends import TypedInput, make_backend  # noqa: E402
from nlgdata import inputs  # noqa: E402

# In E2E's order, so that the MRs read as E2E's do.
E2E_VALUES = {
    "name": ["The Vaults", "The Eagle", "Alimentum", "Blue Spice", "The Golden Palace"],
    **inputs.E2E_VALUES,
    "near": ["Café Adriatic", "Burger King", "The Portland Arms", "Raja Indian Cuisine"],
}
MODEL_SIZES = {
    # t5-small: 6 layers, d_model 512, 8 heads, vocabulary 32128 (about 60M parameters).
    "small": {"d_model": 512, "d_ff": 2048, "d_kv": 64, "num_layers": 6, "num_heads": 8},
    "tiny": {"d_model": 64, "d_ff": 128, "d_kv": 16, "num_layers": 2, "num_heads": 4},
}
VOCAB_SIZE = 32128


def make_items(count: int, seed: int = 0) -> list[TypedInput]:
    """E2E-like MRs: a name, an eatType and 1-6 further attributes, in E2E order."""
    rng = random.Random(seed)
    items = []
    for _ in range(count):
        optional = [a for a in E2E_VALUES if a not in ("name", "eatType")]
        chosen = {"name", "eatType", *rng.sample(optional, rng.randint(1, len(optional)))}
        pairs = [[a, rng.choice(v)] for a, v in E2E_VALUES.items() if a in chosen]
        items.append(TypedInput("mr", {"attributes": pairs}))
    return items


def build_tokenizer() -> PreTrainedTokenizerFast:
    words = {w for values in E2E_VALUES.values() for v in values for w in v.split()}
    words |= {"name", "eatType", "food", "priceRange", "customer", "rating", "area"}
    words |= {"familyFriendly", "near", "[", "]", ",", "Describe", ":"}
    tokens = ["<pad>", "<unk>", "</s>", *sorted(words)]
    # Filler tokens bring the vocabulary to t5-small's size, so the output layer costs the same.
    tokens += [f"<extra_{i}>" for i in range(VOCAB_SIZE - len(tokens))]
    tokenizer = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", unk_token="<unk>", eos_token="</s>"
    )


def save_model(directory: Path, size: str) -> int:
    tokenizer = build_tokenizer()
    config = T5Config(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        eos_token_id=None,  # never stop early: every batch size does the same work
        **MODEL_SIZES[size],
    )
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return sum(p.numel() for p in model.parameters())


def time_batch_size(checkpoint: str, args: argparse.Namespace, batch_size: int, items) -> float:
    """Seconds to generate for all items: the fastest of --repeats runs after a warm-up."""
    backend = make_backend(
        "transformers",
        {"checkpoint": checkpoint, "device": args.device, "batch_size": batch_size,
         "max_new_tokens": args.max_new_tokens, "prompt_template": "Describe: {input}"},
    )  # fmt: skip
    # A full untimed pass: on CPU the first calls at each new input shape are several times
    # slower (kernel and allocator warm-up), which would otherwise be charged to batch size 1.
    backend.generate(items)
    return min(_timed_run(backend, items) for _ in range(args.repeats))


def _timed_run(backend, items) -> float:
    on_gpu = backend.loaded.device.startswith("cuda")
    if on_gpu:
        torch.cuda.synchronize()
    start = time.perf_counter()
    results = backend.generate(items)
    if on_gpu:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    failed = [r.error for r in results if r.text is None]
    if failed:
        raise SystemExit(f"{len(failed)} inputs failed, e.g.: {failed[0]}")
    return elapsed


def cpu_pressure() -> str:
    """Linux PSI: the share of time some task waited for a CPU. Others' load skews timings."""
    try:
        with open("/proc/pressure/cpu") as pressure:
            fields = dict(f.split("=") for f in pressure.readline().split()[1:])
    except (OSError, ValueError):
        return "unknown"
    return f"{fields.get('avg60', '?')}% of the last minute"


def describe_device(device: str) -> str:
    if device.startswith("cuda"):
        return f"{device} ({torch.cuda.get_device_name(device)}), torch {torch.__version__}"
    return f"cpu ({torch.get_num_threads()} threads), torch {torch.__version__}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    parser.add_argument("--model", choices=sorted(MODEL_SIZES), default="small")
    parser.add_argument("--items", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--batch-sizes", default="1,4,16,64")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per size; best kept")
    parser.add_argument("--threads", type=int, help="CPU threads for torch (default: its own)")
    args = parser.parse_args()
    if args.threads:
        # On a shared machine, threads that wait for each other at every matmul can make
        # two threads slower than one; this makes the comparison fair there.
        torch.set_num_threads(args.threads)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    items = make_items(args.items)
    with tempfile.TemporaryDirectory() as directory:
        parameters = save_model(Path(directory), args.model)
        timings = {bs: time_batch_size(directory, args, bs, items) for bs in batch_sizes}
        # Cached: this only reads which device the runs above used.
        backend = make_backend("transformers", {"checkpoint": directory, "device": args.device})
        device_text = describe_device(backend.loaded.device)
    print(f"device: {device_text}")
    print(f"model: random-weight T5 '{args.model}' ({parameters / 1e6:.1f}M parameters)")
    print(
        f"items: {args.items} E2E-like MRs, max_new_tokens: {args.max_new_tokens}, greedy, "
        f"best of {args.repeats} runs"
    )
    print(f"cpu pressure (tasks waiting for a CPU): {cpu_pressure()}")
    print(f"{'batch size':>10} {'seconds':>9} {'items/s':>9} {'speed-up':>9}")
    base = args.items / timings[batch_sizes[0]]
    for bs in batch_sizes:
        rate = args.items / timings[bs]
        print(f"{bs:>10} {timings[bs]:>9.2f} {rate:>9.1f} {rate / base:>8.2f}x")


if __name__ == "__main__":
    main()
