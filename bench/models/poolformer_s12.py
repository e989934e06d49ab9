"""timm PoolFormer-S12 (poolformer_s12: 3x3 average-pool token mixers, GroupNorm, 4 stages of
64..512 channels), batch 1, 224x224, random weights (seeded by the caller); no BatchNorm."""
import timm
import torch


def model():
    return timm.create_model("poolformer_s12", pretrained=False).eval()


def inputs():
    return (torch.randn(1, 3, 224, 224),)
