"""ctypes bindings of liballoy's application API (alloy/runtime.h, model.h,
graph.h, error.h, safetensors.h): the library is found, its functions get
their prototypes, and the structs mirror the C layouts (tests/abi_layout.txt
pins them; tests/test_layout.py checks these against it).

Where liballoy.so is looked for, first found wins:

1. $ALLOY_LIBRARY: the file itself (or a folder holding liballoy.so);
2. beside this package: alloy/_native/liballoy.so, the copy `make python-lib`
   (and so `pip install ./sdk/python` after it) places;
3. next to the `alloy` command on PATH: <prefix>/bin/alloy ->
   <prefix>/lib/liballoy.so (an installed prefix, or a build folder);
4. the build folder of the repository this package sits in:
   <repo>/build/lib/liballoy.so (`make`'s default BUILD).

Plugins: the runtime scans $ALLOY_PLUGIN_PATH first and ../lib/alloy next to
the running program (here: the Python interpreter, which has none); the
package adds the lib/alloy folder beside the liballoy.so it loaded (for the
copy beside the package: alloy/_native/alloy/), as `alloy run` finds them
beside itself.
"""
import ctypes
import os
import shutil
import threading

c_char_p = ctypes.c_char_p
c_int = ctypes.c_int
c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_size_t = ctypes.c_size_t
c_void_p = ctypes.c_void_p
c_bool = ctypes.c_bool
c_double = ctypes.c_double
POINTER = ctypes.POINTER


class HostTensor(ctypes.Structure):
    """alloy_host_tensor (frozen: it is an array element)."""
    _fields_ = [("struct_size", c_size_t), ("dtype", c_int32), ("rank", c_int32),
                ("sizes", POINTER(c_int64)), ("data", c_void_p)]


HOST_TENSOR_STRUCT_SIZE = ctypes.sizeof(HostTensor)  # == ALLOY_STRUCT_SIZE(.., data)


class RunTensor(ctypes.Structure):
    """alloy_run_tensor: host memory (backend -1) or a backend's device memory."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("sizes", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p),
                ("backend", ctypes.c_int32), ("reserved", ctypes.c_int32)]


RUN_TENSOR_STRUCT_SIZE = ctypes.sizeof(RunTensor)


class ExtStream(ctypes.Structure):
    """alloy_ext_stream (alloy/plugin.h): a caller's stream in an extension
    chain; type EXT_CUDA_STREAM, stream a cudaStream_t."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_uint32),
                ("next", ctypes.c_void_p), ("stream", ctypes.c_void_p)]


EXT_CUDA_STREAM = 1
EXT_STREAM_STRUCT_SIZE = ctypes.sizeof(ExtStream)


class RunStats(ctypes.Structure):
    """alloy_run_stats: what runs moved, since the compile."""
    _fields_ = [("struct_size", ctypes.c_size_t)] + [
        (n, ctypes.c_uint64) for n in (
            "runs", "partitions_run", "weight_bytes_in", "input_bytes_in", "output_bytes_out",
            "cross_bytes", "staged_bytes", "same_backend_round_trips", "host_waits", "arena_bytes",
            "arena_ideal_bytes", "fallbacks", "folded_nodes")] + [("dispatch_s", ctypes.c_double)]


class RuntimeOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("plugin_dirs", POINTER(c_char_p)),
                ("num_plugin_dirs", c_int32), ("no_default_paths", c_bool),
                ("reserved", ctypes.c_uint8 * 3), ("only_backends", POINTER(c_char_p)),
                ("num_only_backends", c_int32), ("reserved2", c_int32)]


class BackendInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("name", c_char_p), ("vendor", c_char_p),
                ("version", c_char_p), ("abi_major", c_uint32), ("abi_minor", c_uint32),
                ("num_devices", c_int32), ("devices", c_char_p), ("path", c_char_p),
                ("ok", c_bool), ("status", c_char_p)]


class Option(ctypes.Structure):
    _fields_ = [("key", c_char_p), ("value", c_char_p)]


class ProgramOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("decompose", c_int32),
                ("partition_launch_s", c_double), ("link_bytes_per_s", c_double),
                ("weights", POINTER(HostTensor)), ("num_weights", c_int32),
                ("reserved", c_int32), ("backend_options", POINTER(Option)),
                ("num_backend_options", c_int32), ("reserved2", c_int32)]


class Dim(ctypes.Structure):
    """alloy_dim: concrete when expr is NULL."""
    _fields_ = [("expr", c_void_p), ("value", c_int64)]


class StEntry(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int32), ("rank", c_int),
                ("shape", c_int64 * 16), ("data", c_void_p), ("nbytes", c_size_t)]


# The ALLOY_STRUCT_SIZE of each struct: offsetof(last field) + its size.
def struct_size(cls):
    last = cls._fields_[-1][0]
    return getattr(cls, last).offset + getattr(cls, last).size


# alloy_dtype, in enum order, with PyTorch's names (alloy/dtype.h).
DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64", "complex128"]
DTYPE_SIZES = [1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16]
DTYPE_OF_NAME = {n: i for i, n in enumerate(DTYPE_NAMES)}

INPUT_USER = 0
OUTPUT_USER = 0
SYM_INF = (1 << 63) - 1

_lib = None
_lib_path = None
_lock = threading.Lock()


def _candidates():
    env = os.environ.get("ALLOY_LIBRARY")
    if env:
        yield os.path.join(env, "liballoy.so") if os.path.isdir(env) else env
        return  # named explicitly: nothing else is tried
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "_native", "liballoy.so")
    exe = shutil.which("alloy")
    if exe:
        yield os.path.join(os.path.dirname(os.path.realpath(exe)), "..", "lib", "liballoy.so")
    # sdk/python/alloy -> the repository root
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    if os.path.isdir(os.path.join(root, "sdk", "include", "alloy")):  # a source tree
        yield os.path.join(root, "build", "lib", "liballoy.so")


def library_path():
    """The liballoy.so this package uses (loading it if needed)."""
    lib()
    return _lib_path


def plugin_dir():
    """The lib/alloy folder beside the liballoy.so loaded (may not exist)."""
    return os.path.join(os.path.dirname(library_path()), "alloy")


def lib():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            path = os.path.normpath(path)
            tried.append(path)
            if os.path.exists(path):
                handle = ctypes.CDLL(path)
                _declare(handle)
                _lib_path = os.path.realpath(path)
                _lib = handle
                return _lib
        from .errors import LibraryNotFound
        raise LibraryNotFound(
            "liballoy.so not found; looked at: " + ", ".join(tried) +
            " (set ALLOY_LIBRARY to the library, run `make python-lib`, or put the alloy "
            "command of a build or an installed prefix on PATH)")


def _fn(handle, name, restype, *argtypes):
    f = getattr(handle, name)
    f.restype = restype
    f.argtypes = list(argtypes)


def _declare(h):
    P = POINTER
    vp = c_void_p
    _fn(h, "alloy_error_code_of", c_int, vp)
    _fn(h, "alloy_error_message", c_char_p, vp)
    _fn(h, "alloy_error_free", None, vp)
    _fn(h, "alloy_runtime_open", vp, P(RuntimeOptions), P(vp))
    _fn(h, "alloy_runtime_close", None, vp)
    _fn(h, "alloy_runtime_num_backends", c_int, vp)
    _fn(h, "alloy_runtime_backend_info", None, vp, c_int, P(BackendInfo))
    _fn(h, "alloy_runtime_find_backend", c_int, vp, c_char_p)
    _fn(h, "alloy_runtime_set_backend_option", vp, vp, c_int, c_char_p, c_char_p)
    _fn(h, "alloy_program_compile_ex", vp, vp, c_int, vp, P(ProgramOptions), P(vp))
    _fn(h, "alloy_program_release", None, vp)
    _fn(h, "alloy_program_graph", vp, vp)
    _fn(h, "alloy_program_num_specializations", c_int, vp)
    _fn(h, "alloy_program_run", vp, vp, P(HostTensor), c_int, P(HostTensor), c_int)
    _fn(h, "alloy_mixture_compile", vp, vp, P(c_int), c_int, vp, P(ProgramOptions), P(vp))
    _fn(h, "alloy_mixture_release", None, vp)
    _fn(h, "alloy_mixture_graph", vp, vp)
    _fn(h, "alloy_mixture_run", vp, vp, P(HostTensor), c_int, P(HostTensor), c_int)
    _fn(h, "alloy_program_stats", None, vp, P(RunStats))
    _fn(h, "alloy_mixture_stats", None, vp, P(RunStats))
    _fn(h, "alloy_program_run_tensors", vp, vp, P(RunTensor), c_int, P(RunTensor), c_int)
    _fn(h, "alloy_mixture_run_tensors", vp, vp, P(RunTensor), c_int, P(RunTensor), c_int)
    _fn(h, "alloy_program_run_on_stream", vp, vp, P(RunTensor), c_int, P(RunTensor), c_int, c_int, P(ExtStream))
    _fn(h, "alloy_mixture_run_on_stream", vp, vp, P(RunTensor), c_int, P(RunTensor), c_int, c_int, P(ExtStream))
    _fn(h, "alloy_program_output_sizes", vp, vp, P(RunTensor), c_int, c_int, P(c_int), P(ctypes.c_int64))
    _fn(h, "alloy_mixture_output_sizes", vp, vp, P(RunTensor), c_int, c_int, P(c_int), P(ctypes.c_int64))
    _fn(h, "alloy_model_load", vp, c_char_p, P(vp))
    _fn(h, "alloy_model_free", None, vp)
    _fn(h, "alloy_model_graph", vp, vp)
    _fn(h, "alloy_model_num_weights", c_int, vp)
    _fn(h, "alloy_model_find_weight", c_bool, vp, c_char_p, P(HostTensor))
    _fn(h, "alloy_model_num_user_inputs", c_int, vp)
    _fn(h, "alloy_model_bind_inputs", vp, vp, P(HostTensor), c_int, P(HostTensor), c_int)
    _fn(h, "alloy_graph_num_inputs", c_int, vp)
    _fn(h, "alloy_graph_input", vp, vp, c_int)
    _fn(h, "alloy_graph_num_outputs", c_int, vp)
    _fn(h, "alloy_graph_output", vp, vp, c_int)
    _fn(h, "alloy_graph_num_nodes", c_int, vp)
    _fn(h, "alloy_graph_input_role", c_int, vp, c_int, P(c_char_p))
    _fn(h, "alloy_graph_output_role", c_int, vp, c_int, P(c_char_p))
    _fn(h, "alloy_graph_symtab", vp, vp)
    _fn(h, "alloy_value_name", c_char_p, vp)
    _fn(h, "alloy_value_kind_of", c_int, vp)
    _fn(h, "alloy_value_dtype", c_int, vp)
    _fn(h, "alloy_value_rank", c_int, vp)
    _fn(h, "alloy_value_shape", P(Dim), vp)
    _fn(h, "alloy_dim_print", c_size_t, Dim, c_char_p, c_size_t)
    _fn(h, "alloy_symtab_count", c_int, vp)
    _fn(h, "alloy_symtab_name", c_char_p, vp, c_int)
    _fn(h, "alloy_symtab_range", None, vp, c_int, P(c_int64), P(c_int64))
    _fn(h, "alloy_symtab_is_unbacked", c_bool, vp, c_int)
    _fn(h, "alloy_op_find", vp, c_char_p)
    _fn(h, "alloy_safetensors_open", vp, c_char_p, P(vp))
    _fn(h, "alloy_safetensors_close", None, vp)
    _fn(h, "alloy_safetensors_count", c_int, vp)
    _fn(h, "alloy_safetensors_entry", P(StEntry), vp, c_int)


def check(err):
    """Raises the AlloyError for an alloy_error* (freeing it); None passes."""
    if err:
        from .errors import error_from_code
        h = lib()
        code = h.alloy_error_code_of(err)
        msg = h.alloy_error_message(err)
        msg = msg.decode("utf-8", "replace") if msg else "(no message)"
        h.alloy_error_free(err)
        raise error_from_code(code, msg)
