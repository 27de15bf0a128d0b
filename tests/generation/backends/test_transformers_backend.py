from importlib.util import find_spec

import pytest

from generation.backends import TypedInput, check_settings, make_backend

from .inputs import make_mr, make_one_of_each

# torch and transformers (the test extra's generation part) are imported by the fixtures
# below, not when the module is collected: every pytest-xdist worker collects it, and
# importing them took 6 s of each worker's CPU, for tests that run in one.
pytestmark = pytest.mark.skipif(
    find_spec("torch") is None or find_spec("transformers") is None,
    reason="needs torch and transformers, which bin/test installs",
)

MAX_NEW_TOKENS = 6


@pytest.fixture(scope="module")
def torch():
    import torch  # noqa: PLC0415 (see pytestmark)

    return torch


@pytest.fixture(scope="module")
def transformers_backend():
    from generation.backends import transformers_backend  # noqa: PLC0415 (see pytestmark)

    return transformers_backend


@pytest.fixture(scope="module")
def tiny_models():
    from . import tiny_models  # noqa: PLC0415 (see pytestmark)

    return tiny_models


@pytest.fixture(scope="module")
def seq2seq_dir(tiny_models, tmp_path_factory):
    return str(tiny_models.save_tiny_seq2seq(tmp_path_factory.mktemp("t5-tiny")))


@pytest.fixture(scope="module")
def causal_dir(tiny_models, tmp_path_factory):
    return str(tiny_models.save_tiny_causal(tmp_path_factory.mktemp("gpt2-tiny")))


@pytest.fixture(params=["seq2seq", "causal"])
def checkpoint(request, seq2seq_dir, causal_dir):
    return seq2seq_dir if request.param == "seq2seq" else causal_dir


def make_inputs(count: int = 7) -> list[TypedInput]:
    """Inputs of different lengths, so that a batch needs padding."""
    names = ["The Vaults", "Café Adriatic", "Peyton Manning", "The", "Alan_Bean Test_pilot"]
    inputs = [
        make_mr(name=names[i % len(names)], near=None if i % 2 else "The") for i in range(count)
    ]
    return inputs + make_one_of_each()[1:]


def backend_for(checkpoint: str, **settings):
    return make_backend(
        "transformers",
        {"checkpoint": checkpoint, "device": "cpu", "max_new_tokens": MAX_NEW_TOKENS, **settings},
    )


def test_transformers_gives_one_string_per_input(checkpoint):
    inputs = make_inputs()
    results = backend_for(checkpoint, batch_size=4).generate(inputs)
    assert len(results) == len(inputs)
    for result in results:
        assert isinstance(result.text, str) and result.error == ""
        assert len(result.text.split()) <= MAX_NEW_TOKENS


def test_transformers_causal_output_leaves_out_the_prompt(causal_dir):
    backend = backend_for(causal_dir, prompt_template="Describe : {input}")
    [result] = backend.generate([make_mr()])
    # The word-level tokenizer decodes to space-separated words: only new ones are returned.
    assert len(result.text.split()) <= MAX_NEW_TOKENS
    assert not result.text.startswith("Describe")


def test_transformers_batched_greedy_matches_batch_size_one(checkpoint):
    inputs = make_inputs()
    one_by_one = backend_for(checkpoint, batch_size=1).generate(inputs)
    batched = backend_for(checkpoint, batch_size=16).generate(inputs)
    assert [r.text for r in batched] == [r.text for r in one_by_one]
    assert len({r.text for r in batched}) > 1  # the inputs really lead to different outputs


def test_transformers_beam_search_matches_across_batch_sizes(seq2seq_dir):
    inputs = make_inputs(4)
    one_by_one = backend_for(seq2seq_dir, num_beams=3, batch_size=1).generate(inputs)
    batched = backend_for(seq2seq_dir, num_beams=3, batch_size=8).generate(inputs)
    assert [r.text for r in batched] == [r.text for r in one_by_one]


def test_transformers_sampling_with_a_seed_repeats(checkpoint):
    settings = {"do_sample": True, "temperature": 1.5, "top_p": 0.9, "seed": 7}
    first = backend_for(checkpoint, **settings).generate(make_inputs())
    second = backend_for(checkpoint, **settings).generate(make_inputs())
    assert [r.text for r in first] == [r.text for r in second]


def test_transformers_loads_the_model_once(seq2seq_dir, transformers_backend, monkeypatch):
    transformers_backend.clear_model_cache()
    model_class = transformers_backend.AutoModelForSeq2SeqLM
    original = model_class.from_pretrained
    loads = []

    def counting_from_pretrained(*args, **kwargs):
        loads.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(model_class, "from_pretrained", counting_from_pretrained)
    first = backend_for(seq2seq_dir)
    second = backend_for(seq2seq_dir, batch_size=2, num_beams=2)
    first.generate([make_mr()])
    second.generate([make_mr()])
    assert len(loads) == 1
    assert first.loaded.model is second.loaded.model


def test_transformers_architecture_is_read_from_the_config(seq2seq_dir, causal_dir):
    assert backend_for(seq2seq_dir).loaded.architecture == "seq2seq"
    assert backend_for(causal_dir).loaded.architecture == "causal"
    assert backend_for(causal_dir).loaded.tokenizer.padding_side == "left"


def test_transformers_cpu_runs_in_float32(seq2seq_dir, torch):
    loaded = backend_for(seq2seq_dir).loaded
    assert loaded.device == "cpu"
    assert next(loaded.model.parameters()).dtype == torch.float32


def test_transformers_prompt_template_wraps_the_linearised_input(seq2seq_dir):
    backend = backend_for(seq2seq_dir, prompt_template="Describe: {input}")
    assert backend.prompt(make_mr(near=None)) == (
        "Describe: name[The Vaults], eatType[pub], priceRange[more than £30], "
        "customer rating[5 out of 5]"
    )


def test_transformers_unknown_kind_is_a_per_input_error(seq2seq_dir):
    inputs = [make_mr(), TypedInput("audio", {}), TypedInput("mr", {"no": "attributes"})]
    results = backend_for(seq2seq_dir).generate(inputs)
    assert results[0].text is not None
    assert results[1].text is None and "audio" in results[1].error
    assert results[2].text is None and "invalid mr input" in results[2].error


def test_transformers_failing_batch_falls_back_to_one_by_one(checkpoint, torch, monkeypatch):
    backend = backend_for(checkpoint, batch_size=8)
    expected = [r.text for r in backend.generate(make_inputs())]
    model = backend.loaded.model
    original = model.generate
    longest = max(
        len(backend.loaded.tokenizer(backend.prompt(i))["input_ids"]) for i in make_inputs()
    )

    def generate_failing_on_big_batches(**kwargs):
        input_ids = kwargs["input_ids"]
        if input_ids.shape[0] > 1:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        if input_ids.shape[1] == longest:
            raise RuntimeError("input too long (simulated)")
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", generate_failing_on_big_batches)
    results = backend.generate(make_inputs())
    for result, text in zip(results, expected, strict=True):
        if result.text is None:
            assert "input too long" in result.error
        else:
            assert result.text == text
    assert sum(r.text is None for r in results) >= 1
    assert sum(r.text is not None for r in results) >= 5


@pytest.mark.parametrize(
    "settings, setting_named",
    [
        ({}, "checkpoint"),
        ({"checkpoint": "x", "num_beams": 0}, "num_beams"),
        ({"checkpoint": "x", "batch_size": "8"}, "batch_size"),
        ({"checkpoint": "x", "device": "tpu"}, "device"),
        ({"checkpoint": "x", "dtype": "float8"}, "dtype"),
        ({"checkpoint": "x", "architecture": "encoder"}, "architecture"),
        ({"checkpoint": "x", "temperature": 0}, "temperature"),
        ({"checkpoint": "x", "top_p": 1.5}, "top_p"),
        ({"checkpoint": "x", "prompt_template": "Describe: {text}"}, "prompt_template"),
        ({"checkpoint": "x", "prompt_template": "no field"}, "prompt_template"),
        ({"checkpoint": "x", "max_new_token": 5}, "max_new_token"),
    ],
)
def test_transformers_invalid_settings_name_the_setting(settings, setting_named):
    with pytest.raises(ValueError, match=f"'{setting_named}'"):
        check_settings("transformers", settings)
    with pytest.raises(ValueError, match=f"'{setting_named}'"):
        make_backend("transformers", settings)


def test_transformers_missing_checkpoint_directory_names_the_setting(tmp_path):
    with pytest.raises(ValueError, match="'checkpoint'"):
        make_backend("transformers", {"checkpoint": str(tmp_path / "nowhere")})


def test_transformers_cuda_without_a_gpu_names_the_setting(seq2seq_dir, torch):
    if torch.cuda.is_available():
        pytest.skip("checks the error where CUDA is absent")
    with pytest.raises(ValueError, match="'device'"):
        make_backend("transformers", {"checkpoint": seq2seq_dir, "device": "cuda"})
