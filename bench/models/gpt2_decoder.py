"""transformers GPT-2 decoder from a config (GPT2LMHeadModel: 6 layers, n_embd 512, 8 heads,
vocab 8192), batch 1, 64 token ids (int64) in, 1x64x8192 logits out, random weights (seeded by the
caller), no KV cache.

Attention is transformers' "eager" implementation (q @ k^T, softmax, @ v; see vit_tiny.py for why
not F.scaled_dot_product_attention). The wrapper hands the model its position ids and the additive
causal mask (0 on and below the diagonal, float32 min above, 1x1x64x64) as constant buffers, so
the export holds no mask construction (arange, comparisons, where) on the CPU in front of the
delegate; the model adds the mask to q @ k^T as it would its own. The LM head is applied to the
transformer's output directly: GPT2LMHeadModel's own forward first slices the hidden states
(logits_to_keep), a whole-tensor slice that exports as an alias_copy outside the delegate, which
would cut the graph in two before the head.
"""
import sys

import torch
from torch import nn

# The exporter puts its own torchao (python files only, __version__ "unknown") on the path, and
# transformers parses torchao's version when it is imported: give it one it can parse and that
# reads as too old to use, so transformers leaves torchao alone.
if str(getattr(sys.modules.get("torchao"), "__version__", "")) == "unknown":
    sys.modules["torchao"].__version__ = "0.0.0"
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

LAYERS, EMBD, HEADS, VOCAB, SEQ = 6, 512, 8, 8192, 64


class Logits(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        causal = torch.full((SEQ, SEQ), torch.finfo(torch.float32).min).triu(1)
        self.register_buffer("mask", causal[None, None])
        self.register_buffer("pos", torch.arange(SEQ)[None])

    def forward(self, input_ids):
        h = self.m.transformer(input_ids=input_ids, attention_mask=self.mask, position_ids=self.pos, use_cache=False)[0]
        return self.m.lm_head(h)


def model():
    cfg = GPT2Config(n_layer=LAYERS, n_embd=EMBD, n_head=HEADS, vocab_size=VOCAB, attn_implementation="eager")
    m = GPT2LMHeadModel(cfg)
    assert m.config._attn_implementation == "eager", m.config._attn_implementation
    return Logits(m).eval()


def inputs():
    return (torch.randint(0, VOCAB, (1, SEQ)),)
