"""alloy.load, alloy.backends and the Model they make."""
import collections
import ctypes
import logging
import os
import tempfile
import threading

from . import _lib, _tensors
from ._lib import HostTensor, check
from .errors import AlloyError, InvalidArgumentError, NotFoundError

log = logging.getLogger("alloy")

TensorInfo = collections.namedtuple("TensorInfo", "name dtype shape")
TensorInfo.__doc__ = """One user input or output of a model: its name in the graph, its dtype
(PyTorch's spelling: "float32", "bfloat16", ...) and its shape, a tuple whose
entries are ints or, for a symbolic size, the expression as a string ("s0",
"2*s0")."""

Backend = collections.namedtuple("Backend", "name version status devices vendor abi path ok")
Backend.__doc__ = """One row of `alloy backends`: status is "ok" or "refused: <reason>"; devices a
list of strings such as "cpu0 (cpu)"; abi "1.2"; ok whether it is usable."""

_SHIPPED = ("cuda", "hip", "cpu")  # DESIGN.md's default order, before ref
_DECOMPOSE = {None: 0, "auto": 0, "core": 1, "prims": 2}


def _cstrs(names):
    arr = (ctypes.c_char_p * max(1, len(names)))()
    for i, n in enumerate(names):
        arr[i] = n.encode()
    return arr


def _split_devices(text):
    """"cpu0 (cpu), cpu1 (cpu)" -> a list; a comma inside brackets or
    parentheses (a device's description) does not split."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth <= 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [d for d in out if d]


class _Runtime:
    """An alloy_runtime with the package's plugin folder added."""

    def __init__(self, only=None):
        h = _lib.lib()
        dirs = [d for d in [_lib.plugin_dir()] if os.path.isdir(d)]
        only = list(only or [])
        self._dirs, self._only = _cstrs(dirs), _cstrs(only)
        o = _lib.RuntimeOptions(struct_size=_lib.struct_size(_lib.RuntimeOptions),
                                plugin_dirs=self._dirs if dirs else None,
                                num_plugin_dirs=len(dirs),
                                only_backends=self._only if only else None,
                                num_only_backends=len(only))
        self.ptr = ctypes.c_void_p()
        check(h.alloy_runtime_open(ctypes.byref(o), ctypes.byref(self.ptr)))

    def infos(self):
        h = _lib.lib()
        rows = []
        for i in range(h.alloy_runtime_num_backends(self.ptr)):
            b = _lib.BackendInfo(struct_size=_lib.struct_size(_lib.BackendInfo))
            h.alloy_runtime_backend_info(self.ptr, i, ctypes.byref(b))
            s = lambda v: v.decode("utf-8", "replace") if v else ""
            devs = _split_devices(s(b.devices))
            rows.append(Backend(s(b.name), s(b.version), s(b.status), devs, s(b.vendor),
                                "%d.%d" % (b.abi_major, b.abi_minor), s(b.path), bool(b.ok)))
        return rows

    def find(self, name):
        i = _lib.lib().alloy_runtime_find_backend(self.ptr, name.encode())
        if i < 0:
            why = "no usable backend '%s' (see alloy.backends())" % name
            for row in self.infos():
                if row.name.lower() == name.lower():
                    why = "backend '%s' cannot be used: %s: %s" % (name, row.path, row.status)
            raise NotFoundError(why)
        return i

    def close(self):
        if self.ptr:
            _lib.lib().alloy_runtime_close(self.ptr)
            self.ptr = ctypes.c_void_p()


def backends():
    """Every backend found, usable or not, in priority order (as `alloy
    backends` lists them): a list of Backend(name, version, status, devices,
    vendor, abi, path, ok)."""
    rt = _Runtime()
    try:
        return rt.infos()
    finally:
        rt.close()


def _backend_list(backends):
    if backends is None:
        env = os.environ.get("ALLOY_BACKENDS")
        return [b for b in env.split(",") if b] if env else None
    if isinstance(backends, str):
        return [b for b in backends.split(",") if b]
    return list(backends)


def _backend_options(options):
    """{"cpu.key": "v"} or {"cpu": {"key": "v"}} -> [(b"cpu.key", b"v")]."""
    out = []
    for k, v in (options or {}).items():
        if isinstance(v, dict):
            out += [("%s.%s" % (k, kk), vv) for kk, vv in v.items()]
        else:
            out.append((k, v))
    for k, v in out:
        if "." not in k or k.startswith("."):
            raise InvalidArgumentError("options: '%s' is not BACKEND.KEY (for example "
                                       "{'cpu.threads': '2'})" % k)
    return [(k.encode(), str(v).lower().encode() if isinstance(v, bool) else str(v).encode())
            for k, v in out]


class Model:
    """A loaded and compiled model. Call it with arrays: model(x, y).

    Inputs: one per user input (Model.inputs), as NumPy arrays, torch tensors
    or any DLPack producer; weights are bound already. Outputs: copies, as
    torch tensors when any input was a torch tensor (on that input's device),
    else as NumPy arrays (bfloat16 as uint16 arrays of the bits, NumPy having
    no bfloat16: alloy.bfloat16_to_float32 widens them). One user output
    comes back alone, several as a tuple; Model.run always returns a list.

    Threads: a Model may be called from any number of threads; its calls
    are serialized by a lock of the Model's, which also guards close().
    The run itself goes on without the GIL (ctypes releases it), so other
    Python threads keep running. The C API runs one compiled program from
    many threads at once (an executor per thread, docs/runtime.md); for
    runs in parallel from Python, load one Model per thread.
    """

    def __init__(self, path, backends=None, decompose=None, options=None):
        h = _lib.lib()
        self._lock = threading.Lock()
        self._out_shapes = {}  # input sizes -> output shapes, for runs in device memory
        self._model = self._prog = self._mix = None
        self._rt = None
        if decompose not in _DECOMPOSE:
            raise InvalidArgumentError("decompose takes None, 'auto', 'core' or 'prims' (got %r)"
                                       % (decompose,))
        model = ctypes.c_void_p()
        check(h.alloy_model_load(os.fsencode(path), ctypes.byref(model)))
        self._model = model
        self.path = str(path)
        g = h.alloy_model_graph(model)
        self._nin = h.alloy_graph_num_inputs(g)
        self._nout = h.alloy_graph_num_outputs(g)
        self._read_signature(h, g)

        names = _backend_list(backends)
        self._rt = _Runtime(names if names else list(_SHIPPED))
        if names is None:  # as `alloy run`: the shipped backends with a device, then ref
            names = [r.name for s in _SHIPPED for r in self._rt.infos()
                     if r.name.lower() == s and r.ok and r.devices]
            names += ["ref"] if names else []
        idx = [self._rt.find(n) for n in names]
        # Weights are bound at compile: folded once, uploaded once per backend.
        self._weights = (HostTensor * max(1, self._nin))()
        for i in range(self._nin):
            name = ctypes.c_char_p()
            self._weights[i].struct_size = _lib.HOST_TENSOR_STRUCT_SIZE
            if h.alloy_graph_input_role(g, i, ctypes.byref(name)) != _lib.INPUT_USER and name.value:
                h.alloy_model_find_weight(model, name.value, ctypes.byref(self._weights[i]))
        opts = _backend_options(options)
        self._opts = (_lib.Option * max(1, len(opts)))(*[_lib.Option(k, v) for k, v in opts])
        po = _lib.ProgramOptions(struct_size=_lib.struct_size(_lib.ProgramOptions),
                                 decompose=_DECOMPOSE[decompose], weights=self._weights,
                                 num_weights=self._nin, backend_options=self._opts,
                                 num_backend_options=len(opts))
        if len(idx) >= 2:  # a mixture partitioned over them (ref joins last)
            arr = (ctypes.c_int * len(idx))(*idx)
            mix = ctypes.c_void_p()
            check(h.alloy_mixture_compile(self._rt.ptr, arr, len(idx), g, ctypes.byref(po),
                                          ctypes.byref(mix)))
            self._mix = mix
            self.backends = [self._rt.infos()[i].name for i in idx]
            if "ref" not in [b.lower() for b in self.backends]:
                self.backends.append("ref")
            return
        ref = self._rt.find("ref")
        if not idx or idx[0] != ref:
            idx.append(ref)
        err = None
        for k, i in enumerate(idx):
            prog = ctypes.c_void_p()
            try:
                check(h.alloy_program_compile_ex(self._rt.ptr, i, g, ctypes.byref(po),
                                                 ctypes.byref(prog)))
            except Exception as e:  # as `alloy run`: the next backend of the list
                err = e
                if k + 1 < len(idx):
                    log.warning("alloy: passing over a backend: %s", e)
                continue
            self._prog = prog
            self.backends = [self._rt.infos()[i].name]
            return
        raise err

    def _read_signature(self, h, g):
        st = h.alloy_graph_symtab(g)
        self.symbols = {}
        for i in range(h.alloy_symtab_count(st)):
            if h.alloy_symtab_is_unbacked(st, i):
                continue
            lo, hi = ctypes.c_int64(), ctypes.c_int64()
            h.alloy_symtab_range(st, i, ctypes.byref(lo), ctypes.byref(hi))
            self.symbols[h.alloy_symtab_name(st, i).decode()] = (
                lo.value, None if hi.value == _lib.SYM_INF else hi.value)

        def info(v):
            rank = h.alloy_value_rank(v)
            dims = h.alloy_value_shape(v)
            shape = []
            for d in range(rank):
                if dims[d].expr:
                    buf = ctypes.create_string_buffer(256)
                    h.alloy_dim_print(dims[d], buf, 256)
                    shape.append(buf.value.decode())
                else:
                    shape.append(dims[d].value)
            dt = h.alloy_value_dtype(v)
            return TensorInfo(h.alloy_value_name(v).decode(),
                              _lib.DTYPE_NAMES[dt] if 0 <= dt < len(_lib.DTYPE_NAMES) else str(dt),
                              tuple(shape)), dt

        self.inputs, self._in_dtypes, self._user_in = [], [], []
        for i in range(self._nin):
            if h.alloy_graph_input_role(g, i, None) == _lib.INPUT_USER:
                t, dt = info(h.alloy_graph_input(g, i))
                self.inputs.append(t)
                self._in_dtypes.append(dt)
                self._user_in.append(i)
        self.outputs, self._user_out = [], []
        self._out_dtypes = [h.alloy_value_dtype(h.alloy_graph_output(g, i)) for i in range(self._nout)]
        for i in range(self._nout):
            if h.alloy_graph_output_role(g, i, None) == _lib.OUTPUT_USER:
                self.outputs.append(info(h.alloy_graph_output(g, i))[0])
                self._user_out.append(i)

    def __repr__(self):
        sig = lambda ts: ", ".join("%s: %s%s" % (t.name, t.dtype, list(t.shape)) for t in ts)
        return "<alloy.Model %s on %s (%s) -> (%s)>" % (
            os.path.basename(self.path), ",".join(getattr(self, "backends", [])),
            sig(self.inputs), sig(self.outputs))

    def run(self, *args):
        """Runs the model; returns every user output, as a list."""
        h = _lib.lib()
        if self._model is None:
            raise InvalidArgumentError("the model was closed")
        if len(args) != len(self.inputs):
            raise InvalidArgumentError(
                "%s takes %d user input%s (%s), got %d" % (
                    os.path.basename(self.path), len(self.inputs),
                    "" if len(self.inputs) == 1 else "s",
                    ", ".join(t.name for t in self.inputs), len(args)))
        cuda = self._cuda_backend(args)
        if cuda is not None:
            return self._run_on_device(h, args, cuda)
        as_torch, device = False, None
        bound = []
        for k, (x, t) in enumerate(zip(args, self.inputs)):
            if _tensors.is_torch(x):
                if not as_torch:
                    as_torch, device = True, x.device
            bound.append(_tensors.bind(x, self._in_dtypes[k], "input %d (%s)" % (k, t.name)))
        nuser = len(bound)
        users = (HostTensor * max(1, nuser))()
        sizes = []
        for k, b in enumerate(bound):
            s = (ctypes.c_int64 * max(1, len(b.shape)))(*b.shape)
            sizes.append(s)
            users[k] = HostTensor(_lib.HOST_TENSOR_STRUCT_SIZE, b.dtype, len(b.shape), s, b.ptr)
        ins = (HostTensor * max(1, self._nin))()
        outs = (HostTensor * max(1, self._nout))()
        for i in range(self._nout):
            outs[i].struct_size = _lib.HOST_TENSOR_STRUCT_SIZE
        with self._lock:
            if self._model is None:
                raise InvalidArgumentError("the model was closed")
            check(h.alloy_model_bind_inputs(self._model, users, nuser, ins, self._nin))
            if self._prog:
                check(h.alloy_program_run(self._prog, ins, self._nin, outs, self._nout))
            else:
                check(h.alloy_mixture_run(self._mix, ins, self._nin, outs, self._nout))
            # The runtime's buffers live until the next run: copy them now.
            result = [_tensors.copy_out(outs[i], as_torch, device) for i in self._user_out]
        del bound, sizes  # the inputs' memory was borrowed until here
        return result

    def _cuda_backend(self, args):
        """The runtime index of the cuda backend when the model runs there
        and an input is a torch tensor in CUDA memory, else None."""
        if not any(_tensors.is_torch(x) and x.device.type == "cuda" for x in args):
            return None
        if "cuda" not in [b.lower() for b in getattr(self, "backends", [])]:
            return None
        i = self._rt.find("cuda")
        return i if i >= 0 else None

    def _run_on_device(self, h, args, cuda):
        """A run on torch tensors in CUDA memory, none of them copied: the
        inputs are read where they are, and the outputs are new CUDA tensors
        the run writes, in the order of torch's current stream
        (alloy_*_run_on_stream). Host inputs and the weights go in from
        host memory as usual."""
        import torch
        device = next(x.device for x in args if _tensors.is_torch(x) and x.device.type == "cuda")
        keep, users, places = [], (HostTensor * max(1, len(args)))(), []
        for k, (x, t) in enumerate(zip(args, self.inputs)):
            if _tensors.is_torch(x) and x.device.type == "cuda":
                x = x.detach().resolve_conj().resolve_neg().contiguous()
                if x.device != device:
                    x = x.to(device)
                dt = _tensors.alloy_dtype_of_torch(x.dtype, "input %d (%s)" % (k, t.name))
                shape, ptr, where = tuple(x.shape), x.data_ptr(), cuda
            else:
                b = _tensors.bind(x, self._in_dtypes[k], "input %d (%s)" % (k, t.name))
                x, dt, shape, ptr, where = b, b.dtype, tuple(b.shape), b.ptr, -1
            s = (ctypes.c_int64 * max(1, len(shape)))(*shape)
            keep += [x, s]
            users[k] = HostTensor(_lib.HOST_TENSOR_STRUCT_SIZE, dt, len(shape), s, ptr)
            places.append(where)
        routs = (_lib.RunTensor * max(1, self._nout))()
        run = h.alloy_program_run_on_stream if self._prog else h.alloy_mixture_run_on_stream
        sizes_of = h.alloy_program_output_sizes if self._prog else h.alloy_mixture_output_sizes
        with self._lock:
            if self._model is None:
                raise InvalidArgumentError("the model was closed")
            # The weights' entries never change (the model's own memory):
            # the whole input list is made once, and each call writes only
            # the user inputs into it (a resnet50 has some 300 weights,
            # which took half a millisecond a call to list again).
            rins = getattr(self, "_device_inputs", None)
            if rins is None:
                ins = (HostTensor * max(1, self._nin))()
                check(h.alloy_model_bind_inputs(self._model, users, len(args), ins, self._nin))
                rins = (_lib.RunTensor * max(1, self._nin))()
                for i in range(self._nin):
                    rins[i] = _lib.RunTensor(_lib.RUN_TENSOR_STRUCT_SIZE, ins[i].dtype, ins[i].rank,
                                             ins[i].sizes, ins[i].data, -1, 0)
                self._device_inputs = rins
            for k, i in enumerate(self._user_in):
                u = users[k]
                rins[i] = _lib.RunTensor(_lib.RUN_TENSOR_STRUCT_SIZE, u.dtype, u.rank, u.sizes, u.data, places[k], 0)
            # the outputs' shapes follow from the user inputs' alone: asked once per set of sizes
            key = tuple(tuple(rins[i].sizes[d] for d in range(rins[i].rank)) for i in self._user_in)
            shapes = self._out_shapes.get(key)
            if shapes is None:
                shapes = []
                for i in range(self._nout):
                    rank, sz = ctypes.c_int(), (ctypes.c_int64 * 16)()
                    check(sizes_of(self._prog or self._mix, rins, self._nin, i, ctypes.byref(rank), sz))
                    shapes.append(tuple(sz[d] for d in range(rank.value)))
                self._out_shapes[key] = shapes
            outs = []
            for i, shape in enumerate(shapes):
                o = torch.empty(shape, dtype=_tensors.torch_dtype(self._out_dtypes[i]), device=device)
                sz = (ctypes.c_int64 * max(1, len(shape)))(*shape)
                outs.append(o)
                keep.append(sz)
                routs[i] = _lib.RunTensor(_lib.RUN_TENSOR_STRUCT_SIZE, self._out_dtypes[i], len(shape), sz,
                                          o.data_ptr() if o.numel() else None, cuda, 0)
            # Ordered on torch's current stream, as a torch op is: the run
            # starts after torch's work queued there (the inputs' writers)
            # and torch's later work there sees the outputs. It is left on
            # the stream, not waited for (alloy_program_run_on_stream); the
            # caching allocator reuses the inputs' and outputs' memory only
            # in that stream's order.
            stream = _lib.ExtStream(_lib.EXT_STREAM_STRUCT_SIZE, _lib.EXT_CUDA_STREAM, None,
                                    torch.cuda.current_stream(device).cuda_stream)
            check(run(self._prog or self._mix, rins, self._nin, routs, self._nout, cuda, ctypes.byref(stream)))
        del keep
        return [outs[i] for i in self._user_out]

    def __call__(self, *args):
        out = self.run(*args)
        return out[0] if len(out) == 1 else tuple(out)

    @property
    def num_specializations(self):
        """Shape specializations compiled so far (programs; 0 for mixtures)."""
        if self._prog:
            return _lib.lib().alloy_program_num_specializations(self._prog)
        return 0

    def close(self):
        """Releases the compiled program, the runtime and the model now
        (otherwise done when the Model is garbage-collected)."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            h = _lib.lib()
            if self._prog:
                h.alloy_program_release(self._prog)
            if self._mix:
                h.alloy_mixture_release(self._mix)
            self._prog = self._mix = None
            if self._rt:
                self._rt.close()
            if self._model:
                h.alloy_model_free(self._model)
            self._model = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def load(source, backends=None, decompose=None, options=None):
    """Loads a model and compiles it.

    source: a path (str or os.PathLike) to a torch.export .pt2 archive or
        Alloy text IR (.air), or the file's bytes (written to a temporary
        file that is removed once loaded; an .air given as bytes cannot name
        a weights file relative to itself).
    backends: names in priority order, a list or "a,b". Two or more: a
        mixture partitioned over them (ref joins last), as `alloy run
        --backends a,b`. One: a program wholly on it, falling back to ref
        (logged) when it cannot compile the graph. None: $ALLOY_BACKENDS,
        else as `alloy run`: the shipped backends that found a device
        (cuda, hip, cpu), then ref -- "cpu,ref" on a machine without a GPU.
    decompose: None/"auto" (only what the backends do not claim), "core"
        or "prims" (as `alloy run --decompose`).
    options: backend options, {"cpu.key": "value"} or {"cpu": {"key":
        "value"}} (as `alloy run --backend-opt cpu.key=value`).

    Raises AlloyError (a subclass by the C code) with Alloy's message.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        suffix = ".pt2" if data[:2] == b"PK" else ".air"
        fd, tmp = tempfile.mkstemp(prefix="alloy-", suffix=suffix)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            # The model maps the file: the mapping outlives the name.
            try:
                m = Model(tmp, backends, decompose, options)
                m.path = "(model bytes)"
                return m
            except AlloyError as e:  # name the bytes, not the temporary file
                msg = str(e).replace(tmp, "(model bytes)")
                raise type(e)(msg) if type(e) is not AlloyError else AlloyError(msg, e.code)
        finally:
            os.unlink(tmp)
    return Model(os.fspath(source), backends, decompose, options)
