"""Alloy from Python: load a torch.export model (.pt2) or Alloy text IR
(.air), compile it on Alloy's backends and call it with NumPy arrays or
torch tensors.

    import alloy, numpy as np
    print([b.name for b in alloy.backends()])
    model = alloy.load("examples/mlp.air", backends=["ref"])
    print(model.inputs)                   # names, dtypes, shapes ("s0" symbolic)
    y = model(np.ones((2, 784), np.float32), ...)

A pure-Python package over liballoy's C API (ctypes); see alloy._lib for
where the library and the plugins are found, alloy.Model for calls, threads
and dtypes, alloy.errors for the exceptions.
"""
from .errors import (AlloyError, InvalidArgumentError, ParseError, AlloyTypeError,
                     NotFoundError, UnsupportedError, AlloyIOError, OutOfMemoryError,
                     InternalError, VersionError, DeviceLostError, CancelledError,
                     UnavailableError, DeclinedError, LibraryNotFound)
from ._model import Model, TensorInfo, Backend, load, backends
from ._lib import library_path
from .safetensors import bfloat16_to_float32, float32_to_bfloat16
from . import safetensors

__version__ = "1.2.0"

__all__ = ["AlloyError", "InvalidArgumentError", "ParseError", "AlloyTypeError",
           "NotFoundError", "UnsupportedError", "AlloyIOError", "OutOfMemoryError",
           "InternalError", "VersionError", "DeviceLostError", "CancelledError",
           "UnavailableError", "DeclinedError", "LibraryNotFound", "Model", "TensorInfo",
           "Backend", "load", "backends", "library_path", "bfloat16_to_float32",
           "float32_to_bfloat16", "safetensors"]
