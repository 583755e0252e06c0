#!/usr/bin/env python3
"""bench/cpu/bench.py: the cpu backend side by side with the reference
backend, PyTorch eager and torch.compile (Inductor) on this machine's CPU,
in one run (the machine is shared and noisy: compare only numbers of the
same run). `make bench` runs it through bench/cpu/run.sh.

    build-bench-venv/bin/python bench/cpu/bench.py --alloy build/bin/alloy \\
        --golden ../shared/golden --out bench/results/DATE-cpu-bench.txt \\
        [--models mlp,attn_block,...] [--batches 0,64] [--repeat 20] \\
        [--ref-repeat 5] [--threads N] [--no-compile] [--no-extra]

For each golden model (the ones models.json lists with an io file) at its
recorded batch (its .aten.pt2 export, the one a user has) and at batch 64
where it was exported with a symbolic batch (its .dyn.core.pt2), and for
two graphs exported here with torch.export into a temporary folder (a
layer_norm + gelu chain on 64x4096 float32, a 512^3 float32 matmul), it
times:

  - `alloy run MODEL --backends ref` and `--backends cpu,ref`: the median
    of the steady runs that `--repeat` reports (inputs copied in and
    outputs out included: both backends use host memory). The first
    compile is `compile` + run 1 (run 1 of a model with a symbolic batch
    compiles the partition for its sizes), without the import;
  - PyTorch eager on the module torch.export.load gives back, and
    torch.compile (Inductor, default options: it specializes to the sizes
    of its first call as Alloy does) of it: its first call (the compile,
    Inductor's cache folder empty: TORCHINDUCTOR_CACHE_DIR is a new
    temporary folder) and its steady state. torch.set_num_threads(N) and
    the cpu backend's `threads` option are both N (all CPUs by default).

The recorded batch is checked (`alloy run --check` against the golden
outputs): a row whose check fails says so.

bert_tiny, llama_tiny and gpt2_tiny return transformers' output classes;
their exports name them in the output's pytree spec, which
torch.export.load cannot rebuild without transformers (and in PyTorch
2.11 not even with it for every class). Before loading, the archive's
specs are read and every type name pytree does not know gets a stand-in:
a dict subclass registered under that name (its context is the list of
keys, as transformers' ModelOutput registers it), so the module returns a
dict of the same tensors.

It appends a section (date, CPU, threads, load before and after, torch's
version, the markdown table with the ratios) to --out.
Unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for timing runs (run.sh does).
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

# Inductor's first call is timed cold: a cache folder of this run's own.
_TMP = tempfile.mkdtemp(prefix="alloy-bench-cpu-")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_TMP, "inductor")
os.environ.pop("ALLOY_CACHE_DIR", None)  # Alloy's first compile cold too

import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402


def register_standins(pt2):
    """Registers a stand-in for every pytree type the archive's specs name
    that this PyTorch does not know (transformers' output classes)."""
    names = set()
    with zipfile.ZipFile(pt2) as z:
        for entry in z.namelist():
            if entry.endswith(".json") and "/models/" in entry:
                text = z.read(entry).decode("utf-8", "replace")
                # the specs are JSON inside JSON strings: \"type\": \"NAME\"
                names |= set(re.findall(r'\\"type\\": \\"([A-Za-z_][\w.]*)\\"', text))
    known = pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE
    for name in sorted(names - set(known)):
        module, _, short = name.rpartition(".")
        cls = type(short, (dict,), {"__module__": module or "alloy_bench"})
        pytree.register_pytree_node(
            cls,
            lambda d: (list(d.values()), list(d.keys())),
            lambda values, keys, cls=cls: cls(zip(keys, values)),
            serialized_type_name=name)


def load_module(pt2):
    register_standins(pt2)
    return torch.export.load(pt2).module()


def alloy_ms(alloy, pt2, io, backends, batch, repeat, threads, check):
    """(steady median ms, first compile ms, check ok) of one alloy run."""
    cmd = [alloy, "run", pt2, "--inputs", io, "--backends", backends, "--repeat", str(repeat)]
    if "cpu" in backends:
        cmd += ["--backend-opt", f"cpu.threads={threads}"]
    if batch:
        cmd += ["--batch", str(batch)]
    if check:
        cmd += ["--check", io]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return math.nan, math.nan, False
    runs = [float(x) for x in re.findall(r"^\s*run \d+\s+([0-9.]+) ms", p.stdout, re.M)]
    comp = re.search(r"^\s*compile\s+([0-9.]+) ms", p.stdout, re.M)
    if len(runs) < 2:
        sys.stderr.write(" ".join(cmd) + " failed:\n" + p.stdout[-2000:] + p.stderr[-2000:])
        return math.nan, math.nan, False
    first = (float(comp.group(1)) if comp else math.nan) + runs[0]
    return statistics.median(runs[1:]), first, p.returncode == 0


def torch_ms(fn, args, repeat, warmup=3):
    with torch.no_grad():
        for _ in range(warmup):
            fn(*args)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn(*args)
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def resized(t, batch):
    """t's first dim made `batch` by cycling its rows, as alloy run --batch does."""
    if not batch or t.dim() == 0:
        return t
    idx = torch.arange(batch) % t.shape[0]
    return t[idx].contiguous()


def export_extras(folder):
    """The two graphs exported here: (name, pt2, io, flops or 0)."""
    torch.manual_seed(0)

    class LayerNormGelu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(4096)

        def forward(self, x):
            return torch.nn.functional.gelu(self.norm(x))

    class MatMul(torch.nn.Module):
        def forward(self, a, b):
            return a @ b

    out = []
    for name, mod, inputs, flops in (
            ("layer_norm+gelu 64x4096", LayerNormGelu(), (torch.randn(64, 4096),), 0),
            ("matmul 512^3", MatMul(), (torch.randn(512, 512), torch.randn(512, 512)), 2 * 512 ** 3)):
        stem = os.path.join(folder, name.split()[0].replace("+", "_"))
        ep = torch.export.export(mod.eval(), inputs)
        torch.export.save(ep, stem + ".pt2")
        with torch.no_grad():
            expected = mod(*inputs)
        tensors = {f"input{i}": t.contiguous() for i, t in enumerate(inputs)}
        tensors["output0"] = expected.contiguous()
        save_file(tensors, stem + ".io.safetensors", metadata={"inputs": str(len(inputs)), "outputs": "1"})
        out.append((name, stem + ".pt2", stem + ".io.safetensors", flops))
    return out


def fmt(x, digits):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def ratio(a, b, digits=2):
    return "n/a" if any(math.isnan(v) for v in (a, b)) or b == 0 else f"{a / b:.{digits}f}"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load %.2f %.2f %.2f" % os.getloadavg()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--alloy", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="", help="default: every model models.json lists")
    ap.add_argument("--batches", default="0,64", help="0: the recorded batch")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--ref-repeat", type=int, default=5,
                    help="runs of ref, and of cpu where ref takes over 100 ms a run")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-extra", action="store_true", help="leave out the two graphs exported here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    mdir = os.path.join(args.golden, "models")
    if args.models:
        names = args.models.split(",")
    else:
        with open(os.path.join(mdir, "models.json")) as f:
            names = [m["name"] for m in json.load(f)["models"]]

    # (label, batch shown, pt2, io, batch passed, flops, check)
    cases = []
    for name in names:
        io = os.path.join(mdir, name + ".io.safetensors")
        if not os.path.exists(io):
            continue
        for batch in (int(b) for b in args.batches.split(",")):
            # the recorded batch: the ATen-level export as a user has it; other
            # batches: the dynamic export (Core ATen), whose batch is a symbol
            pt2 = os.path.join(mdir, name + (".dyn.core.pt2" if batch else ".aten.pt2"))
            if os.path.exists(pt2):
                cases.append((name, batch, pt2, io, 0, batch == 0))
    if not args.no_extra:
        for name, pt2, io, flops in export_extras(_TMP):
            cases.append((name, 0, pt2, io, flops, True))

    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    backends = subprocess.run([args.alloy, "backends"], capture_output=True, text=True).stdout
    cpu_line = next((" ".join(l.split()) for l in backends.splitlines() if l.startswith("cpu")), "cpu backend not found")
    head = [f"## {start}: bench/cpu (make bench), Alloy {rev or '?'}, torch {torch.__version__}",
            f"- CPU: {cpu_model()}, {os.cpu_count()} online CPUs; {args.threads} threads "
            f"(torch.set_num_threads, --backend-opt cpu.threads)",
            f"- alloy backends: {cpu_line}",
            f"- OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
            f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '(unset)')}",
            f"- load at the start: {uptime()}",
            f"- repeat: cpu and PyTorch {args.repeat} (median; PyTorch after 3 warm-up calls), "
            f"ref {args.ref_repeat}; ms per call; ratios are of times (< 1: the first is faster)",
            "",
            "| model | batch | ref ms | cpu ms | eager ms | inductor ms | cpu/eager | cpu/inductor | ref/cpu | "
            "cpu 1st compile ms | inductor 1st call ms | inductor/cpu 1st | check |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    print("\n".join(head), flush=True)
    rows = []
    notes = []
    for name, batch, pt2, io, flops, check in cases:
        ref, _, _ = alloy_ms(args.alloy, pt2, io, "ref", batch, args.ref_repeat, args.threads, False)
        rep = args.repeat if not ref > 100 else args.ref_repeat
        cpu, first, ok = alloy_ms(args.alloy, pt2, io, "cpu,ref", batch, rep, args.threads, check)
        eager = ind = ifirst = math.nan
        shown = batch
        try:
            tensors = load_file(io)
            inputs = [resized(tensors[k], batch) for k in
                      sorted((k for k in tensors if re.fullmatch(r"input\d+", k)), key=lambda k: int(k[5:]))]
            shown = batch or inputs[0].shape[0]
            module = load_module(pt2)
            eager = torch_ms(module, inputs, rep)
            if not args.no_compile:
                compiled = torch.compile(module)
                t0 = time.perf_counter()
                with torch.no_grad():
                    compiled(*inputs)
                ifirst = (time.perf_counter() - t0) * 1e3
                ind = torch_ms(compiled, inputs, rep)
        except Exception as e:  # one model's failure is a cell, not the end of the run
            notes.append(f"- {name} b{shown}: PyTorch failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        label = name
        if flops:
            label += " (GFLOP/s: cpu %s, eager %s, inductor %s)" % tuple(
                fmt(flops / (t * 1e6), 0) if not math.isnan(t) else "n/a" for t in (cpu, eager, ind))
        row = (f"| {label} | {shown} | {fmt(ref, 2)} | {fmt(cpu, 3)} | {fmt(eager, 3)} | {fmt(ind, 3)} | "
               f"{ratio(cpu, eager)} | {ratio(cpu, ind)} | {ratio(ref, cpu, 1)} | {fmt(first, 0)} | "
               f"{fmt(ifirst, 0)} | {ratio(ifirst, first, 0)} | {('ok' if ok else 'failed') if check else '-'} |")
        print(row, flush=True)
        rows.append(row)
    tail = ["", f"- load at the end: {uptime()}"] + notes
    print("\n".join(tail), flush=True)
    with open(args.out, "a") as f:
        f.write("\n" + "\n".join(head + rows + tail) + "\n")
    print(f"appended to {args.out}")


if __name__ == "__main__":
    main()
