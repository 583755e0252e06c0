"""Calls with torch tensors through DLPack: CPU tensors passed without a
copy where their memory is contiguous, torch tensors back, every dtype
(bfloat16 and float16 included). Skipped, and said so, without torch."""
import os
import unittest

from _util import EXAMPLES, MODEL_TOL, MODELS, OP_TOL, alloy, mlp_args, mlp_reference, np, torch
from test_model import HALF_AIR

MLP = os.path.join(EXAMPLES, "mlp.air")


def close(test, got, want, tol, what=""):
    test.assertEqual(tuple(got.shape), tuple(want.shape), what)
    torch.testing.assert_close(got, want, rtol=tol[0], atol=tol[1], equal_nan=True, msg=what)


@unittest.skipUnless(torch is not None, "no torch")
class Torch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = alloy.load(MLP, backends=["ref"])

    def args(self, batch, seed=0):
        return [torch.from_numpy(a) for a in mlp_args(batch, seed)]

    def test_torch_in_torch_out(self):
        args = self.args(3)
        y = self.m(*args)
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual(y.dtype, torch.float32)
        want = torch.from_numpy(mlp_reference(*[a.numpy() for a in args])).float()
        close(self, y, want, OP_TOL["float32"])

    def test_contiguous_cpu_tensors_are_not_copied(self):
        from alloy import _tensors
        x = torch.randn(4, 784)
        b = _tensors.bind(x, 8, "x")
        self.assertEqual(b.ptr, x.data_ptr())
        self.assertFalse(b.copied)
        # A view at an offset of its storage is still contiguous memory.
        v = torch.randn(10, 784)[3:7]
        b = _tensors.bind(v, 8, "x")
        self.assertEqual(b.ptr, v.data_ptr())
        self.assertFalse(b.copied)
        # A transposed view is not row-major: copied once.
        t = torch.randn(784, 4).T
        b = _tensors.bind(t, 8, "x")
        self.assertNotEqual(b.ptr, t.data_ptr())
        self.assertTrue(b.copied)

    def test_non_contiguous_and_grad(self):
        args = self.args(4)
        x = args[0].T.contiguous().T.requires_grad_(True)
        self.assertFalse(x.is_contiguous())
        y = self.m(x, *args[1:])
        self.assertFalse(y.requires_grad)
        close(self, y, self.m(*args), (0, 0))

    def test_mixed_numpy_and_torch_gives_torch(self):
        args = mlp_args(2)
        y = self.m(torch.from_numpy(args[0]), *args[1:])
        self.assertIsInstance(y, torch.Tensor)

    def test_half_and_bfloat16(self):
        m = alloy.load(HALF_AIR, backends=["ref"])
        x = torch.randn(3, 4).bfloat16()
        y = torch.randn(4).half()
        a, b = m(x, y)
        self.assertEqual((a.dtype, b.dtype), (torch.bfloat16, torch.float16))
        close(self, a, x * x, OP_TOL["bfloat16"])
        close(self, b, y + y, OP_TOL["float16"])

    def test_wrong_dtype(self):
        args = self.args(2)
        with self.assertRaises(alloy.AlloyTypeError) as cm:
            self.m(args[0].double(), *args[1:])
        self.assertEqual(str(cm.exception),
                         "input 0 (x): expected float32 of rank 2, got float64 of rank 2")

    def test_other_dlpack_producers(self):
        """A NumPy array read through __dlpack__ like any producer."""
        from alloy import _tensors
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        b = _tensors.from_dlpack_capsule(a.__dlpack__(), "a")
        self.assertEqual((b.dtype, b.shape, b.ptr), (8, (3, 4), a.ctypes.data))

    @unittest.skipUnless(os.path.isdir(MODELS), "no golden corpus")
    def test_golden_models_with_torch(self):
        for name in ("mlp", "attn_block", "llama_tiny"):
            f = os.path.join(MODELS, name + ".dyn.core.pt2")
            if not os.path.exists(f):
                continue
            io = alloy.safetensors.load(os.path.join(MODELS, name + ".io.safetensors"),
                                        as_torch=True)
            ins = [io["input%d" % i] for i in range(len(io)) if "input%d" % i in io]
            outs = [io["output%d" % i] for i in range(len(io)) if "output%d" % i in io]
            got = alloy.load(f).run(*ins)
            for k, (g, w) in enumerate(zip(got, outs)):
                close(self, g, w, MODEL_TOL.get(str(w.dtype).replace("torch.", ""), (0, 0)),
                      "%s output%d" % (name, k))

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device")
    def test_cuda_tensors_come_back_on_their_device(self):
        args = [a.cuda() for a in self.args(2)]
        y = self.m(*args)
        self.assertEqual(y.device, args[0].device)

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device")
    def test_cuda_tensors_stay_in_device_memory_on_the_cuda_backend(self):
        m = alloy.load(MLP, backends=["cuda", "ref"])
        self.assertIn("cuda", [b.lower() for b in m.backends])
        cpu = self.args(4)
        args = [a.cuda() for a in cpu]
        y = m(*args)
        self.assertEqual(y.device, args[0].device)
        close(self, y.cpu(), self.m(*cpu), OP_TOL["float32"])
        # the inputs were read in device memory and the output written
        # there: the program's stats count no bytes through the host but
        # the weights'
        from alloy import _lib
        import ctypes
        h = _lib.lib()
        st = _lib.RunStats(struct_size=ctypes.sizeof(_lib.RunStats))
        if m._prog:
            h.alloy_program_stats(m._prog, ctypes.byref(st))
        else:
            h.alloy_mixture_stats(m._mix, ctypes.byref(st))
        self.assertEqual(st.input_bytes_in, 0)
        self.assertEqual(st.output_bytes_out, 0)

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device")
    def test_cuda_runs_follow_torchs_current_stream(self):
        # Inputs written by torch on a side stream and never waited for,
        # four runs queued behind them on that stream, the outputs read
        # once the stream is synchronized: each run read its own inputs.
        m = alloy.load(MLP, backends=["cuda", "ref"])
        cpu = self.args(4)
        side = torch.cuda.Stream()
        outs = []
        with torch.cuda.stream(side):
            base = [a.cuda() for a in cpu]
            for k in range(4):
                outs.append(m(*[a * (k + 1) for a in base]))
        side.synchronize()
        for k, y in enumerate(outs):
            close(self, y.cpu(), self.m(*[a * (k + 1) for a in cpu]), OP_TOL["float32"])

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device")
    def test_cuda_model_closed_under_the_profiler_then_another_loads(self):
        # torch.profiler (CUPTI) hooks the GPU libraries; a model closed
        # after profiling once unloaded them, and the next load crashed
        from torch.profiler import profile, ProfilerActivity
        cpu = self.args(4)
        args = [a.cuda() for a in cpu]
        for _ in range(2):
            m = alloy.load(MLP, backends=["cuda", "ref"])
            with profile(activities=[ProfilerActivity.CUDA]):
                y = m(*args)
                torch.cuda.synchronize()
            m.close()
            close(self, y.cpu(), self.m(*cpu), OP_TOL["float32"])


if __name__ == "__main__":
    unittest.main()
