"""timm DeiT-Tiny/16 (deit_tiny_patch16_224: 12 layers, dim 192, 3 heads, 197 tokens), batch 1,
224x224, random weights (seeded by the caller).

Attention is timm's non-fused path, as in vit_tiny.py (which says why).
"""
import timm
import torch


def model():
    m = timm.create_model("deit_tiny_patch16_224", pretrained=False)
    for mod in m.modules():
        if hasattr(mod, "fused_attn"):
            mod.fused_attn = False
    return m.eval()


def inputs():
    return (torch.randn(1, 3, 224, 224),)
