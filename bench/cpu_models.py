#!/usr/bin/env python3
"""bench/cpu_models.py: the cpu backend side by side with the reference
backend and PyTorch on this machine's CPU, in one run (the machine is
shared and noisy: compare only numbers of the same run).

    python3 bench/cpu_models.py --alloy build/bin/alloy --golden ../shared/golden \\
        --out results.md [--models mlp,attn_block] [--batches 0,64] [--repeat 20] \\
        [--threads 2] [--no-compile]

For each golden model (its .aten.pt2 export, the one a user has) at its
recorded batch (batch 0 in --batches) and at the batches listed, it times:

  - `alloy run MODEL --backends ref` and `--backends cpu,ref`, the median
    of the steady runs `alloy run --repeat` reports (inputs copied in and
    outputs out included: both backends are host memory);
  - PyTorch eager on the module torch.export.load gives back, and
    torch.compile (Inductor) of it: its first call (the compile) and its
    steady state; torch.set_num_threads(--threads).

It prints a markdown table with the ratios. Needs PyTorch from PyPI (in a
venv of its own: python3 -m venv v && v/bin/pip install torch safetensors).
Unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for timing runs.
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import torch
from safetensors.torch import load_file



def alloy_ms(alloy, pt2, io, backends, batch, repeat):
    cmd = [alloy, "run", pt2, "--inputs", io, "--backends", backends, "--repeat", str(repeat)]
    if batch:
        cmd += ["--batch", str(batch)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    runs = [float(x) for x in re.findall(r"^\s*run \d+\s+([0-9.]+) ms", p.stdout, re.M)]
    comp = re.search(r"^\s*compile\s+([0-9.]+) ms", p.stdout, re.M)
    if p.returncode != 0 or len(runs) < 3:
        return float("nan"), float("nan")
    # the first run of a dynamic model compiles for its size: steady runs only
    return statistics.median(runs[1:]), (float(comp.group(1)) if comp else float("nan")) + runs[0]


def torch_ms(fn, args, repeat):
    with torch.no_grad():
        for _ in range(3):
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--alloy", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--out", required=True)
    # bert_tiny and llama_tiny are left out: PyTorch 2.11's torch.export.load
    # cannot rebuild their transformers output classes (pytree), so there is
    # no PyTorch module to time from the golden files
    ap.add_argument("--models", default="mlp,attn_block")
    ap.add_argument("--batches", default="0,64")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M')}, {args.threads} threads, torch {torch.__version__}, "
             f"load {load:.2f} at the start",
             "| model | batch | ref ms | cpu ms | eager ms | inductor ms | inductor 1st call s | "
             "cpu compile ms | ref/cpu | cpu/eager | cpu/inductor |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    print("\n".join(lines), flush=True)
    for name in args.models.split(","):
        io = os.path.join(args.golden, "models", name + ".io.safetensors")
        tensors = load_file(io)
        inputs0 = [tensors[k] for k in sorted((k for k in tensors if k.startswith("input")), key=lambda k: int(k[5:]))]
        for batch in (int(b) for b in args.batches.split(",")):
            # the recorded batch: the ATen-level export as a user has it; other
            # batches: the dynamic export (Core ATen), whose batch is a symbol
            pt2 = os.path.join(args.golden, "models", name + (".dyn.core.pt2" if batch else ".aten.pt2"))
            if not os.path.exists(pt2):
                continue
            module = torch.export.load(pt2).module()
            compiled = None if args.no_compile else torch.compile(module, dynamic=bool(batch))
            inputs = [resized(t, batch) for t in inputs0]
            ref, _ = alloy_ms(args.alloy, pt2, io, "ref", batch, args.repeat)
            cpu, comp = alloy_ms(args.alloy, pt2, io, "cpu,ref", batch, args.repeat)
            eager = torch_ms(module, inputs, args.repeat)
            ind = first = float("nan")
            if compiled is not None:
                t0 = time.perf_counter()
                with torch.no_grad():
                    compiled(*inputs)
                first = time.perf_counter() - t0
                ind = torch_ms(compiled, inputs, args.repeat)
            shown = batch or inputs0[0].shape[0]
            row = (f"| {name} | {shown} | {ref:.2f} | {cpu:.3f} | {eager:.3f} | {ind:.3f} | {first:.1f} | {comp:.0f} | "
                   f"{ref / cpu:.1f} | {cpu / eager:.2f} | {cpu / ind:.2f} |")
            print(row, flush=True)
            lines.append(row)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
