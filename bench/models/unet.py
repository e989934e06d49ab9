"""A small UNet for 1x3x256x256 images: four levels (16, 32, 64, 128 channels, 256 at the
bottom), each two 3x3 conv + BatchNorm + ReLU; 2x2 max-pool down, 2x2 stride-2 transposed conv up,
skip connections concatenated; a 1x1 conv to 2 classes. Random weights (seeded by the caller),
BatchNorm calibrated.
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _calibrate import calibrate_batchnorm  # noqa: E402

WIDTHS = (16, 32, 64, 128, 256)


def double_conv(ci, co):
    return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(),
                         nn.Conv2d(co, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, classes=2):
        super().__init__()
        w = WIDTHS
        self.down = nn.ModuleList(double_conv(ci, co) for ci, co in zip((3,) + w[:-2], w[:-1]))
        self.bottom = double_conv(w[-2], w[-1])
        self.up = nn.ModuleList(nn.ConvTranspose2d(co, co // 2, 2, stride=2) for co in reversed(w[1:]))
        self.dec = nn.ModuleList(double_conv(co, co // 2) for co in reversed(w[1:]))
        self.head = nn.Conv2d(w[0], classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, dec, skip in zip(self.up, self.dec, reversed(skips)):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def model():
    return calibrate_batchnorm(UNet(), (2, 3, 256, 256))


def inputs():
    return (torch.randn(1, 3, 256, 256),)
