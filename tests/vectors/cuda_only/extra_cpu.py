# tests/vectors/cuda_only/extra_cpu.py: samples for make_vectors.py --extra of
# the cuDNN and MIOpen batch norms, which PyTorch runs on CUDA or ROCm only.
# Their CPU kernels are registered here as PyTorch's own decompositions
# (torch._decomp.decomposition_table: cudnn_batch_norm -> native_batch_norm
# plus the empty reserve; the backwards -> native_batch_norm_backward in
# training), so each recorded case holds the numbers that decomposition
# gives on the CPU. Each yields (op, args, kwargs), called as it is.

VENDOR_OPS = ["cudnn_batch_norm", "cudnn_batch_norm.out", "cudnn_batch_norm_backward",
       "cudnn_batch_norm_backward.out", "miopen_batch_norm_backward",
       "miopen_batch_norm_backward.out"]


def register(torch):
    from torch._decomp import decomposition_table
    lib = torch.library.Library("aten", "IMPL")
    for name in VENDOR_OPS:
        base, _, overload = name.partition(".")
        op = getattr(getattr(torch.ops.aten, base), overload or "default")
        lib.impl(name, decomposition_table[op], "CPU")
    return lib


def samples(torch):
    global _lib
    _lib = register(torch)  # kept alive while the samples run
    a = torch.ops.aten
    r = torch.randn
    f32 = torch.float32

    def stats(c, dt=f32):
        return r(c, dtype=dt) * 0.1, torch.rand(c, dtype=dt) + 0.5

    for dt, pdt in ((f32, f32), (torch.float64, torch.float64), (torch.float16, f32),
                    (torch.bfloat16, f32)):
        for shape, training in (((4, 3, 5), True), ((2, 3, 4, 4), False), ((6, 2), True)):
            c = shape[1]
            x, w, b = r(*shape, dtype=dt), r(c, dtype=pdt), r(c, dtype=pdt)
            rm, rv = stats(c, pdt)
            yield a.cudnn_batch_norm.default, (x, w, b, rm, rv, training, 0.1, 1e-5), {}
            if not training:
                continue
            out, save_mean, save_invstd, reserve = a.cudnn_batch_norm.default(
                x, w, b, rm.clone(), rv.clone(), True, 0.1, 1e-5)
            g = r(*shape, dtype=dt)
            yield a.cudnn_batch_norm_backward.default, (x, g, w, rm, rv, save_mean, save_invstd,
                                                        1e-5, reserve), {}
            yield a.miopen_batch_norm_backward.default, (x, g, w, rm, rv, save_mean, save_invstd,
                                                         1e-5), {}
    # no running statistics in training; no bias; a larger epsilon
    x, w = r(3, 4, 2, 2), r(4)
    yield a.cudnn_batch_norm.default, (x, w, None, None, None, True, 0.0, 1e-3), {}
    # the out= forms
    x, w, b = r(2, 3, 4), r(3), r(3)
    rm, rv = stats(3)
    outs = {"out0": torch.empty(0), "out1": torch.empty(0), "out2": torch.empty(0),
            "out3": torch.empty(0, dtype=torch.uint8)}
    yield a.cudnn_batch_norm.out, (x, w, b, rm, rv, True, 0.1, 1e-5), outs
    out, sm, si, res = a.cudnn_batch_norm.default(x, w, b, rm.clone(), rv.clone(), True, 0.1, 1e-5)
    g = r(2, 3, 4)
    grads = {"out0": torch.empty(0), "out1": torch.empty(0), "out2": torch.empty(0)}
    yield a.cudnn_batch_norm_backward.out, (x, g, w, rm, rv, sm, si, 1e-5, res), dict(grads)
    yield a.miopen_batch_norm_backward.out, (x, g, w, rm, rv, sm, si, 1e-5), dict(grads)
