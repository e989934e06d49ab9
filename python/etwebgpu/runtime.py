"""The shape of ExecuTorch's Python runtime (``executorch.runtime``), over etwebgpu:

    from etwebgpu.runtime import Runtime        # instead of: from executorch.runtime import Runtime
    method = Runtime.get().load_program("model.pte").load_method("forward")
    outputs = method.execute([x])

Outputs are torch tensors when torch is imported by the caller (as ExecuTorch returns them),
NumPy arrays otherwise.
"""
import enum
import os
import sys

from .model import load


class Verification(enum.IntEnum):
    """Accepted for compatibility; etwebgpu always verifies the whole file."""

    Minimal = 0
    InternalConsistency = 1


class Method:
    def __init__(self, model):
        self._model = model

    @property
    def inputs(self):
        return self._model.inputs

    @property
    def outputs(self):
        return self._model.outputs

    def execute(self, inputs):
        outs = self._model.run(list(inputs))
        torch = sys.modules.get("torch")
        return [torch.from_numpy(o) for o in outs] if torch is not None else outs


class Program:
    def __init__(self, data):
        self._data = data

    def load_method(self, name):
        return Method(load(self._data, method=name))


class Runtime:
    _instance = None

    @staticmethod
    def get():
        if Runtime._instance is None:
            Runtime._instance = Runtime()
        return Runtime._instance

    def load_program(self, data, verification=Verification.InternalConsistency):
        """data: a path, the file's bytes, or a binary file object."""
        if isinstance(data, (str, os.PathLike)):
            with open(data, "rb") as f:
                data = f.read()
        elif hasattr(data, "read"):
            data = data.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"load_program() takes a path, bytes or a binary file, got {type(data).__name__}")
        return Program(bytes(data))
