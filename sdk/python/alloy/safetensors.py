"""A small safetensors reader (the format: an 8-byte little-endian header
length N, N bytes of JSON mapping each name to {"dtype", "shape",
"data_offsets": [begin, end]} relative to the end of the header, then the
data). Pure Python and NumPy; no liballoy needed.

load(path) returns {name: numpy array}; bfloat16 tensors come back as uint16
arrays of their bits (NumPy has no bfloat16; bfloat16_to_float32 widens
them), or as torch tensors with as_torch=True (every dtype then is torch's).
"""
import json
import struct

_NP = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
       "I64": "int64", "F16": "float16", "BF16": "uint16", "F32": "float32", "F64": "float64",
       "C64": "complex64", "U16": "uint16", "U32": "uint32", "U64": "uint64"}


def load(path, as_torch=False):
    import numpy as np
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("%s: not a safetensors file (shorter than its header length)" % path)
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise ValueError("%s: header length %d runs past the end of the file" % (path, n))
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        if e["dtype"] not in _NP:
            raise ValueError("%s: tensor %s has dtype %s, which this reader does not know"
                             % (path, name, e["dtype"]))
        begin, end = e["data_offsets"]
        a = np.frombuffer(blob, dtype=np.dtype(_NP[e["dtype"]]).newbyteorder("<"),
                          count=(end - begin) // np.dtype(_NP[e["dtype"]]).itemsize,
                          offset=base + begin)
        a = a.astype(a.dtype.newbyteorder("=")).reshape(e["shape"])
        if as_torch:
            import torch
            t = torch.from_numpy(a.copy())
            if e["dtype"] == "BF16":
                t = t.view(torch.bfloat16)
            a = t
        out[name] = a
    return out


def bfloat16_to_float32(bits):
    """float32 values of a uint16 array of bfloat16 bits (exact)."""
    import numpy as np
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def float32_to_bfloat16(values):
    """uint16 bfloat16 bits of float32 values, rounded to nearest even (NaN
    stays a quiet NaN), as alloy/dtype.h's alloy_bf16_from_f32."""
    import numpy as np
    x = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    nan = (x & 0x7fffffff) > 0x7f800000
    rounded = ((x + 0x7fff + ((x >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((x >> 16) | 0x40).astype(np.uint16), rounded)
