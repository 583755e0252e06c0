"""Samples for tests/vectors/linalg where no OpInfo reaches an overload as
it is (composites that export and autograd decompose first: det, inverse,
slogdet, orgqr, linalg_matmul, _cholesky_solve_helper, ...), called
directly so that the recorded result is PyTorch's own. Used as
    make_vectors.py --extra tests/vectors/linalg/samples.py ..."""


def samples(torch):
    aten = torch.ops.aten
    r = lambda *s: torch.randn(*s, dtype=torch.float64)
    rf = lambda *s: torch.randn(*s)

    def spd(*s):  # symmetric positive definite, well conditioned
        a = r(*s)
        return a @ a.transpose(-2, -1) + s[-1] * torch.eye(s[-1], dtype=a.dtype)

    yield aten.det.default, (r(4, 4),), {}
    yield aten.det.default, (rf(2, 3, 3),), {}
    yield aten.inverse.default, (r(4, 4),), {}
    yield aten.inverse.default, (rf(2, 3, 3) + 3 * torch.eye(3),), {}
    yield aten.slogdet.default, (r(5, 5),), {}
    yield aten.slogdet.default, (rf(3, 2, 2),), {}
    a, tau = torch.geqrf(r(5, 3))
    yield aten.orgqr.default, (a, tau), {}
    a, tau = torch.geqrf(rf(2, 4, 4))
    yield aten.orgqr.default, (a, tau), {}
    yield aten.linalg_matmul.default, (rf(3, 4), rf(4, 2)), {}
    yield aten.linalg_matmul.default, (rf(2, 3, 4), rf(4)), {}
    s = spd(4, 4)
    u = torch.linalg.cholesky(s)
    yield aten._cholesky_solve_helper.default, (r(4, 2), u, False), {}
    yield aten._cholesky_solve_helper.default, (r(4, 3), u.mT.contiguous(), True), {}
