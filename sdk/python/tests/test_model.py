"""alloy.load and Model calls with NumPy arrays, on examples/mlp.air."""
import os
import threading
import unittest

from _util import EXAMPLES, OP_TOL, alloy, assert_close, has_backend, mlp_args, mlp_reference, np

MLP = os.path.join(EXAMPLES, "mlp.air")

# A small graph of two reduced-precision inputs, given as bytes.
HALF_AIR = b"""sym s0 in [1, 8]
input %x: bf16[s0, 4]
input %y: f16[4]
%a = aten.mul.Tensor(%x, %x) : bf16[s0, 4]
%b = aten.add.Tensor(%y, %y) : f16[4]
output %a, %b
"""


@unittest.skipUnless(np is not None, "no numpy")
class Signature(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = alloy.load(MLP, backends=["ref"])

    def test_inputs(self):
        self.assertEqual([t.name for t in self.m.inputs],
                         ["x", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight",
                          "fc3_bias"])
        self.assertEqual(self.m.inputs[0], alloy.TensorInfo("x", "float32", ("s0", 784)))
        self.assertEqual(self.m.inputs[1].shape, (256, 784))
        self.assertTrue(all(t.dtype == "float32" for t in self.m.inputs))

    def test_outputs_and_symbols(self):
        self.assertEqual(self.m.outputs, [alloy.TensorInfo("log_softmax", "float32", ("s0", 10))])
        self.assertEqual(self.m.symbols, {"s0": (1, 64)})
        self.assertEqual(self.m.backends, ["ref"])
        self.assertIn("mlp.air on ref", repr(self.m))


@unittest.skipUnless(np is not None, "no numpy")
class Run(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = alloy.load(MLP, backends=["ref"])

    def check(self, m, batch, seed=0):
        args = mlp_args(batch, seed)
        y = m(*args)
        self.assertIsInstance(y, np.ndarray)
        self.assertEqual(y.dtype, np.float32)
        assert_close(self, y, mlp_reference(*args), OP_TOL["float32"], "mlp batch %d" % batch)
        return y

    def test_batches_from_one_load(self):
        for batch in (1, 3, 64):
            self.check(self.m, batch, seed=batch)
        self.assertEqual(self.m.num_specializations, 3)

    def test_outputs_are_copies(self):
        a = self.check(self.m, 2, seed=1)
        keep = a.copy()
        self.check(self.m, 2, seed=2)  # the runtime's buffers are reused by this run
        self.assertTrue(np.array_equal(a, keep))

    def test_run_returns_a_list(self):
        out = self.m.run(*mlp_args(2))
        self.assertIsInstance(out, list)
        self.assertEqual(len(out), 1)

    def test_non_contiguous_input(self):
        args = mlp_args(4)
        wide = np.zeros((4, 784 * 2), np.float32)
        wide[:, ::2] = args[0]
        args2 = [wide[:, ::2]] + args[1:]
        self.assertFalse(args2[0].flags.c_contiguous)
        assert_close(self, self.m(*args2), mlp_reference(*args), OP_TOL["float32"])

    def test_lists_take_the_declared_dtype(self):
        args = mlp_args(1)
        y = self.m(args[0].tolist(), *args[1:])
        assert_close(self, y, mlp_reference(*args), OP_TOL["float32"])

    def test_load_from_bytes(self):
        with open(MLP, "rb") as f:
            m = alloy.load(f.read(), backends="ref")
        self.check(m, 2)
        self.assertEqual(m.path, "(model bytes)")

    def test_decompose_prims(self):
        self.check(alloy.load(MLP, backends=["ref"], decompose="prims"), 3)

    def test_default_backends(self):
        m = alloy.load(MLP)
        self.assertEqual(m.backends[-1], "ref")
        self.check(m, 5)

    @unittest.skipUnless(has_backend("cpu"), "no cpu backend (liballoy-cpu.so) in this build")
    def test_cpu_backend(self):
        m = alloy.load(MLP, backends=["cpu"])
        self.assertEqual(m.backends, ["cpu"])
        self.check(m, 7)
        m = alloy.load(MLP, backends=["cpu", "ref"])
        self.assertEqual(m.backends, ["cpu", "ref"])
        self.check(m, 7)

    def test_half_and_bfloat16_as_numpy(self):
        m = alloy.load(HALF_AIR, backends=["ref"])
        self.assertEqual([t.dtype for t in m.inputs], ["bfloat16", "float16"])
        x = np.array([[1.5, -2.0, 0.25, 3.0], [0.1, 7.0, -0.5, 1e-3]], np.float32)
        bits = alloy.float32_to_bfloat16(x)
        self.assertEqual(bits.dtype, np.uint16)
        y = np.array([1.0, 0.5, -3.0, 65504 / 4], np.float16)
        a, b = m(bits, y)
        self.assertEqual(a.dtype, np.uint16)  # bfloat16 bits: NumPy has no bfloat16
        self.assertEqual(b.dtype, np.float16)
        xr = alloy.bfloat16_to_float32(bits)
        assert_close(self, alloy.bfloat16_to_float32(a), xr * xr, OP_TOL["bfloat16"], "bf16 x*x")
        assert_close(self, b, y + y, OP_TOL["float16"], "f16 y+y")

    def test_bfloat16_from_python_lists_is_refused(self):
        m = alloy.load(HALF_AIR, backends=["ref"])
        with self.assertRaises(alloy.AlloyTypeError) as cm:
            m([[1.0, 2.0, 3.0, 4.0]], np.zeros(4, np.float16))
        self.assertIn("input 0 (x): the model takes bfloat16", str(cm.exception))


@unittest.skipUnless(np is not None, "no numpy")
class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = alloy.load(MLP, backends=["ref"])

    def test_missing_file(self):
        with self.assertRaises(alloy.AlloyIOError) as cm:
            alloy.load("/nonexistent/model.pt2")
        e = cm.exception
        self.assertEqual(str(e), "/nonexistent/model.pt2: cannot open: No such file or directory")
        self.assertEqual(e.code, 6)
        self.assertEqual(e.code_name, "ALLOY_ERR_IO")
        self.assertIsInstance(e, alloy.AlloyError)
        self.assertIsInstance(e, OSError)

    def test_not_a_model(self):
        with self.assertRaises(alloy.ParseError) as cm:
            alloy.load(b"this is no model")
        self.assertEqual(str(cm.exception), "(model bytes):1:1: not a model: neither a .pt2 "
                                            "archive (ZIP) nor .air text")

    def test_unknown_backend(self):
        with self.assertRaises(alloy.NotFoundError) as cm:
            alloy.load(MLP, backends=["nosuch"])
        self.assertEqual(str(cm.exception), "no usable backend 'nosuch' (see alloy.backends())")
        self.assertEqual(cm.exception.code, 4)

    def test_wrong_dtype(self):
        args = mlp_args(2)
        args[0] = args[0].astype(np.float64)
        with self.assertRaises(alloy.AlloyTypeError) as cm:
            self.m(*args)
        self.assertEqual(str(cm.exception),
                         "input 0 (x): expected float32 of rank 2, got float64 of rank 2")
        self.assertEqual(cm.exception.code_name, "ALLOY_ERR_TYPE")

    def test_wrong_rank(self):
        args = mlp_args(2)
        args[2] = args[2].reshape(1, 256)
        with self.assertRaises(alloy.AlloyTypeError) as cm:
            self.m(*args)
        self.assertEqual(str(cm.exception),
                         "input 2 (fc1_bias): expected float32 of rank 1, got float32 of rank 2")

    def test_wrong_size(self):
        args = mlp_args(2)
        args[0] = np.zeros((2, 783), np.float32)
        with self.assertRaises(alloy.InvalidArgumentError) as cm:
            self.m(*args)
        self.assertEqual(str(cm.exception),
                         "partition 0 (ref): input 0 (x) dim 1 is 783, the graph needs 784")

    def test_size_outside_symbol_range(self):
        with self.assertRaises(alloy.InvalidArgumentError) as cm:
            self.m(*mlp_args(65))
        self.assertEqual(str(cm.exception), "partition 0 (ref): input 0 (x) dim 0 is 65, "
                                            "outside the range [1, 64] of symbol s0")

    def test_wrong_count(self):
        with self.assertRaises(alloy.InvalidArgumentError) as cm:
            self.m(*mlp_args(2)[:3])
        self.assertEqual(str(cm.exception), "mlp.air takes 7 user inputs (x, fc1_weight, "
                                            "fc1_bias, fc2_weight, fc2_bias, fc3_weight, "
                                            "fc3_bias), got 3")

    def test_unknown_numpy_dtype(self):
        args = mlp_args(2)
        args[0] = args[0].astype(np.uint32)
        with self.assertRaises(alloy.AlloyTypeError) as cm:
            self.m(*args)
        self.assertEqual(str(cm.exception), "input 0 (x): NumPy dtype uint32 has no Alloy dtype "
                                            "(the model expects float32)")

    def test_bad_options(self):
        with self.assertRaises(alloy.InvalidArgumentError):
            alloy.load(MLP, backends=["ref"], decompose="everything")
        with self.assertRaises(alloy.InvalidArgumentError):
            alloy.load(MLP, backends=["ref"], options={"nodot": "1"})

    def test_closed_model(self):
        m = alloy.load(MLP, backends=["ref"])
        m.close()
        m.close()
        with self.assertRaises(alloy.AlloyError) as cm:
            m(*mlp_args(1))
        self.assertEqual(str(cm.exception), "the model was closed")

    def test_model_still_runs_after_errors(self):
        with self.assertRaises(alloy.AlloyError):
            self.m(*mlp_args(65))
        y = self.m(*mlp_args(2))
        assert_close(self, y, mlp_reference(*mlp_args(2)), OP_TOL["float32"])


@unittest.skipUnless(np is not None, "no numpy")
class Threads(unittest.TestCase):
    def run_threads(self, models, n_threads, runs):
        errors = []

        def work(k):
            try:
                m = models[k % len(models)]
                for r in range(runs):
                    batch = 1 + (k * runs + r) % 9
                    args = mlp_args(batch, seed=k * 100 + r)
                    assert_close(self, m(*args), mlp_reference(*args), OP_TOL["float32"],
                                 "thread %d run %d" % (k, r))
            except BaseException as e:  # reported below, on the main thread
                errors.append(e)

        ts = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise errors[0]

    def test_one_model_from_8_threads(self):
        self.run_threads([alloy.load(MLP, backends=["ref"])], 8, 6)

    def test_a_model_per_thread(self):
        self.run_threads([alloy.load(MLP, backends=["ref"]) for _ in range(4)], 4, 6)


if __name__ == "__main__":
    unittest.main()
