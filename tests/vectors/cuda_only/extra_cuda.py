# tests/vectors/cuda_only/extra_cuda.py: the CUDA-only matrix products with an
# out_dtype (float16/bfloat16 operands, float32 result accumulated in float32;
# or the operands' own dtype), called directly on the GPU by
# tests/vectors/backward_cuda/record.py. Each yields (op, args, kwargs).
OPS = [
    "aten.addmm.dtype",
    "aten.addmm.dtype_out",
    "aten.baddbmm.dtype",
    "aten.baddbmm.dtype_out",
]


def samples(torch):
    a = torch.ops.aten
    dev = "cuda"
    f32 = torch.float32

    def r(*shape, dtype=f32):
        return torch.randn(*shape, device=dev, dtype=dtype)

    for dt in (torch.float16, torch.bfloat16):
        # addmm.dtype: self of the product's shape, broadcast, or in out_dtype
        yield a.addmm.dtype, (r(4, 5, dtype=dt), r(4, 8, dtype=dt), r(8, 5, dtype=dt), f32), {}
        yield a.addmm.dtype, (r(5, dtype=dt), r(3, 16, dtype=dt), r(16, 5, dtype=dt), f32), {"beta": 0.5, "alpha": 2.0}
        yield a.addmm.dtype, (r(3, 6), r(3, 7, dtype=dt), r(7, 6, dtype=dt), f32), {"beta": 0.0}
        yield a.addmm.dtype, (r(1, 4, dtype=dt), r(6, 9, dtype=dt), r(9, 4, dtype=dt), dt), {}
        yield a.addmm.dtype_out, (r(4, 5, dtype=dt), r(4, 3, dtype=dt), r(3, 5, dtype=dt), f32), {"out": r(4, 5)}
        # baddbmm.dtype
        yield a.baddbmm.dtype, (r(2, 3, 5, dtype=dt), r(2, 3, 8, dtype=dt), r(2, 8, 5, dtype=dt), f32), {}
        yield a.baddbmm.dtype, (r(2, 4, 3, dtype=dt), r(2, 4, 12, dtype=dt), r(2, 12, 3, dtype=dt), f32), {"beta": 2.0, "alpha": 0.5}
        yield a.baddbmm.dtype, (r(3, 2, 2), r(3, 2, 6, dtype=dt), r(3, 6, 2, dtype=dt), f32), {"beta": 0.0}
        yield a.baddbmm.dtype, (r(2, 3, 4, dtype=dt), r(2, 3, 5, dtype=dt), r(2, 5, 4, dtype=dt), dt), {}
        yield a.baddbmm.dtype_out, (r(2, 3, 5, dtype=dt), r(2, 3, 4, dtype=dt), r(2, 4, 5, dtype=dt), f32), {"out": r(2, 3, 5)}
    # the operands' own dtype, float32 (TF32 is off by default)
    yield a.addmm.dtype, (r(4, 5), r(4, 8), r(8, 5), f32), {}
    yield a.baddbmm.dtype, (r(2, 3, 5), r(2, 3, 8), r(2, 8, 5), f32), {}
