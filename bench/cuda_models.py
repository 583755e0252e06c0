#!/usr/bin/env python3
"""bench/cuda_models.py: the cuda backend side by side with PyTorch on the
same GPU, in the same run (the machines are noisy: never compare numbers
from two runs).

    python3 bench/cuda_models.py --alloy build/bin/alloy --out results.txt \\
        [--models bert,llama] [--repeat 20] [--no-compile]

For each model it builds the network with random weights (seeded), exports
it with torch.export on the CPU (no weights are carried: they are made
here), writes its inputs and PyTorch's GPU outputs as safetensors, and
times, each as the median of --repeat steady-state runs:

  - PyTorch eager on the GPU (CUDA events around each call);
  - torch.compile (Inductor, default mode): its first call (the compile)
    and its steady state;
  - `alloy run MODEL --backends cuda,ref --check` (per-run wall time as
    alloy run reports it: the inputs' upload and the outputs' download
    included, which PyTorch's numbers do not have), and Alloy's compile.

It prints one table row per model and writes the table to --out. Needs a
GPU, PyTorch and transformers; the alloy binary finds liballoy-cuda.so as
usual ($ALLOY_PLUGIN_PATH).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from safetensors.torch import save_file


def bert(device_dtype):
    from transformers import BertConfig, BertModel
    cfg = BertConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, vocab_size=30522, attn_implementation="sdpa")
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (32, 128))
    return "bert-base b32 s128 fp32", model, (ids,), torch.float32


def llama(device_dtype):
    from transformers import LlamaConfig, LlamaModel
    cfg = LlamaConfig(hidden_size=1024, num_hidden_layers=4, num_attention_heads=16,
                      num_key_value_heads=16, intermediate_size=2816, vocab_size=32000,
                      use_cache=False, attn_implementation="sdpa")
    model = LlamaModel(cfg).eval().to(torch.bfloat16)
    ids = torch.randint(0, cfg.vocab_size, (8, 512))
    return "llama 4x1024 b8 s512 bf16", model, (ids,), torch.bfloat16


def vision(ctor, label, dtype=torch.float32, batch=64):
    def make(device_dtype):
        import torchvision
        model = getattr(torchvision.models, ctor)().eval().to(dtype)
        x = torch.randn(batch, 3, 224, 224).to(dtype)
        return f"{label} b{batch} {'bf16' if dtype == torch.bfloat16 else 'fp32'}", model, (x,), dtype
    return make


MODELS = {"bert": bert, "llama": llama,
          "resnet50": vision("resnet50", "resnet50"),
          "resnet50_bf16": vision("resnet50", "resnet50", torch.bfloat16),
          "mobilenet": vision("mobilenet_v3_small", "mobilenet_v3_small"),
          "squeezenet": vision("squeezenet1_1", "squeezenet1_1")}


def tensors_of(out):
    """The model's tensor outputs in export order (a ModelOutput's fields)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    return [t for t in out if isinstance(t, torch.Tensor)]


def time_gpu(fn, repeat):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def time_host(fn, repeat):
    """Host wall time of fn, synchronized: for runs that start and end in
    host memory (pageable, as Alloy's inputs and outputs are)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def host_to_host(fn, cpu_inputs):
    """fn on inputs copied up from host memory, its outputs copied down:
    what `alloy run` times, so the two are compared like for like."""
    def run():
        outs = fn(*(x.cuda() for x in cpu_inputs))
        return [t.cpu() for t in tensors_of(outs)]
    return run


# PyTorch's defaults: convolutions in TF32 (torch.backends.cudnn.allow_tf32),
# float32 matrix products exact (torch.backends.cuda.matmul.allow_tf32):
# the fp32 vision models run Alloy with the same setting, and their outputs
# are held to TF32's precision (10-bit mantissa) rather than float32's.
TF32_CONV = {"resnet50", "mobilenet", "squeezenet"}


def run_alloy(alloy, pt2, io, outputs, repeat, extra=()):
    # the export is ATen-level: what the cuda backend claims stays whole
    # (scaled_dot_product_attention), the rest is decomposed for it
    cmd = [alloy, "run", pt2, "--backends", "cuda,ref", "--inputs", io,
           "--outputs", outputs, "--repeat", str(repeat), *extra]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 180 s"}
    out = p.stdout + p.stderr
    runs = [float(x) for x in re.findall(r"^\s*run \d+\s+([0-9.]+) ms", out, re.M)]
    comp = re.search(r"^\s*compile\s+([0-9.]+) ms", out, re.M)
    parts = re.findall(r"^\s*#\d+\s+(\w+)\s+(\d+) nodes", out, re.M)
    on = {}  # nodes per backend, from the partition summary
    for backend, nodes in parts:
        on[backend] = on.get(backend, 0) + int(nodes)
    return {
        "ok": p.returncode == 0,
        "run_ms": statistics.median(runs[2:]) if len(runs) > 2 else float("nan"),
        "compile_ms": float(comp.group(1)) if comp else float("nan"),
        "nodes": on,
        "wall_s": time.time() - t0,
        "tail": "" if p.returncode == 0 else out[-600:],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--alloy", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--autotune", action="store_true",
                    help="also time Inductor's max-autotune-no-cudagraphs mode (minutes of compile)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--python", action="store_true",
                    help="also time Alloy through its Python package on CUDA tensors (device memory "
                         "in and out, no host copies: the figure to set beside Inductor's on-device); "
                         "needs sdk/python importable and $ALLOY_LIBRARY")
    ap.add_argument("--backend-opt", action="append", default=[],
                    help="passed to alloy run as --backend-opt (e.g. cuda.gemm_benchmark=1); repeatable")
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M')} on {dev}, torch {torch.__version__}",
             "# on-device: PyTorch's inputs and outputs stay on the GPU (its usual figure);",
             "# host to host: inputs from and outputs to pageable host memory, as `alloy run` times",
             "| model | eager ms | inductor ms | inductor autotune ms | inductor 1st call s | "
             "inductor host-to-host ms | alloy host-to-host ms | alloy compile ms | alloy/inductor on-device | "
             "alloy/inductor host-to-host | nodes cuda/ref | rel RMS err | alloy on-device ms (Python) | "
             "alloy/inductor both on-device |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    tmp = tempfile.mkdtemp()
    out = open(args.out, "w")
    out.write("\n".join(lines) + "\n")
    out.flush()
    for key in args.models.split(","):
        name, model, inputs, dtype = MODELS[key](None)
        with torch.no_grad():
            ep = torch.export.export(model, inputs, strict=False)
        pt2 = os.path.join(tmp, key + ".pt2")
        torch.export.save(ep, pt2)
        gm = model.cuda()
        gi = tuple(x.cuda() for x in inputs)
        with torch.no_grad():
            refs = [t.float().cpu() for t in tensors_of(gm(*gi))]
            eager = time_gpu(lambda: gm(*gi), args.repeat)
            ind = first = mat = h2h = float("nan")
            if not args.no_compile:
                cm = torch.compile(gm)
                t0 = time.time()
                cm(*gi)
                torch.cuda.synchronize()
                first = time.time() - t0
                ind = time_gpu(lambda: cm(*gi), args.repeat)
                h2h = time_host(host_to_host(cm, inputs), args.repeat)
                if args.autotune:
                    torch._dynamo.reset()
                    ca = torch.compile(gm, mode="max-autotune-no-cudagraphs")
                    ca(*gi)
                    mat = time_gpu(lambda: ca(*gi), args.repeat)
        io = os.path.join(tmp, key + ".io.safetensors")
        save_file({f"input{i}": x.contiguous() for i, x in enumerate(inputs)}, io)
        outs = os.path.join(tmp, key + ".out.safetensors")
        tf32 = key in TF32_CONV and torch.backends.cudnn.allow_tf32
        extra = [a for o in args.backend_opt for a in ("--backend-opt", o)]
        if tf32:
            extra += ["--backend-opt", "cuda.cudnn_allow_tf32=1"]
        r = run_alloy(args.alloy, pt2, io, outs, args.repeat, extra)
        # the check: each output's error relative to PyTorch's on the GPU,
        # as an RMS over the tensor (bf16 networks differ elementwise by
        # more than one op's tolerance after a few layers)
        err = float("nan")
        if r.get("ok"):
            from safetensors.torch import load_file
            got = load_file(outs)
            err = max(((got[f"output{i}"].float() - t).norm() / t.norm()).item()
                      for i, t in enumerate(refs))
            r["ok"] = err < (2e-2 if dtype != torch.float32 else 5e-3 if tf32 else 1e-4)
        dev = float("nan")
        if args.python and r.get("ok"):
            # the same .pt2 through alloy.load, called on the CUDA inputs:
            # read and written in device memory, timed as PyTorch's on-device
            import alloy
            opts = {o.split("=", 1)[0]: o.split("=", 1)[1] for o in args.backend_opt}
            if tf32:
                opts["cuda.cudnn_allow_tf32"] = "1"
            am = alloy.load(pt2, backends=["cuda", "ref"], options=opts)
            with torch.no_grad():
                got = [t.float().cpu() for t in am.run(*gi)]
            derr = max(((g - t).norm() / t.norm()).item() for g, t in zip(got, refs))
            dev = time_gpu(lambda: am(*gi), args.repeat) if derr < 2e-2 else float("nan")
            am.close()
        if tf32:
            name += " (conv tf32)"
        if "error" in r:
            row = f"| {name} | {eager:.2f} | {ind:.2f} | {mat:.2f} | {first:.1f} | {h2h:.2f} | {r['error']} | | | | | | | |"
        else:
            ratio = r["run_ms"] / ind if ind == ind else float("nan")
            ratio_h = r["run_ms"] / h2h if h2h == h2h else float("nan")
            nodes = f"{r['nodes'].get('cuda', 0)}/{r['nodes'].get('ref', 0)}"
            row = (f"| {name} | {eager:.2f} | {ind:.2f} | {mat:.2f} | {first:.1f} | {h2h:.2f} | {r['run_ms']:.2f} | "
                   f"{r['compile_ms']:.0f} | {ratio:.2f} | {ratio_h:.2f} | {nodes} | "
                   f"{err:.1e} {'PASS' if r['ok'] else 'FAIL'} | {dev:.2f} | {dev / ind if ind == ind else float('nan'):.2f} |")
            if r["tail"]:
                row += "\n<!-- " + r["tail"].replace("\n", " / ") + " -->"
        print(row, flush=True)
        lines.append(row)
        out.write(row + "\n")
        out.flush()
        del gm
        torch.cuda.empty_cache()
    out.close()
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
