"""timm DeiT-Tiny/16 (deit_tiny_patch16_224: 12 layers, dim 192, 3 heads, 197 tokens), batch 1,
224x224, random weights (seeded by the caller).

Attention is timm's non-fused path, as in vit_tiny.py (which says why).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timm import eager_attention  # noqa: E402


def model():
    return eager_attention("deit_tiny_patch16_224")


def inputs():
    return (torch.randn(1, 3, 224, 224),)
