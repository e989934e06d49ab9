"""etwebgpu: run ExecuTorch ``.pte`` programs (VulkanPartitioner exports) on WebGPU.

    import etwebgpu, numpy as np
    m = etwebgpu.load("model.pte")
    (y,) = m.run([np.zeros(m.inputs[0].shape, np.float32)])

Inputs are NumPy arrays or anything with ``__array__`` (CPU torch tensors included); outputs are
NumPy arrays. Failures raise :class:`etwebgpu.Error` subclasses carrying the C++ error kind.
"""
from . import _etwebgpu
from .errors import (Error, FormatError, GpuError, InternalError, InvalidArgumentError, IoError,
                     LimitError, UnsupportedError)
from .model import Model, Profile, TensorInfo, TokenStream, load, load_options
from . import runtime

__version__ = "0.1.0"


def device_info():
    """The shared WebGPU device: adapter description, type, features and key limits (a dict)."""
    return _etwebgpu.device_info()


__all__ = ["load", "load_options", "Model", "Profile", "TensorInfo", "TokenStream", "runtime", "device_info", "Error", "IoError", "FormatError",
           "UnsupportedError", "InvalidArgumentError", "LimitError", "GpuError", "InternalError"]
