"""timm models as the benchmark specs build them (random weights, seeded by the caller)."""
import os
import sys

import timm
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _calibrate import calibrate_batchnorm  # noqa: E402


def eager_attention(name):
    """timm's `name` in eval mode on its non-fused attention path (q @ k^T * scale, softmax, @ v):
    vit_tiny.py says why."""
    m = timm.create_model(name, pretrained=False)
    for mod in m.modules():
        if hasattr(mod, "fused_attn"):
            mod.fused_attn = False
    return m.eval()


def with_bias_cache(name, size=224):
    """timm's `name` with calibrated BatchNorm, run once in eval mode so that timm's
    attention_bias_cache (the per-head position-bias tables, what timm itself fills at inference)
    exports as constants rather than an aten.index.Tensor gather per block, which stays outside the
    delegate."""
    m = calibrate_batchnorm(timm.create_model(name, pretrained=False), (4, 3, size, size))
    with torch.no_grad():
        m(torch.zeros(1, 3, size, size))
    return m
