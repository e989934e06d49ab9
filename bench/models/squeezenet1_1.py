"""torchvision SqueezeNet 1.1, batch 1, 224x224, random weights (seeded by the caller); no BatchNorm to calibrate."""
import torch
import torchvision


def model():
    return torchvision.models.squeezenet1_1(weights=None).eval()


def inputs():
    return (torch.randn(1, 3, 224, 224),)
