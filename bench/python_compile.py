#!/usr/bin/env python3
"""bench/python_compile.py: torch.compile(model, backend="alloy") beside
PyTorch eager and Inductor, in one process on one machine (issue 20's
measurements): the first call of each compiled model (its compile) and the
steady-state time of a call, with outputs checked against eager.

    python3 bench/python_compile.py --device cpu --backends cpu,ref [--out FILE]
    python3 bench/python_compile.py --device cuda --backends cuda,ref

Needs PyTorch (the project venv, make deps), torchvision and transformers,
and the alloy package importable (sdk/python on PYTHONPATH, $ALLOY_LIBRARY
or a build's library). Models are made here with random weights (seeded):
an MLP, torchvision's resnet18 and a 2-layer BERT; each call on the device
is timed as the median of --repeat calls after two warm-ups.
"""
import argparse
import statistics
import time

import torch

from cuda_models import tensors_of  # bench/: a model's tensor outputs in export order


def mlp():
    m = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    return "mlp 784-512-10 b64", m.eval(), (torch.randn(64, 784),)


def resnet18():
    import torchvision
    return "resnet18 b8 224", torchvision.models.resnet18().eval(), (torch.randn(8, 3, 224, 224),)


def bert():
    from transformers import BertConfig, BertModel
    cfg = BertConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=1024,
                     vocab_size=30522, attn_implementation="sdpa")
    return "bert 2x256 b8 s128", BertModel(cfg).eval(), (torch.randint(0, 30522, (8, 128)),)


MODELS = {"mlp": mlp, "resnet18": resnet18, "bert": bert}


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def first_call(fn, args, device):
    t0 = time.perf_counter()
    out = fn(*args)
    sync(device)
    return time.perf_counter() - t0, out


def steady(fn, args, device, repeat):
    for _ in range(2):
        fn(*args)
    sync(device)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        sync(device)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--backends", default="cpu,ref")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out")
    args = ap.parse_args()
    import alloy.dynamo
    if "alloy" not in torch._dynamo.list_backends(exclude_tags=()):
        # not pip-installed here (no entry point): register it by hand
        torch._dynamo.register_backend(name="alloy", compiler_fn=alloy.dynamo.alloy_backend)
    torch.manual_seed(0)
    dev = torch.cuda.get_device_name() if args.device == "cuda" else "cpu (%d threads)" % torch.get_num_threads()
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M')} on {dev}, torch {torch.__version__}, alloy backends {args.backends}",
             "| model | eager ms | inductor 1st call s | inductor ms | alloy 1st call s | alloy ms | "
             "alloy/eager | alloy 1st call / inductor's | max rel err |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    print("\n".join(lines), flush=True)
    for key in args.models.split(","):
        name, model, inputs = MODELS[key]()
        model = model.to(args.device)
        inputs = tuple(x.to(args.device) for x in inputs)
        with torch.no_grad():
            want = [t.float() for t in tensors_of(model(*inputs))]
            eager = steady(model, inputs, args.device, args.repeat)
            torch._dynamo.reset()
            ind = torch.compile(model)
            ind_first, _ = first_call(ind, inputs, args.device)
            ind_ms = steady(ind, inputs, args.device, args.repeat)
            torch._dynamo.reset()
            al = torch.compile(model, backend="alloy", options={"backends": args.backends.split(",")})
            al_first, got = first_call(al, inputs, args.device)
            al_ms = steady(al, inputs, args.device, args.repeat)
        err = max(((g.float() - w).norm() / w.norm()).item() for g, w in zip(tensors_of(got), want))
        row = (f"| {name} | {eager:.2f} | {ind_first:.1f} | {ind_ms:.2f} | {al_first:.2f} | {al_ms:.2f} | "
               f"{al_ms / eager:.2f} | {al_first / ind_first:.3f} | {err:.1e} |")
        print(row, flush=True)
        lines.append(row)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
