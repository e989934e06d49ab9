"""timm ViT-Tiny/16 (vit_tiny_patch16_224: 12 layers, dim 192, 3 heads, 197 tokens), batch 1,
random weights (seeded by the caller).

Attention is timm's non-fused path (q @ k^T * scale, softmax, @ v), the math of HF's "eager"
attention: F.scaled_dot_product_attention exports through a decomposition whose fully-masked-row
check (eq / logical_not / any) stays outside the Vulkan delegate, which would split every layer
into CPU and GPU parts on both runtimes and measure the export rather than the kernels.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timm import eager_attention  # noqa: E402


def model():
    return eager_attention("vit_tiny_patch16_224")


def inputs():
    return (torch.randn(1, 3, 224, 224),)
