"""torch.compile with Alloy's backend (alloy/dynamo.py), first slice:
static shapes run on Alloy; whatever it cannot take runs eagerly, with the
reason logged, and still gives PyTorch's answer. Skipped without torch."""
import unittest

from _util import MODEL_TOL, alloy, torch

if torch is not None:
    import alloy.dynamo as ad

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = torch.nn.Linear(16, 32)
            self.l2 = torch.nn.Linear(32, 4)

        def forward(self, x):
            return torch.log_softmax(self.l2(torch.nn.functional.gelu(self.l1(x))), -1)


@unittest.skipUnless(torch is not None, "no torch")
class Dynamo(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()
        del ad.decisions[:]
        torch.manual_seed(0)
        self.m = MLP().eval()

    def test_static_graph_runs_on_alloy(self):
        c = torch.compile(self.m, backend=ad.alloy_backend)
        x = torch.randn(3, 16)
        with torch.no_grad():
            got, want = c(x), self.m(x)
        self.assertEqual(ad.decisions[-1][0], "alloy", ad.decisions)
        torch.testing.assert_close(got, want, rtol=MODEL_TOL["float32"][0],
                                   atol=MODEL_TOL["float32"][1])

    def test_options_pass_through(self):
        c = torch.compile(self.m, backend=ad.alloy_backend, options={"backends": ["ref"]})
        x = torch.randn(2, 16)
        with torch.no_grad():
            got, want = c(x), self.m(x)
        self.assertEqual(ad.decisions[-1], ("alloy", "ref"))
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)

    def test_grad_falls_back_to_eager_with_a_reason(self):
        c = torch.compile(self.m, backend=ad.alloy_backend)
        x = torch.randn(3, 16)
        with self.assertLogs("alloy.dynamo", "WARNING") as logs:
            got = c(x)
        self.assertIn("running this graph eagerly: inputs require grad", logs.output[0])
        self.assertEqual(ad.decisions[-1][0], "eager")
        torch.testing.assert_close(got, self.m(x))

    def test_no_fallback_option_raises(self):
        c = torch.compile(self.m, backend=ad.alloy_backend, options={"fallback": False})
        with self.assertRaises(Exception) as cm:
            c(torch.randn(3, 16))
        self.assertIn("alloy: inputs require grad", str(cm.exception))

    def test_new_batch_size_still_right(self):
        """A second batch size makes Dynamo mark the dim dynamic: that graph
        runs eagerly for now (logged), and the answers stay PyTorch's."""
        c = torch.compile(self.m, backend=ad.alloy_backend)
        with torch.no_grad():
            for n in (2, 5, 9):
                x = torch.randn(n, 16)
                torch.testing.assert_close(c(x), self.m(x), rtol=1e-4, atol=1e-4)
        self.assertEqual(ad.decisions[0][0], "alloy")

    def test_entry_point(self):
        try:
            from importlib.metadata import entry_points
            eps = entry_points(group="torch_dynamo_backends")
        except Exception as e:  # pragma: no cover
            self.skipTest("importlib.metadata: %s" % e)
        if not any(e.name == "alloy" for e in eps):
            self.skipTest("the alloy package is not installed (no torch_dynamo_backends entry)")
        c = torch.compile(self.m, backend="alloy")
        x = torch.randn(3, 16)
        with torch.no_grad():
            torch.testing.assert_close(c(x), self.m(x), rtol=1e-4, atol=1e-4)
        self.assertEqual(ad.decisions[-1][0], "alloy")


if __name__ == "__main__":
    unittest.main()
