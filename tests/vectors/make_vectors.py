#!/usr/bin/env python3
"""tests/vectors/make_vectors.py: test vectors made by PyTorch itself, for the
ops the golden corpus (../shared/golden) has no cases of.

    /work/venv/bin/python tests/vectors/make_vectors.py \\
        --ops aten.conv1d.default,aten.min.other --out tests/vectors/nn

It records real calls of the named overloads, with their arguments and
results, and writes them in the golden corpus's format (DIR/ops/ops.jsonl
and DIR/ops/ops-NN.safetensors; ../shared/golden/README.md gives it), so
that `alloy conform --backend ref --only golden --golden DIR` holds Alloy's
rules and kernels against PyTorch's numbers. make test runs every
tests/vectors/*/ folder.

Where the calls come from, for each OpInfo of PyTorch's test suite whose
name matches the op (conv1d -> nn.functional.conv1d, std -> std), sample by
sample:

  1. eager, under a dispatch mode that sees every ATen call that reaches
     the dispatcher below autograd (core ops, and most non-core ones);
  2. through torch.export: each sample is exported as a one-op program and
     the program is interpreted node by node, which records the composite
     ops (CompositeImplicitAutograd: conv1d, linear, dropout, min.other...)
     that never reach a dispatch mode because autograd decomposes them
     first — and these are the ops an ATen-level export leaves in a graph;
  3. with --backward, the backward pass of each sample, under the dispatch
     mode: the *_backward ops of training graphs.

--extra FILE.py adds samples where no OpInfo reaches an op: the file
defines `def samples(torch): yield fn, args, kwargs` (fn an OpOverload such
as torch.ops.aten.min.other, called and recorded directly, or any callable,
which goes through 1-3 above).

Seeds are fixed (torch.manual_seed(0) before each OpInfo), so the same
command makes the same cases. Random ops (PyTorch's nondeterministic_seeded
tag) are skipped: their values are checked by distribution elsewhere.
The folder's README.md records the PyTorch version and the command.
"""
import argparse
import json
import math
import os
import struct
import sys
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

MAX_ELEMENTS = 4096
DTYPE_NAMES = {
    torch.float64: ("float64", "F64"), torch.float32: ("float32", "F32"),
    torch.float16: ("float16", "F16"), torch.bfloat16: ("bfloat16", "BF16"),
    torch.int64: ("int64", "I64"), torch.int32: ("int32", "I32"), torch.int16: ("int16", "I16"),
    torch.int8: ("int8", "I8"), torch.uint8: ("uint8", "U8"), torch.bool: ("bool", "BOOL"),
}
DTYPES_BY_NAME = {v[0]: k for k, v in DTYPE_NAMES.items()}


class Unstorable(Exception):
    """A value the golden format cannot hold (complex, too large, opaque)."""


def overload_name(op):
    """torch.ops.aten.add.Tensor -> "aten.add.Tensor"."""
    ns, name = op._schema.name.split("::")
    return "%s.%s.%s" % (ns, name, op._overloadname or "default")


class Store:
    """The cases and the tensors of one output folder."""

    def __init__(self, out, append):
        self.dir = os.path.join(out, "ops")
        os.makedirs(self.dir, exist_ok=True)
        self.lines, self.tensors, self.next_id, self.file_no = [], {}, 1, 0
        jsonl = os.path.join(self.dir, "ops.jsonl")
        if append and os.path.exists(jsonl):
            for line in open(jsonl):
                case = json.loads(line)
                self.lines.append(line.rstrip("\n"))
                self.next_id = max(self.next_id, case["id"] + 1)
                self.file_no = max(self.file_no, int(case["file"][4:6]) + 1)
        elif not append:
            for f in os.listdir(self.dir):
                if f == "ops.jsonl" or (f.startswith("ops-") and f.endswith(".safetensors")):
                    os.remove(os.path.join(self.dir, f))
        self.file = "ops-%02d.safetensors" % self.file_no
        self.counts = {}

    def value(self, v, key, pending):
        """The tagged JSON of v; tensors go to pending under key_<n>."""
        if isinstance(v, torch.Tensor):
            if v.dtype not in DTYPE_NAMES:
                raise Unstorable("dtype %s" % v.dtype)
            if v.numel() > MAX_ELEMENTS:
                raise Unstorable("%d elements" % v.numel())
            if v.layout != torch.strided or v.is_quantized or v.is_nested:
                raise Unstorable("layout %s" % v.layout)
            name = "%s_x%d" % (key, len(pending))
            pending[name] = v.detach().contiguous().clone()
            return {"t": name}
        if v is None:
            return None
        if isinstance(v, bool):
            return {"b": v}
        if isinstance(v, int):
            return {"i": v}
        if isinstance(v, float):
            if math.isnan(v):
                return {"f": "nan"}
            if math.isinf(v):
                return {"f": "inf" if v > 0 else "-inf"}
            return {"f": v}
        if isinstance(v, (list, tuple)):
            return {"l": [self.value(x, key, pending) for x in v]}
        if isinstance(v, torch.dtype):
            if v not in DTYPE_NAMES:
                raise Unstorable("dtype %s" % v)
            return {"dtype": DTYPE_NAMES[v][0]}
        if isinstance(v, complex):
            raise Unstorable("complex scalar")
        if isinstance(v, (torch.device, torch.layout, torch.memory_format, str)):
            return {"s": str(v)}
        raise Unstorable("a %s" % type(v).__name__)

    def add(self, op, args, kwargs, out, mutated, opinfo, dtype):
        """Records one call; False when it cannot be stored."""
        cid = self.next_id
        key = "c%d" % cid
        pending = {}
        try:
            case = {
                "id": cid, "op": overload_name(op), "schema": str(op._schema),
                "core": torch.Tag.core in op.tags, "opinfo": opinfo, "dtype": dtype,
                "args": [self.value(a, key, pending) for a in args],
                "kwargs": {k: self.value(v, key, pending) for k, v in kwargs.items()},
                "out": self.value(out, key, pending),
                "mutated": [{"index": i, "after": self.value(a, key, pending)} for i, a in mutated],
                "file": self.file,
            }
        except Unstorable:
            return False
        self.tensors.update(pending)
        self.lines.append(json.dumps(case))
        self.next_id += 1
        self.counts[case["op"]] = self.counts.get(case["op"], 0) + 1
        return True

    def write(self):
        header, blobs, offset = {}, [], 0
        for name, t in self.tensors.items():
            data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
            header[name] = {"dtype": DTYPE_NAMES[t.dtype][1], "shape": list(t.shape),
                            "data_offsets": [offset, offset + len(data)]}
            blobs.append(data)
            offset += len(data)
        if self.tensors:
            text = json.dumps(header, separators=(",", ":")).encode()
            text += b" " * (-len(text) % 8)
            with open(os.path.join(self.dir, self.file), "wb") as f:
                f.write(struct.pack("<Q", len(text)))
                f.write(text)
                for b in blobs:
                    f.write(b)
        with open(os.path.join(self.dir, "ops.jsonl"), "w") as f:
            for line in self.lines:
                f.write(line + "\n")


def clone_tree(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (list, tuple)):
        return type(v)(clone_tree(x) for x in v)
    return v


def written_args(op):
    return [i for i, a in enumerate(op._schema.arguments) if a.alias_info and a.alias_info.is_write]


class Recorder:
    """Records calls of the wanted overloads into a Store, up to a budget."""

    def __init__(self, store, wanted, per_op):
        self.store, self.wanted, self.per_op = store, wanted, per_op
        self.opinfo, self.dtype = "", ""

    def full(self, name):
        return self.store.counts.get(name, 0) >= self.per_op

    def done(self):
        return all(self.full(w) for w in self.wanted)

    def call(self, op, args, kwargs):
        """Calls op, recording it when wanted; returns its result."""
        name = overload_name(op)
        if name not in self.wanted or self.full(name):
            return op(*args, **kwargs)
        before_args, before_kwargs = clone_tree(args), clone_tree(kwargs)
        out = op(*args, **kwargs)
        mutated = []
        for i in written_args(op):
            if i < len(args):
                mutated.append((i, clone_tree(args[i])))
        self.store.add(op, before_args, before_kwargs, clone_tree(out), mutated, self.opinfo,
                       self.dtype)
        return out


class DispatchRecorder(TorchDispatchMode):
    def __init__(self, rec):
        super().__init__()
        self.rec = rec

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self.rec.call(func, args, kwargs or {})


def tensors_in(v, acc):
    if isinstance(v, torch.Tensor):
        acc.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            tensors_in(x, acc)
    elif isinstance(v, dict):
        for x in v.values():
            tensors_in(x, acc)
    return acc


def replace_tensors(v, it):
    if isinstance(v, torch.Tensor):
        return next(it)
    if isinstance(v, list):
        return [replace_tensors(x, it) for x in v]
    if isinstance(v, tuple):
        return tuple(replace_tensors(x, it) for x in v)
    if isinstance(v, dict):
        return {k: replace_tensors(x, it) for k, x in v.items()}
    return v


def run_exported(rec, fn, args, kwargs):
    """Exports fn(*args, **kwargs) with its tensors as inputs, then runs the
    program node by node, recording the wanted composite ops."""
    flat = tensors_in([args, kwargs], [])
    if not flat:
        return

    class One(torch.nn.Module):
        def forward(self, *ts):
            a, k = replace_tensors([args, kwargs], iter(ts))
            return fn(*a, **k)

    try:
        ep = torch.export.export(One(), tuple(t.detach().clone() for t in flat), strict=False)
    except Exception:
        return
    gm = ep.module()

    class Interp(torch.fx.Interpreter):
        def call_function(self, target, a, k):
            if isinstance(target, torch._ops.OpOverload):
                return rec.call(target, a, k)
            return super().call_function(target, a, k)

    try:
        Interp(gm).run(*[t.detach().clone() for t in flat])
    except Exception:
        pass


def run_sample(rec, fn, args, kwargs, backward, export):
    if isinstance(fn, torch._ops.OpOverload):
        try:
            rec.call(fn, args, kwargs)
        except Exception:
            pass
        return
    try:
        with DispatchRecorder(rec):
            out = fn(*args, **kwargs)
            if backward:
                outs = [o for o in tensors_in(out, []) if o.requires_grad and o.dtype.is_floating_point]
                ins = [t for t in tensors_in([args, kwargs], []) if t.requires_grad]
                if outs and ins:
                    total = sum(o.sum() for o in outs)
                    torch.autograd.grad(total, ins, allow_unused=True)
    except Exception:
        pass
    if export and not backward:
        run_exported(rec, fn, args, kwargs)


def opinfos_for(wanted, op_db):
    """The OpInfos whose names match a wanted op's base name."""
    bases = {w.split(".")[1] for w in wanted}
    stripped = {b.lstrip("_") for b in bases}
    found = []
    for info in op_db:
        names = {info.name, info.name.split(".")[-1], getattr(info, "aten_name", None) or ""}
        names |= {a.name.split(".")[-1] for a in getattr(info, "aliases", ())}
        short = {n.split(".")[-1] for n in names}
        for n in list(short):
            for suffix in ("_backward",):
                short.add(n + suffix)
        base_hits = bases & short or stripped & {s.lstrip("_") for s in short}
        # "std" matches std and std_mean; "min" matches min.other
        loose = any(b.startswith(s + "_") or s.startswith(b + "_") for b in stripped for s in short if s)
        if base_hits or loose:
            found.append(info)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="", help="comma-separated overloads: aten.conv1d.default,...")
    ap.add_argument("--ops-file", help="a file of overloads, one per line (# comments)")
    ap.add_argument("--out", required=True, help="the folder: DIR/ops/ops.jsonl is written")
    ap.add_argument("--per-op", type=int, default=6, help="cases per overload (default 6)")
    ap.add_argument("--dtypes", default="float32,float64,int64,bool,float16,bfloat16",
                    help="sample dtypes, in order of preference")
    ap.add_argument("--samples-per-opinfo", type=int, default=12)
    ap.add_argument("--backward", action="store_true", help="record the backward pass of each sample")
    ap.add_argument("--no-export", action="store_true", help="skip the torch.export pass (faster)")
    ap.add_argument("--extra", action="append", default=[], help="FILE.py defining samples(torch)")
    ap.add_argument("--append", action="store_true", help="add to the folder's cases instead of replacing them")
    ap.add_argument("--all-opinfos", action="store_true", help="try every OpInfo, not only those named like the ops")
    o = ap.parse_args()

    wanted = [w.strip() for w in o.ops.split(",") if w.strip()]
    if o.ops_file:
        wanted += [l.split("#")[0].strip() for l in open(o.ops_file) if l.split("#")[0].strip()]
    wanted = list(dict.fromkeys(wanted))
    skipped_random = []
    for w in list(wanted):
        ns, name, ov = w.split(".")
        try:
            op = getattr(getattr(getattr(torch.ops, ns), name), ov)
        except AttributeError:
            sys.exit("make_vectors.py: %s is not an overload of this PyTorch" % w)
        if torch.Tag.nondeterministic_seeded in op.tags:
            wanted.remove(w)
            skipped_random.append(w)
    wanted = set(wanted)
    store = Store(o.out, o.append)
    rec = Recorder(store, wanted, o.per_op)
    dtypes = [DTYPES_BY_NAME[d] for d in o.dtypes.split(",")]

    for path in o.extra:
        scope = {}
        exec(compile(open(path).read(), path, "exec"), scope)
        torch.manual_seed(0)
        rec.opinfo = "extra:" + os.path.basename(path)
        for fn, args, kwargs in scope["samples"](torch):
            ts = tensors_in([args, kwargs], [])
            rec.dtype = DTYPE_NAMES.get(ts[0].dtype, ("", ""))[0] if ts else ""
            run_sample(rec, fn, args, kwargs, o.backward, not o.no_export)

    from torch.testing._internal.common_methods_invocations import op_db
    infos = op_db if o.all_opinfos else opinfos_for(wanted, op_db)
    for info in infos:
        if rec.done():
            break
        supported = info.supported_dtypes("cpu")
        for dt in dtypes:
            if dt not in supported or rec.done():
                continue
            torch.manual_seed(0)
            rec.opinfo, rec.dtype = info.name, DTYPE_NAMES[dt][0]
            try:
                samples = info.sample_inputs("cpu", dt, requires_grad=o.backward and dt.is_floating_point)
                for k, s in enumerate(samples):
                    if k >= o.samples_per_opinfo:
                        break
                    args = (s.input,) + tuple(s.args) if not isinstance(s.input, (list, tuple)) else (s.input,) + tuple(s.args)
                    run_sample(rec, info.op, args, dict(s.kwargs), o.backward, not o.no_export)
            except Exception:
                continue
    store.write()
    with open(os.path.join(o.out, "README.md"), "w") as f:
        f.write("# %s\n\nTest vectors made by PyTorch %s (CPU, eager) with\n\n"
                "    tests/vectors/make_vectors.py %s\n\n"
                "in the golden corpus's format (../shared/golden/README.md). Do not edit: run the\n"
                "command again.\n" % (os.path.basename(os.path.normpath(o.out)), torch.__version__,
                                      " ".join(sys.argv[1:])))
    missing = sorted(w for w in wanted if not store.counts.get(w))
    total = sum(store.counts.get(w, 0) for w in wanted)
    print("%d cases of %d overloads in %s" % (total, len(wanted) - len(missing), o.out))
    if missing:
        print("no samples reached: " + ", ".join(missing))
    if skipped_random:
        print("random, not recorded: " + ", ".join(skipped_random))


if __name__ == "__main__":
    main()
