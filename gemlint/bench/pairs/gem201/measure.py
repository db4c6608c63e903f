"""Runs both variants with a WordLevel tokenizer and a small BERT, both built in code (no downloads)."""

from __future__ import annotations

import random

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import prepare
from gemlint.bench.timing import compare_latency

WORDS = (
    "the a model request token batch query answer embed search index vector latency memory gpu cache "
    "serve route user text short long sentence word score rank doc page item price order ship"
).split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


def build_tokenizer() -> PreTrainedTokenizerFast:
    vocab = {token: index for index, token in enumerate(SPECIALS + WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", model_max_length=512
    )


def build_model(vocab_size: int, device: str) -> BertModel:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=256,
        max_position_embeddings=512,
    )
    return BertModel(config).eval().to(device)


def requests(count: int) -> list[str]:
    """Short queries, 4 to 40 words: the length spread of a search or chat front-end."""
    rng = random.Random(0)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40))) for _ in range(count)]


def measure(ctx: PairContext) -> list[Measurement]:
    bad, good = ctx.load("bad"), ctx.load("good")
    prepare(ctx.device)
    tokenizer = build_tokenizer()
    model = build_model(len(tokenizer), ctx.device)
    texts = requests(ctx.scale(4, 8))
    bad_out, good_out = bad.predict(tokenizer, model, texts), good.predict(tokenizer, model, texts)
    sync = torch.cuda.synchronize if ctx.device == "cuda" else (lambda: None)
    bad_ms, good_ms = compare_latency(
        lambda: bad.predict(tokenizer, model, texts), lambda: good.predict(tokenizer, model, texts), quick=ctx.quick, sync=sync
    )
    batch = len(texts)
    return [
        Measurement(f"tokens computed per batch of {batch}", "tokens", bad_out.shape[0] * bad_out.shape[1], good_out.shape[0] * good_out.shape[1], deterministic=True),
        Measurement(f"latency per batch of {batch}", "ms", bad_ms, good_ms),
    ]
