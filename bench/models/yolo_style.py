"""A YOLOv8-style detector for 1x3x320x320 images, small widths (16..128): Conv (3x3 conv +
BatchNorm + SiLU) stride-2 stages with C2f blocks (split, bottlenecks with residual adds, concat),
an SPPF (three 5x5 max-pools concatenated), a top-down neck (nearest 2x upsample + concat + C2f)
and a detection head per scale (box 4x16 + 80 classes, concatenated over the three scales).
Random weights (seeded by the caller), BatchNorm calibrated.
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _calibrate import calibrate_batchnorm  # noqa: E402


class Conv(nn.Sequential):
    def __init__(self, ci, co, k=3, s=1):
        super().__init__(nn.Conv2d(ci, co, k, s, k // 2, bias=False), nn.BatchNorm2d(co), nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = Conv(c, c), Conv(c, c), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    def __init__(self, ci, co, n=1, shortcut=True):
        super().__init__()
        self.c = co // 2
        self.cv1 = Conv(ci, 2 * self.c, 1)
        self.cv2 = Conv((2 + n) * self.c, co, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).split((self.c, self.c), 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, ci, co):
        super().__init__()
        self.cv1, self.cv2 = Conv(ci, ci // 2, 1), Conv(ci * 2, co, 1)
        self.m = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat([x, y1, y2, self.m(y2)], 1))


class Detect(nn.Module):
    def __init__(self, chs, classes=80, reg=16):
        super().__init__()
        self.box = nn.ModuleList(nn.Sequential(Conv(c, 32), Conv(32, 32), nn.Conv2d(32, 4 * reg, 1)) for c in chs)
        self.cls = nn.ModuleList(nn.Sequential(Conv(c, 48), Conv(48, 48), nn.Conv2d(48, classes, 1)) for c in chs)

    def forward(self, xs):
        outs = [torch.cat([b(x), c(x)], 1).flatten(2) for x, b, c in zip(xs, self.box, self.cls)]
        return torch.cat(outs, 2)


class YoloStyle(nn.Module):
    def __init__(self, w=(16, 32, 64, 128)):
        super().__init__()
        self.stem = Conv(3, w[0], 3, 2)
        self.s2 = nn.Sequential(Conv(w[0], w[1], 3, 2), C2f(w[1], w[1]))
        self.s3 = nn.Sequential(Conv(w[1], w[2], 3, 2), C2f(w[2], w[2], 2))
        self.s4 = nn.Sequential(Conv(w[2], w[3], 3, 2), C2f(w[3], w[3], 2))
        self.s5 = nn.Sequential(Conv(w[3], w[3], 3, 2), C2f(w[3], w[3]), SPPF(w[3], w[3]))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.n4 = C2f(2 * w[3], w[3], shortcut=False)
        self.n3 = C2f(w[3] + w[2], w[2], shortcut=False)
        self.detect = Detect((w[2], w[3], w[3]))

    def forward(self, x):
        p3 = self.s3(self.s2(self.stem(x)))
        p4 = self.s4(p3)
        p5 = self.s5(p4)
        n4 = self.n4(torch.cat([self.up(p5), p4], 1))
        n3 = self.n3(torch.cat([self.up(n4), p3], 1))
        return self.detect([n3, n4, p5])


def model():
    return calibrate_batchnorm(YoloStyle(), (2, 3, 320, 320))


def inputs():
    return (torch.randn(1, 3, 320, 320),)
