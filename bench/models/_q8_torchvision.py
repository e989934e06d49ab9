"""A torchvision classifier at batch 1, 224x224, random weights, BatchNorm calibrated, then static
int8 (PT2E, XNNPACKQuantizer: per-channel weights, per-tensor activations;
tests/fixtures/specs/_q8.py). Export with --no-ref64."""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "specs"))
from _calibrate import calibrate_batchnorm  # noqa: E402
from _q8 import quantize_static_int8  # noqa: E402


def inputs():
    return (torch.randn(1, 3, 224, 224),)


def q8_model(arch):
    m = calibrate_batchnorm(getattr(torchvision.models, arch)(weights=None), (4, 3, 224, 224))
    return quantize_static_int8(m, inputs(), (1, 3, 224, 224))
