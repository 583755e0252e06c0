# tests/vectors/pointwise/samples.py: calls of the pointwise family's
# overloads that PyTorch's OpInfo samples never make at this level (the
# aliases and the Scalar/Tensor overloads are CompositeImplicitAutograd:
# autograd rewrites torch.multiply into mul before a dispatch mode or
# torch.export sees it), for tests/vectors/make_vectors.py --extra. Each
# overload is called directly, on a float32 tensor with negatives, zeros
# and a NaN where the op has a domain to leave, and on the other dtypes
# whose promotion or wrapping it changes (int64, int8/uint8, bool, float16).


def samples(torch):
    A = torch.ops.aten
    g = torch.Generator().manual_seed(0)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(dtype)

    def randint(lo, hi, *shape, dtype=torch.int64):
        return torch.randint(lo, hi, shape, generator=g).to(dtype)

    x = randn(3, 4) * 2
    x[0, 0], x[0, 1], x[1, 1] = 0.0, float("nan"), -0.0
    h = randn(3, 4, dtype=torch.float16)
    i = randint(-9, 10, 3, 4)
    i8 = randint(-100, 100, 4, dtype=torch.int8)
    u8 = randint(0, 255, 4, dtype=torch.uint8)
    b = randn(3, 4) > 0
    pos = randn(3, 4).abs() + 0.1
    unit = torch.rand(3, 4, generator=g) * 1.8 - 0.9
    row = randn(4)

    # unary aliases: the float case, an int64 one (promotion), float16
    unary = [
        ("absolute", [x, i, h]), ("arccos", [unit, i]), ("arccosh", [pos + 1, i]),
        ("arcsin", [unit, h]), ("arcsinh", [x, i]), ("arctan", [x, h]), ("arctanh", [unit, i]),
        ("negative", [x, i8, h]), ("fix", [x * 3, i, h]),
        ("special_digamma", [x, i]), ("special_psi", [x, h]), ("special_erf", [x, i]),
        ("special_erfc", [x, h]), ("special_erfinv", [unit, i]), ("special_exp2", [x, i8]),
        ("special_expit", [x, i, h]), ("special_expm1", [x, i]), ("special_gammaln", [x, i]),
        ("special_i0", [x, h]), ("special_log1p", [x, i]), ("special_sinc", [x, i, h]),
        ("special_ndtr", [x, i, h]),
        ("isfinite", [torch.tensor([1.0, float("inf"), -float("inf"), float("nan")]), i]),
        ("relu6", [x * 4, i, u8, h]), ("log_sigmoid", [x, h]),
    ]
    for name, inputs in unary:
        for t in inputs:
            yield getattr(A, name).default, (t,), {}

    # binary aliases with two tensors (broadcasting a row)
    binary = [
        (A.multiply.Tensor, [(x, row), (i, b), (h, h)]),
        (A.subtract.Tensor, [(x, row), (i, i8)]),
        (A.divide.Tensor, [(x, row), (i, i)]),
        (A.true_divide.Tensor, [(i, row)]),
        (A.arctan2.default, [(x, row), (i, i)]),
        (A.greater.Tensor, [(x, row), (i, b)]), (A.greater_equal.Tensor, [(x, row)]),
        (A.less.Tensor, [(x, row), (i8, u8)]), (A.less_equal.Tensor, [(x, row)]),
        (A.not_equal.Tensor, [(x, x), (i, i8)]),
        (A.__or__.Tensor, [(i, i8), (b, b)]), (A.__xor__.Tensor, [(i, i), (b, b)]),
        (A.__lshift__.Tensor, [(i, randint(0, 70, 4)), (i8, randint(-2, 9, 4, dtype=torch.int8))]),
        (A.__rshift__.Tensor, [(i * 1000, randint(0, 70, 4)), (u8, randint(0, 9, 4, dtype=torch.uint8))]),
        (A.special_xlogy.default, [(x, pos), (i, i)]),
        (A.special_gammainc.default, [(pos, pos * 2)]), (A.special_gammaincc.default, [(pos, pos * 2)]),
    ]
    for op, pairs in binary:
        for a, c in pairs:
            yield op, (a, c), {}
    yield A.subtract.Tensor, (x, row), {"alpha": 2}
    yield A.divide.Tensor_mode, (x, row), {"rounding_mode": "floor"}
    yield A.divide.Tensor_mode, (i, randint(1, 5, 4)), {"rounding_mode": "trunc"}
    yield A.divide.Tensor_mode, (x, row), {"rounding_mode": None}
    yield A.clip.Tensor, (x, row, row + 1), {}
    yield A.clip.Tensor, (i, None, randint(-3, 3, 4)), {}

    # a tensor and a number
    scalar = [
        (A.multiply.Scalar, [(x, 2.5), (i, 3), (h, 0.1)]),
        (A.subtract.Scalar, [(x, 1.5), (i, 2)]),
        (A.divide.Scalar, [(x, 3.0), (i, 2)]),
        (A.true_divide.Scalar, [(i, 4), (h, 3.0)]),
        (A.greater.Scalar, [(x, 0.5), (i, 2)]), (A.greater_equal.Scalar, [(i, 2.5)]),
        (A.less.Scalar, [(x, 0)]), (A.less_equal.Scalar, [(u8, 258)]),
        (A.not_equal.Scalar, [(i, 0), (b, True)]),
        (A.__and__.Scalar, [(i, 6), (b, True)]), (A.__or__.Scalar, [(i8, 3)]),
        (A.__xor__.Scalar, [(i, -1), (b, False)]),
        (A.__lshift__.Scalar, [(i, 3), (i8, 70)]), (A.__rshift__.Scalar, [(i * 100, 2), (i8, 1)]),
        (A.bitwise_left_shift.Tensor_Scalar, [(i, 2), (u8, 3)]),
        (A.bitwise_right_shift.Tensor_Scalar, [(i * 100, 3), (i8, 9)]),
        (A.copysign.Scalar, [(x, -1.0), (i, 2)]),
        (A.floor_divide.Scalar, [(x, 0.7), (i, 3), (i, -4), (h, 0.3)]),
        (A.xlogy.Scalar_Other, [(x, 2.0), (i, 3)]),
        (A.special_xlogy.other_scalar, [(x, 0.5)]),
        (A.special_xlog1py.other_scalar, [(x, 2.0), (i, 0.5)]),
        (A.special_zeta.other_scalar, [(pos + 1, 2.0)]),
        (A.clamp_max.default, [(x, 0.5), (i, 2), (u8, 100)]),
        (A.clip.default, [(x, -0.5, 0.5), (i, None, 3), (h, -1, None)]),
        (A.float_power.Tensor_Scalar, [(x, 2), (i, 0.5), (b, 3)]),
        (A._add_relu.Scalar, [(x, 0.5), (i, -2)]),
    ]
    for op, cases in scalar:
        for case in cases:
            yield op, case, {}
    yield A.subtract.Scalar, (x, 2, 3), {}
    yield A._add_relu.Scalar, (x, 1.5, 2), {}
    yield A.divide.Scalar_mode, (x, 0.7), {"rounding_mode": "floor"}
    yield A.divide.Scalar_mode, (i, 4), {"rounding_mode": "trunc"}

    # a number and a tensor
    rscalar = [
        (A.bitwise_and.Scalar_Tensor, [(6, i), (True, b)]),
        (A.bitwise_or.Scalar_Tensor, [(3, i8), (False, b)]),
        (A.bitwise_xor.Scalar_Tensor, [(-1, i), (True, b)]),
        (A.bitwise_left_shift.Scalar_Tensor,
         [(3, randint(0, 70, 4)), (300, randint(0, 9, 4, dtype=torch.uint8))]),
        (A.bitwise_right_shift.Scalar_Tensor,
         [(1000, randint(0, 12, 4)), (-64, randint(0, 9, 4, dtype=torch.int8))]),
        (A.remainder.Scalar_Tensor, [(7.5, x), (7, randint(1, 5, 4)), (-7, randint(-5, -1, 4))]),
        (A.xlogy.Scalar_Self, [(2.0, pos), (3, i), (0, x)]),
        (A.special_xlogy.self_scalar, [(1.5, pos)]),
        (A.special_xlog1py.self_scalar, [(2.0, x), (3, i)]),
        (A.special_zeta.self_scalar, [(2.5, pos + 1), (3, pos)]),
        (A.float_power.Scalar, [(2.5, i8), (2, x)]),
    ]
    for op, cases in rscalar:
        for case in cases:
            yield op, case, {}
    yield A.float_power.Tensor_Tensor, (i, randint(0, 4, 4)), {}

    # where with numbers
    yield A.where.Scalar, (b, 1, 2.5), {}
    yield A.where.Scalar, (b, True, False), {}
    yield A.where.Scalar, (b, 3, -4), {}
    yield A.where.ScalarSelf, (b, 2.5, i), {}
    yield A.where.ScalarSelf, (b, 300, u8), {}
    yield A.where.ScalarOther, (b, x, -1), {}
    yield A.where.ScalarOther, (b, h, 0.1), {}
    yield A.where.default, (b,), {}
    yield A.where.default, (x,), {}
    yield A.where.default, (torch.tensor(3),), {}

    # the orthogonal polynomials with one side a number (no NaN: PyTorch's
    # kernels return an uninitialized value for a NaN x)
    xs = x.nan_to_num()
    for name in ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                 "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                 "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                 "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                 "laguerre_polynomial_l", "legendre_polynomial_p"]:
        op = getattr(A, "special_" + name)
        yield op.n_scalar, (unit, 3), {}
        yield op.n_scalar, (xs, 5.0), {}
        yield op.x_scalar, (0.5, randint(0, 8, 4)), {}
        yield op.x_scalar, (-0.25, randint(0, 6, 4).float()), {}

    # parameters of their own
    yield A.special_round.default, (x * 10,), {}
    yield A.special_round.default, (x * 10,), {"decimals": 1}
    yield A.special_round.default, (i * 37,), {"decimals": -1}
    yield A.special_polygamma.default, (1, pos), {}
    yield A.special_polygamma.default, (2, x), {}
    yield A.special_multigammaln.default, (pos + 2, 2), {}
    yield A.special_logit.default, (torch.rand(3, 4, generator=g),), {}
    yield A.special_logit.default, (unit,), {"eps": 0.1}
    yield A.special_log_softmax.default, (x.nan_to_num(), 1), {}
    yield A.special_log_softmax.default, (h, 0), {"dtype": torch.float32}
    yield A.special_softmax.default, (x.nan_to_num(), 0), {}
    yield A.special_softmax.default, (i, 1, torch.float64), {}
    yield A.isclose.default, (x, x + 1e-6), {}
    yield A.isclose.default, (x, x), {"equal_nan": True}
    yield A.isclose.default, (i, i + randint(-1, 2, 4)), {"rtol": 0.1, "atol": 0.5}
    yield A.isclose.default, (b, b[0]), {}
    yield A.isclose.default, (u8, u8.flip(0)), {"rtol": 0.5, "atol": 0}
    yield A.isclose.default, (h, h + 0.001), {"rtol": 0, "atol": 0}
    yield A._add_relu.Tensor, (x, row), {}
    yield A._add_relu.Tensor, (i, i8), {"alpha": 2}
    yield A._add_relu.Tensor, (i8, randint(-100, 100, 4, dtype=torch.int8)), {"alpha": 2}
    yield A._add_relu.Tensor, (i.to(torch.int32), randint(-9, 9, 4)), {}
    yield A._add_relu.Tensor, (x, torch.tensor([float("inf"), -float("inf"), 1.0, 2.0])), {}
