#!/usr/bin/env python3
"""Makes the tokenizer test fixtures in this folder (run on the GPU machine, where the Hugging Face
`tokenizers` and `sentencepiece` Python packages are installed): two tiny byte-level BPE
tokenizer.json files (GPT-2 style ByteLevel pre-tokenizer; Llama-3 style Split regex + ByteLevel),
a tiny SentencePiece BPE model, and the token ids those libraries give for a set of test strings.

usage: make_tokenizer_fixtures.py OUTDIR"""
import json, os, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
corpus = [
    "The quick brown fox jumps over the lazy dog. It's 2026, isn't it?",
    "Hello world! Hello again, world; we're testing tokenizers: 12345 and 678.",
    "Ünïcödé text, 中文字符, emoji 🙂 and tabs\tand\nnewlines.",
    "def f(x):\n    return x * 2  # code\n",
] * 20
tests = [
    "Hello world!",
    "It's a test: we'll see, they're fine.",
    "numbers 1234567 and 42",
    "  leading and   multiple   spaces\n\nand newlines\r\n",
    "Ünïcödé, 中文, 🙂 emoji",
    "<|endoftext|>special in the middle<|endoftext|>",
    "",
]
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers, Regex

res = {"tests": tests}
LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
for name, pre in [
    ("bpe_gpt2.json", pre_tokenizers.ByteLevel(add_prefix_space=False)),
    ("bpe_llama3.json", pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])),
]:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=360, special_tokens=["<|endoftext|>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, tr)
    tok.save(os.path.join(out, name))
    res[name] = [tok.encode(t, add_special_tokens=False).ids for t in tests]
try:
    import sentencepiece as spm
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_prefix=os.path.join(out, "sp_bpe"),
                                   vocab_size=120, model_type="bpe", byte_fallback=True, character_coverage=1.0)
    os.remove(os.path.join(out, "sp_bpe.vocab"))
    sp = spm.SentencePieceProcessor(model_file=os.path.join(out, "sp_bpe.model"))
    res["sp_bpe.model"] = [sp.encode(t) for t in tests]
except ImportError as e:
    res["sentencepiece_error"] = str(e)
json.dump(res, open(os.path.join(out, "expected_ids.json"), "w"), ensure_ascii=False, indent=0)
print("ok", sorted(os.listdir(out)))
