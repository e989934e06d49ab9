"""timm LeViT-128S (levit_128s: conv stem, 3 stages of attention with learned position biases,
BatchNorm after every linear, Hardswish), batch 1, 224x224, random weights (seeded by the caller),
BatchNorm calibrated.

Attention is LeViT's own q @ k^T * scale + bias, softmax, @ v (timm has no fused
path for it), so no F.scaled_dot_product_attention (vit_tiny.py says why that matters).

One eval-mode run before export fills timm's attention_bias_cache, the per-head bias tables
gathered by position (what timm itself does at inference): the export then holds them as
constants rather than an aten.index.Tensor gather per block, which stays outside the delegate.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timm import with_bias_cache  # noqa: E402


def model():
    return with_bias_cache("levit_128s")  # fills attention_bias_cache (see above)


def inputs():
    return (torch.randn(1, 3, 224, 224),)
