"""Shared by the tests: where things are, the tolerances, a comparison."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)                      # sdk/python
REPO = os.path.normpath(os.path.join(PKG, "..", ".."))
EXAMPLES = os.path.join(REPO, "examples")

try:  # an installed package first (pip install ./sdk/python), else the source tree
    import alloy  # noqa: F401
except ImportError:
    sys.path.insert(0, PKG)
    import alloy  # noqa: F401

GOLDEN = os.path.normpath(os.environ.get("ALLOY_GOLDEN") or os.path.join(REPO, "..", "shared", "golden"))
MODELS = os.path.join(GOLDEN, "models")

try:
    import numpy as np
except ImportError:  # tests/python.sh picks an interpreter with NumPy
    np = None

try:
    import torch
except Exception:
    torch = None

# DESIGN.md, "Conformance tolerances" (torch.testing.assert_close's
# defaults): (rtol, atol) per dtype; integers and bool exact.
OP_TOL = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7), "float16": (1e-3, 1e-5),
          "bfloat16": (1.6e-2, 1e-5)}
# Whole models against PyTorch's eager outputs: float32 at rtol = atol =
# 1e-4, the others as per op: conformance/compare.h's conform_model_tolerance,
# what `alloy run --check` and the suite's golden models use (a whole model
# sums in other orders than PyTorch's kernels; the reason is written there).
MODEL_TOL = dict(OP_TOL, float32=(1e-4, 1e-4))


def assert_close(test, got, want, tol, what=""):
    """|got - want| <= atol + rtol * |want| elementwise (NaN equals NaN);
    same shape; integers and bools exact."""
    got, want = np.asarray(got), np.asarray(want)
    test.assertEqual(got.shape, want.shape, "%s: shape" % what)
    if want.dtype.kind in "biu":
        test.assertTrue(np.array_equal(got, want), "%s: integers differ" % what)
        return
    rtol, atol = tol
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    err = np.where(both_nan, 0.0, np.abs(g - w))
    bad = ~(err <= atol + rtol * np.abs(w))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape)
        test.fail("%s: max abs err %.3g, first mismatch at %s: got %r, expected %r (rtol %g, "
                  "atol %g)" % (what, np.nanmax(err), list(i), g[i], w[i], rtol, atol))


def mlp_reference(x, w1, b1, w2, b2, w3, b3):
    """examples/mlp.air in float64 NumPy."""
    f = lambda a: np.asarray(a, np.float64)
    h = np.maximum(f(x) @ f(w1).T + f(b1), 0)
    h = h @ f(w2).T + f(b2)
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    z = h @ f(w3).T + f(b3)
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def mlp_args(batch, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(batch, 784), (256, 784), (256,), (128, 256), (128,), (10, 128), (10,)]
    return [(rng.standard_normal(s) * (0.05 if i else 1.0)).astype(np.float32)
            for i, s in enumerate(shapes)]


def has_backend(name):
    return any(b.name == name and b.ok and b.devices for b in alloy.backends())
