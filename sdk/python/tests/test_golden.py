"""The golden models (../shared/golden/models: torch.export .pt2 files and
their NAME.io.safetensors) through alloy.load, checked against PyTorch's
outputs at the whole-model tolerances (_util.MODEL_TOL). One test per
file; without the corpus the tests say so and are skipped."""
import os
import unittest

from _util import MODEL_TOL, MODELS, alloy, assert_close, np

VARIANTS = ("aten", "core", "dyn.core")


def golden_files():
    if not os.path.isdir(MODELS):
        return []
    out = []
    for f in sorted(os.listdir(MODELS)):
        if f.endswith(".pt2"):
            name = f.split(".")[0]
            io = os.path.join(MODELS, name + ".io.safetensors")
            if os.path.exists(io):
                out.append((f, io))
    return out


def io_tensors(path):
    t = alloy.safetensors.load(path)
    ins = [t["input%d" % i] for i in range(len(t)) if "input%d" % i in t]
    outs = [t["output%d" % i] for i in range(len(t)) if "output%d" % i in t]
    return ins, outs


@unittest.skipUnless(np is not None, "no numpy")
@unittest.skipUnless(os.path.isdir(MODELS), "no golden corpus at %s" % MODELS)
class Golden(unittest.TestCase):
    def check_file(self, f, io, backends=None, batch=None):
        ins, want = io_tensors(io)
        m = alloy.load(os.path.join(MODELS, f), backends=backends)
        self.assertEqual(len(m.inputs), len(ins), f)
        self.assertEqual(len(m.outputs), len(want), f)
        if batch is not None:  # cycle rows, as `alloy run --batch`
            rows = lambda a: a[np.arange(batch) % a.shape[0]]
            ins, want = [rows(a) for a in ins], [rows(a) for a in want]
        got = m.run(*ins)
        for k, (g, w) in enumerate(zip(got, want)):
            tol = MODEL_TOL.get(m.outputs[k].dtype, (0, 0))
            assert_close(self, g, w, tol, "%s output%d" % (f, k))

    def test_mlp_on_ref_alone(self):
        self.check_file("mlp.core.pt2", os.path.join(MODELS, "mlp.io.safetensors"), ["ref"])

    def test_dynamic_batch_sizes(self):
        """One load of a .dyn.core.pt2 serves several batch sizes."""
        io = os.path.join(MODELS, "mlp.io.safetensors")
        for batch in (1, 5, 64):
            self.check_file("mlp.dyn.core.pt2", io, ["ref"], batch=batch)


def _add(f, io):
    def test(self):
        self.check_file(f, io)
    test.__doc__ = "%s against %s, default backends" % (f, os.path.basename(io))
    setattr(Golden, "test_" + f[:-4].replace(".", "_"), test)


for _f, _io in golden_files():
    _add(_f, _io)

if __name__ == "__main__":
    unittest.main()
