"""torchvision RegNetY-400MF, batch 1, 224x224, random weights (seeded by the caller), BatchNorm calibrated.

torchvision names RegNet's blocks "block1-0" and so on; ExecuTorch's batch-norm fusion looks its
new weights up by the FX node name, in which "-" becomes "_", and fails. The blocks are renamed
with "_" (same modules, same order, same weights).
"""
import collections
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _calibrate import calibrate_batchnorm  # noqa: E402


def model():
    m = torchvision.models.regnet_y_400mf(weights=None)
    for mod in list(m.modules()):
        if any("-" in k for k in mod._modules):
            mod._modules = collections.OrderedDict((k.replace("-", "_"), v) for k, v in mod._modules.items())
    return calibrate_batchnorm(m, (4, 3, 224, 224))


def inputs():
    return (torch.randn(1, 3, 224, 224),)
