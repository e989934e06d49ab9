"""torchvision ShuffleNetV2 x1.0, batch 1, 224x224, random weights (seeded by the caller), BatchNorm calibrated."""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _calibrate import calibrate_batchnorm  # noqa: E402


def model():
    return calibrate_batchnorm(torchvision.models.shufflenet_v2_x1_0(weights=None), (4, 3, 224, 224))


def inputs():
    return (torch.randn(1, 3, 224, 224),)
