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

    # composites that export decomposes before a dispatch mode sees them
    yield aten.chain_matmul.default, ([rf(3, 4), rf(4, 5), rf(5, 2)],), {}
    yield aten.chain_matmul.default, ([rf(2, 6), rf(6, 3), rf(3, 7), rf(7, 1)],), {}
    yield aten.linalg_cond.p_str, (r(4, 4), "fro"), {}
    yield aten.linalg_cond.p_str, (rf(2, 3, 3), "nuc"), {}
    yield aten.linalg_matrix_rank.default, (r(5, 3), 0.5), {}
    yield aten.linalg_matrix_rank.default, (rf(2, 4, 4), 0.0, True), {}
    yield aten.linalg_matrix_rank.tol_tensor, (rf(3, 5, 4), torch.tensor([0.1, 1.0, 3.0])), {}
    yield aten.linalg_norm.ord_str, (rf(3, 4), "fro"), {}
    yield aten.linalg_norm.ord_str, (r(2, 3, 4), "nuc", [0, 2], True), {}
    yield aten.linalg_pinv.default, (r(4, 3), 1e-3), {}
    yield aten.linalg_pinv.default, (rf(2, 3, 5), 1e-15, False), {}
    yield aten.linalg_pinv.rcond_tensor, (rf(3, 4), torch.tensor(0.2)), {}
    yield aten.linalg_tensorinv.default, (r(4, 6, 8, 3), 2), {}
    yield aten.linalg_tensorinv.default, (rf(6, 2, 3), 1), {}
    yield aten.linalg_tensorsolve.default, (r(2, 3, 6), r(2, 3)), {}
    yield aten.linalg_tensorsolve.default, (rf(6, 4, 2, 3), rf(2, 3), [0, 2]), {}
    yield aten.matrix_power.default, (rf(3, 3), 5), {}
    yield aten.matrix_power.default, (r(2, 3, 3), -2), {}
    yield aten.matrix_power.default, (torch.randint(-3, 4, (3, 3)), 0), {}
    yield aten.matrix_power.default, (torch.randint(-3, 4, (2, 2)), 3), {}
    yield aten.nuclear_norm.default, (rf(4, 5),), {}
    yield aten.nuclear_norm.default, (r(3, 3), True), {}
    yield aten.nuclear_norm.dim, (rf(2, 3, 4), [0, 2]), {}
    yield aten.nuclear_norm.dim, (r(3, 4, 2), [-1, 1], True), {}
    yield aten.vander.default, (rf(5),), {}
    yield aten.vander.default, (torch.randint(-3, 4, (4,)), 6, True), {}
    yield aten.vander.default, (r(3), 0), {}
    yield aten.vander.default, (rf(4), 1), {}
    yield aten.linalg__powsum.default, (rf(3, 4), 3, [1]), {}
    yield aten.linalg__powsum.default, (r(2, 5),), {}
    yield aten.linalg__powsum.default, (torch.tensor([0.0, 1.5, -2.0, 0.25]), 0), {}
    yield aten.linalg__powsum.default, (rf(4, 3), 0.5, [0], True), {}
    yield aten.linalg__powsum.default, (rf(2, 3), -1.5), {"dtype": torch.float64}
    yield aten.linalg__powsum.default, (rf(3, 3).to(torch.bfloat16), 2, [0, 1]), {}
