"""transformers BERT encoder from a config (BertModel without pooler: 4 layers, hidden 256, 4 heads,
MLP 1024, vocab 8192), batch 1, 128 token ids (int64) in, the 1x128x256 last hidden state out,
random weights (seeded by the caller).

Attention is transformers' "eager" implementation (q @ k^T, softmax, @ v; see vit_tiny.py for why
not F.scaled_dot_product_attention). Every token attends to every token: the wrapper hands the
model an all-zero additive mask (1x1x128x128) as a constant buffer, so the export holds no mask
construction (transformers builds one even when given none: scalar_tensor, ge, where, outside the
delegate). Token type and position ids are the model's own constant buffers.
"""
import sys

import torch
from torch import nn

# The exporter puts its own torchao (python files only, __version__ "unknown") on the path, and
# transformers parses torchao's version when it is imported: give it one it can parse and that
# reads as too old to use, so transformers leaves torchao alone.
if str(getattr(sys.modules.get("torchao"), "__version__", "")) == "unknown":
    sys.modules["torchao"].__version__ = "0.0.0"
from transformers import BertConfig, BertModel  # noqa: E402

LAYERS, HIDDEN, HEADS, MLP, VOCAB, SEQ = 4, 256, 4, 1024, 8192, 128


class LastHidden(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        self.register_buffer("mask", torch.zeros(1, 1, SEQ, SEQ))

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, attention_mask=self.mask)[0]


def model():
    cfg = BertConfig(num_hidden_layers=LAYERS, hidden_size=HIDDEN, num_attention_heads=HEADS,
                     intermediate_size=MLP, vocab_size=VOCAB, attn_implementation="eager")
    m = BertModel(cfg, add_pooling_layer=False)
    # padding_idx only keeps row 0's gradient at zero (the row stays as initialised, zero); it
    # exports as a third argument of aten.embedding, on which the Vulkan partitioner's dtype check
    # fails (IndexError), so it is dropped
    m.embeddings.word_embeddings.padding_idx = None
    assert m.config._attn_implementation == "eager", m.config._attn_implementation
    return LastHidden(m).eval()


def inputs():
    return (torch.randint(0, VOCAB, (1, SEQ)),)
