"""timm Swin-T (swin_tiny_patch4_window7_224: window 7, shifted windows, 4 stages of 96..768
channels), batch 1, 224x224, random weights (seeded by the caller).

Attention is timm's non-fused path, as in vit_tiny.py (which says why). timm's Swin rather than
torchvision's swin_t: torchvision builds the shifted-window mask in every forward (new_zeros, slice
assignment, ne / eq, masked_fill), all of which stays outside the Vulkan delegate; timm keeps it
as a buffer. Still outside the delegate in both: torch.roll, which exports as arange / fmod /
index, and the relative-position-bias gather, so every shifted block is split between the
delegate and a few CPU ops on the upstream runtime.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timm import eager_attention  # noqa: E402


def model():
    return eager_attention("swin_tiny_patch4_window7_224")


def inputs():
    return (torch.randn(1, 3, 224, 224),)
