"""timm MobileViT-XS (mobilevit_xs: MobileNetV2 blocks with three MobileViT blocks of 2x2 patches,
dims 96/120/144), batch 1, 256x256 (its native size), random weights (seeded by the caller),
BatchNorm calibrated.

Attention is timm's non-fused path, as in vit_tiny.py (which says why).
"""
import os
import sys

import timm
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _calibrate import calibrate_batchnorm  # noqa: E402


def model():
    m = timm.create_model("mobilevit_xs", pretrained=False)
    for mod in m.modules():
        if hasattr(mod, "fused_attn"):
            mod.fused_attn = False
    return calibrate_batchnorm(m, (4, 3, 256, 256))


def inputs():
    return (torch.randn(1, 3, 256, 256),)
