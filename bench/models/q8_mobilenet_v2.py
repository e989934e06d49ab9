"""torchvision MobileNetV2, static int8 (bench/models/_q8_torchvision.py). Export with --no-ref64."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _q8_torchvision import inputs, q8_model  # noqa: E402,F401


def model():
    return q8_model("mobilenet_v2")
