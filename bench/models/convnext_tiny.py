"""torchvision ConvNeXt-Tiny, batch 1, 224x224, random weights (seeded by the caller); LayerNorm, no BatchNorm."""
import torch
import torchvision


def model():
    return torchvision.models.convnext_tiny(weights=None).eval()


def inputs():
    return (torch.randn(1, 3, 224, 224),)
