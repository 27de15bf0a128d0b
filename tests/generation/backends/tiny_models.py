"""Tiny random-weight checkpoints built on the spot, so that no test downloads a model.

The tokenizer is a word-level one trained on a few sentences with the `tokenizers` library;
the models are T5 (seq2seq) and GPT-2 (causal) at toy sizes. Weights are drawn with a large
spread so that greedy decoding has clear winners: with the default small initialisation the
logits nearly tie, and a tie could be broken differently by a padded batch.
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)

# One thread for these toy models in every process that builds them: torch's thread pool
# (one a core) made a beam search of 4 inputs take 5 s on an idle 2-core machine and 20 s
# with pytest-xdist's two workers each running one; 0.3 s on one thread. The results do not
# depend on it (the tests compare outputs across batch sizes in one process).
torch.set_num_threads(1)

SPECIAL_TOKENS = ["<pad>", "<unk>", "<s>", "</s>"]
TRAINING_TEXT = [
    "Describe : name [ The Vaults ] , eatType [ pub ] , priceRange [ more than £30 ]",
    "customer rating [ 5 out of 5 ] , near [ Café Adriatic ] , food [ Italian ]",
    "The Vaults is a pub near Café Adriatic . It serves Italian food in the city centre .",
    "title : 1998 NFL draft | row 1 : player : Peyton Manning , college : Tennessee",
    "Alan_Bean | occupation | Test_pilot && Apollo_12 | crewMembers | Alan_Bean",
    "home : Boston Celtics ( 20-10 ) , points : 98 | Isaiah Thomas ( home ) : PTS : 30",
    "question : date of birth | title : Alan Bean | text : born March 15 , 1932",
]


def build_tokenizer() -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=SPECIAL_TOKENS)
    tokenizer.train_from_iterator(TRAINING_TEXT, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
    )


def _spread_weights(model: torch.nn.Module, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)


def save_tiny_seq2seq(directory: Path, seed: int = 0) -> Path:
    tokenizer = build_tokenizer()
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_ff=64,
        d_kv=8,
        num_layers=2,
        num_heads=4,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    model = T5ForConditionalGeneration(config)
    _spread_weights(model, seed)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def save_tiny_causal(directory: Path, seed: int = 0) -> Path:
    tokenizer = build_tokenizer()
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=1024,
        n_embd=32,
        n_layer=2,
        n_head=4,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = GPT2LMHeadModel(config)
    _spread_weights(model, seed)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
