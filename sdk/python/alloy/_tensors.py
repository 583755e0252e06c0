"""Arrays in, arrays out: NumPy arrays, torch tensors and other DLPack
producers made into alloy_host_tensor structs, and the runtime's outputs
copied into new arrays.

Inputs are passed without copying wherever the memory already is what the C
API reads (contiguous, row-major host memory of the right element type): a
C-contiguous NumPy array, and any DLPack producer on the CPU (torch tensors
included) whose strides are row-major. Anything else is copied once to a
contiguous host buffer first (a non-contiguous view; a CUDA tensor where
the model does not run on the cuda backend). Where it does, CUDA tensors go
in and come out in device memory (Model._run_on_device,
alloy_*_run_tensors): nothing is copied through the host.

Outputs are always copied: the runtime's output buffers live only until the
program's next run.
"""
import ctypes

from . import _lib
from .errors import AlloyTypeError, InvalidArgumentError

# --- DLPack (dlpack.h, the unversioned DLManagedTensor of __dlpack__()) ---


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_DL_CPU, _DL_CUDA_HOST, _DL_ROCM_HOST = 1, 3, 11
_DL_HOST_DEVICES = (_DL_CPU, _DL_CUDA_HOST, _DL_ROCM_HOST)
# (DLPack type code, bits) -> alloy_dtype
_DL_TO_ALLOY = {(6, 8): 0, (1, 8): 1, (0, 8): 2, (0, 16): 3, (0, 32): 4, (0, 64): 5,
                (2, 16): 6, (4, 16): 7, (2, 32): 8, (2, 64): 9, (5, 64): 10, (5, 128): 11}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Bound:
    """One input as the C API reads it, and what keeps its memory alive."""
    __slots__ = ("dtype", "shape", "ptr", "keep", "copied")

    def __init__(self, dtype, shape, ptr, keep, copied):
        self.dtype, self.shape, self.ptr, self.keep, self.copied = dtype, shape, ptr, keep, copied


def _row_major(shape, strides):
    expect = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expect:
            return False
        expect *= size
    return True


def from_dlpack_capsule(capsule, what):
    """A Bound over a legacy "dltensor" capsule (not consumed: when the
    capsule is dropped, its producer's destructor frees the tensor), or
    None when its memory is not contiguous host memory."""
    p = _get_pointer(capsule, b"dltensor")
    t = _DLManagedTensor.from_address(p).dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    dtype = _DL_TO_ALLOY.get((t.dtype.code, t.dtype.bits))
    if dtype is None or t.dtype.lanes != 1:
        raise AlloyTypeError("%s: DLPack type (code %d, %d bits, %d lanes) has no Alloy dtype"
                         % (what, t.dtype.code, t.dtype.bits, t.dtype.lanes))
    if t.device.device_type not in _DL_HOST_DEVICES:
        return None
    if t.strides and not _row_major(shape, [t.strides[i] for i in range(t.ndim)]):
        return None
    return Bound(dtype, shape, (t.data or 0) + t.byte_offset, capsule, False)


def is_torch(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def _numpy():
    import numpy
    return numpy


def numpy_dtype(alloy_dtype):
    """The NumPy dtype holding an Alloy dtype's elements (bfloat16: uint16
    bits, NumPy having no bfloat16)."""
    np = _numpy()
    name = _lib.DTYPE_NAMES[alloy_dtype]
    return np.dtype("uint16") if name == "bfloat16" else np.dtype(name)


def _alloy_dtype_of_numpy(dt, expected):
    name = dt.name
    if name == "bfloat16" and dt.itemsize == 2:  # ml_dtypes' bfloat16
        return 7
    if name == "uint16" and expected == 7:  # bfloat16 bits, as outputs come back
        return 7
    return _lib.DTYPE_OF_NAME.get(name)


def bind(x, expected, what):
    """A Bound for input x of the model; expected is the alloy_dtype the
    model declares (used for Python scalars and lists, and to read uint16 as
    bfloat16 bits)."""
    if is_torch(x):
        t = x.detach()
        if t.device.type == "cpu" and not t.is_conj() and not t.is_neg():
            b = from_dlpack_capsule(t.__dlpack__(), what)
            if b is not None:
                return b
        t = t.resolve_conj().resolve_neg().to("cpu").contiguous()
        b = from_dlpack_capsule(t.__dlpack__(), what)
        b.copied = True
        return b
    np = _numpy()
    if isinstance(x, np.ndarray):
        dt = _alloy_dtype_of_numpy(x.dtype, expected)
        if dt is None:
            raise AlloyTypeError("%s: NumPy dtype %s has no Alloy dtype (the model expects %s)"
                             % (what, x.dtype.name, _lib.DTYPE_NAMES[expected]))
        a = np.ascontiguousarray(x)
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        return Bound(dt, a.shape, a.ctypes.data, a, a is not x)
    if hasattr(x, "__dlpack__"):
        try:
            cap = x.__dlpack__(stream=None)
        except TypeError:
            cap = x.__dlpack__()
        b = from_dlpack_capsule(cap, what)
        if b is None:
            raise InvalidArgumentError("%s: only DLPack tensors in contiguous host memory are "
                                       "taken (copy it to the CPU, contiguous, first)" % what)
        return b
    if isinstance(x, (int, float, bool, list, tuple)):
        if expected == 7:
            raise AlloyTypeError("%s: the model takes bfloat16: pass a torch tensor, or a NumPy "
                             "uint16 array of bfloat16 bits" % what)
        a = np.ascontiguousarray(np.asarray(x, dtype=numpy_dtype(expected)))
        return Bound(expected, a.shape, a.ctypes.data, a, True)
    raise InvalidArgumentError("%s: expected a NumPy array, a torch tensor or a DLPack tensor, "
                               "got %s" % (what, type(x).__name__))


_TORCH_DTYPES = None


def alloy_dtype_of_torch(dt, what):
    """The alloy_dtype of torch dtype dt; an AlloyTypeError naming what."""
    import torch
    torch_dtype(0)
    if dt not in _TORCH_DTYPES:
        raise AlloyTypeError("%s: torch dtype %s has no Alloy dtype" % (what, dt))
    return _TORCH_DTYPES.index(dt)


def torch_dtype(alloy_dtype):
    global _TORCH_DTYPES
    import torch
    if _TORCH_DTYPES is None:
        _TORCH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
                         torch.int64, torch.float16, torch.bfloat16, torch.float32,
                         torch.float64, torch.complex64, torch.complex128]
    return _TORCH_DTYPES[alloy_dtype]


def copy_out(t, as_torch, device=None):
    """A new array holding host tensor t's data (a NumPy array, or a torch
    tensor on device when as_torch)."""
    shape = tuple(t.sizes[i] for i in range(t.rank))
    n = 1
    for s in shape:
        n *= s
    nbytes = n * _lib.DTYPE_SIZES[t.dtype]
    if as_torch:
        import torch
        out = torch.empty(shape, dtype=torch_dtype(t.dtype))
        if nbytes:
            ctypes.memmove(out.data_ptr(), t.data, nbytes)
        if device is not None and device.type != "cpu":
            out = out.to(device)
        return out
    np = _numpy()
    out = np.empty(shape, dtype=numpy_dtype(t.dtype))
    if nbytes:
        ctypes.memmove(out.ctypes.data, t.data, nbytes)
    return out
