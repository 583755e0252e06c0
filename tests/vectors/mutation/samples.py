"""Samples for tests/vectors/mutation: in-place and out= overloads, which
functionalization turns into their functional twins generically (from the
registry's pairing, decompositions/functionalize.c). Each is called
directly, so the recorded result is PyTorch's own. Used as
    make_vectors.py --extra tests/vectors/mutation/samples.py ..."""


def samples(torch):
    aten = torch.ops.aten
    r = lambda *s: torch.randn(*s)
    e = lambda *s: torch.empty(*s)
    i = lambda lo, hi, *s: torch.randint(lo, hi, s)
    # out= of pointwise ops, with broadcasting into the out tensor
    yield aten.add.out, (r(3, 4), r(4)), {"alpha": 2, "out": e(3, 4)}
    yield aten.mul.out, (r(2, 3), r(2, 3)), {"out": e(2, 3)}
    yield aten.pow.Tensor_Scalar_out, (r(5).abs(), 2.5), {"out": e(5)}
    yield aten.clamp.out, (r(4, 4), -0.5, 0.5), {"out": e(4, 4)}
    yield aten.where.self_out, (r(3) > 0, r(3), r(3)), {"out": e(3)}
    # out= whose result dtype differs from the out tensor's: cast on write
    yield aten.add.out, (i(0, 9, 3, 4), i(0, 9, 4)), {"out": torch.empty(3, 4, dtype=torch.float32)}
    # out= with two results (values and indices)
    yield aten.max.dim_max, (r(3, 5), 1), {"max": e(3), "max_values": torch.empty(3, dtype=torch.long)}
    yield aten.sort.values, (r(4, 6),), {"values": e(4, 6), "indices": torch.empty(4, 6, dtype=torch.long)}
    yield aten.topk.values, (r(3, 8), 3), {"values": e(3, 3), "indices": torch.empty(3, 3, dtype=torch.long)}
    # reductions and products
    yield aten.sum.IntList_out, (r(3, 4), [1]), {"out": e(3)}
    yield aten.mean.out, (r(3, 4), [0], True), {"out": e(1, 4)}
    yield aten.mm.out, (r(3, 4), r(4, 5)), {"out": e(3, 5)}
    yield aten.addmm.out, (r(5), r(3, 4), r(4, 5)), {"beta": 0.5, "alpha": 2.0, "out": e(3, 5)}
    yield aten.cumsum.out, (r(3, 4), 1), {"out": e(3, 4)}
    # factories in out= form: the out tensor gives the dtype
    yield aten.zeros.out, ([2, 3],), {"out": e(2, 3)}
    yield aten.ones.out, ([4],), {"out": torch.empty(4, dtype=torch.long)}
    yield aten.full.out, ([2, 2], 3.5), {"out": e(2, 2)}
    yield aten.arange.start_out, (1, 7, 2), {"out": torch.empty(3, dtype=torch.long)}
    yield aten.linspace.out, (0.0, 1.0, 5), {"out": e(5)}
    # in-place ops
    yield aten.hardswish_.default, (r(4, 4),), {}
    yield aten.relu_.default, (r(4, 4),), {}
    yield aten.sigmoid_.default, (r(6),), {}
    yield aten.add_.Tensor, (r(3, 4), r(4)), {"alpha": -1.5}
    yield aten.mul_.Scalar, (r(3, 4), 3), {}
    yield aten.clamp_.default, (r(8), -0.1, 0.2), {}
    yield aten.masked_fill_.Scalar, (r(3, 4), r(3, 4) > 0, 2.0), {}
    yield aten.index_put_.default, (r(5, 3), [torch.tensor([0, 3])], r(2, 3)), {"accumulate": True}
    yield aten.scatter_.src, (r(3, 5), 1, torch.tensor([[0, 1], [2, 3], [4, 0]]), r(3, 2)), {}
    yield aten.fill_.Scalar, (r(2, 3), 7.0), {}
    yield aten.zero_.default, (r(2, 3),), {}
    yield aten.copy_.default, (r(2, 3), i(0, 5, 3)), {}
    yield aten.tril_.default, (r(4, 4), 1), {}
    yield aten.exp_.default, (r(5),), {}
    yield aten.div_.Tensor_mode, (r(4) * 10, r(4)), {"rounding_mode": "floor"}
    yield aten.lerp_.Scalar, (r(4), r(4), 0.25), {}
    # in-place on an integer tensor, and Python's augmented operators
    yield aten.__iand__.Tensor, (i(0, 16, 6), i(0, 16, 6)), {}
    yield aten.__ior__.Tensor, (i(0, 16, 6), i(0, 16, 6)), {}
    yield aten.__ilshift__.Scalar, (i(0, 16, 6), 2), {}
    yield aten.bitwise_and_.Tensor, (i(0, 16, 6), i(0, 16, 6)), {}
    # an in-place op whose functional twin names self otherwise (dropout_ -> dropout's input), eval mode
    yield aten.dropout_.default, (r(3, 3), 0.5, False), {}
