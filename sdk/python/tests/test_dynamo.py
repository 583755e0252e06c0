"""torch.compile with Alloy's backend (alloy/dynamo.py): static and dynamic
shapes run on Alloy, one compile serving every batch size of a symbol's
range; whatever it cannot take (a custom op, a SymInt that is no tensor
size, autograd) runs eagerly for that piece, with the reason logged, and
still gives PyTorch's answer. Skipped, and counted as nothing, without
torch. The golden models: test_dynamo_models.py."""
import unittest

from _util import MODEL_TOL, alloy, torch

if torch is not None:
    import alloy.dynamo as ad

    _twice = []

    def _custom_twice():
        """alloytest::twice, a custom op Alloy's registry cannot know."""
        if not _twice:
            @torch.library.custom_op("alloytest::twice", mutates_args=())
            def twice(x: torch.Tensor) -> torch.Tensor:
                return x * 2

            @twice.register_fake
            def _(x):
                return torch.empty_like(x)
            _twice.append(twice)
        return _twice[0]

    def _last_model():
        """The alloy.Model of the newest graph compiled on Alloy."""
        return ad.last_model

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
        torch._dynamo.utils.counters.clear()
        del ad.decisions[:]
        ad.stats.update(alloy=0, eager=0)
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

    def compiles(self):
        """(graphs compiled on Alloy, graphs Dynamo compiled) so far."""
        from torch._dynamo.utils import counters
        return ad.stats["alloy"], counters["stats"]["unique_graphs"]

    def check(self, c, m, x):
        with torch.no_grad():
            torch.testing.assert_close(c(x), m(x), rtol=MODEL_TOL["float32"][0],
                                       atol=MODEL_TOL["float32"][1])

    def test_second_batch_size_compiles_once_for_all_later_ones(self):
        """Dynamo's automatic dynamic shapes: batch 2 compiles a static
        graph, batch 5 one with the batch a symbol, and 9, 7 and 64 run on
        that one (no third compile), each on Alloy and right."""
        c = torch.compile(self.m, backend=ad.alloy_backend, options={"backends": ["ref"]})
        a0, d0 = self.compiles()
        for n in (2, 5, 9, 7, 64):
            self.check(c, self.m, torch.randn(n, 16))
        a, d = self.compiles()
        self.assertEqual((a - a0, d - d0), (2, 2), ad.decisions)
        self.assertEqual([k for k, _ in ad.decisions], ["alloy", "alloy"])
        dyn = _last_model()
        self.assertEqual(len(dyn.symbols), 1, dyn.symbols)
        self.assertEqual(list(dyn.symbols.values()), [(2, None)])  # Dynamo's range: 0, 1 apart
        x_in = [t for t in dyn.inputs if len(t.shape) == 2 and t.shape[1] == 16
                and isinstance(t.shape[0], str)]
        self.assertEqual(len(x_in), 1, dyn.inputs)  # (s, 16): the weights are (32, 16)
        # Alloy compiles each new size of a symbol on ref (no symbolic
        # shapes there) once: 5, 9, 7 and 64.
        self.assertEqual(dyn.num_specializations, 4)

    def test_mark_dynamic_range_becomes_the_symbol_range(self):
        """mark_dynamic(x, 0, min=2, max=64): the first compile is already
        dynamic, its Alloy symbol has the range [2, 64], and every batch in
        it runs on that compile; 65 is outside: Dynamo compiles again."""
        c = torch.compile(self.m, backend=ad.alloy_backend)
        a0, d0 = self.compiles()
        for n in (3, 2, 17, 64):
            x = torch.randn(n, 16)
            torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
            self.check(c, self.m, x)
        self.assertEqual(tuple(v - w for v, w in zip(self.compiles(), (a0, d0))), (1, 1))
        self.assertEqual(list(_last_model().symbols.values()), [(2, 64)])
        self.check(c, self.m, torch.randn(65, 16))
        self.assertEqual(self.compiles()[1] - d0, 2)

    def test_two_symbols(self):
        """mark_dynamic on the batch and the sequence of a (batch, seq, 8)
        tensor: both sizes symbols, one compile for three shapes."""
        w = torch.randn(8, 8)

        def f(x):
            s = torch.softmax(x @ x.transpose(1, 2) / 8 ** 0.5, -1)
            return (s @ x @ w).reshape(x.shape[0], -1)
        c = torch.compile(f, backend=ad.alloy_backend, options={"backends": ["cpu", "ref"]})
        a0, d0 = self.compiles()
        for shape in ((2, 4, 8), (3, 7, 8), (5, 4, 8)):
            x = torch.randn(*shape)
            torch._dynamo.mark_dynamic(x, 0)
            torch._dynamo.mark_dynamic(x, 1)
            self.check(c, f, x)
        self.assertEqual(tuple(v - w for v, w in zip(self.compiles(), (a0, d0))), (1, 1),
                         ad.decisions)
        self.assertEqual(sorted(_last_model().symbols.values()), [(2, None), (2, None)])

    def test_dynamic_true(self):
        """torch.compile(dynamic=True): every size a symbol from the first
        call (the weights' too), one compile for three batch sizes."""
        c = torch.compile(self.m, backend=ad.alloy_backend, dynamic=True)
        a0, d0 = self.compiles()
        for n in (4, 2, 11):
            self.check(c, self.m, torch.randn(n, 16))
        self.assertEqual(tuple(v - w for v, w in zip(self.compiles(), (a0, d0))), (1, 1),
                         ad.decisions)

    def test_dynamic_false_option_sends_symbolic_graphs_to_eager(self):
        c = torch.compile(self.m, backend=ad.alloy_backend, dynamic=True,
                          options={"dynamic": False})
        with self.assertLogs("alloy.dynamo", "WARNING") as logs:
            self.check(c, self.m, torch.randn(4, 16))
        self.assertIn("symbolic sizes, and options['dynamic'] is False", logs.output[0])
        self.assertEqual(ad.decisions[-1][0], "eager")

    def test_symint_of_a_python_int_falls_back_with_its_reason(self):
        """A Python int that changes becomes a SymInt input that is no size
        of a tensor: that graph runs eagerly, said so, and stays right."""
        def f(x, k):
            return (x * k).sum(1)
        c = torch.compile(f, backend=ad.alloy_backend)
        x = torch.randn(3, 4)
        with torch.no_grad(), self.assertLogs("alloy.dynamo", "WARNING") as logs:
            for k in (2, 3, 4):
                torch.testing.assert_close(c(x, k), f(x, k))
        self.assertRegex(logs.output[0], r"input \d+ is a SymInt \(s\d+\) that is no size of an "
                         r"input tensor")
        self.assertEqual([k for k, _ in ad.decisions], ["alloy", "eager"])

    def test_unsupported_op_runs_eagerly_alone(self):
        """A torch.library custom op Alloy does not know splits the graph:
        that node runs in PyTorch, the pieces before and after it on Alloy,
        and the answer is PyTorch's."""
        twice = _custom_twice()

        def f(x):
            return twice(torch.relu(x) - 0.5).exp() + 1
        c = torch.compile(f, backend=ad.alloy_backend)
        x = torch.randn(3, 4)
        with torch.no_grad(), self.assertLogs("alloy.dynamo", "WARNING") as logs:
            torch.testing.assert_close(c(x), f(x))
        self.assertIn("eagerly: node twice", logs.output[0])
        self.assertIn("Alloy has no op alloytest.twice.default", logs.output[0])
        self.assertEqual([k for k, _ in ad.decisions], ["eager", "alloy", "alloy"], ad.decisions)
        with torch.no_grad():
            torch.testing.assert_close(c(x + 1), f(x + 1))  # the pieces' compiles are kept
        self.assertEqual(ad.stats["alloy"], 2, ad.decisions)

    def test_unsupported_op_without_fallback_raises(self):
        twice = _custom_twice()
        c = torch.compile(lambda x: twice(x) + 1, backend=ad.alloy_backend,
                          options={"fallback": False})
        with torch.no_grad(), self.assertRaises(Exception) as cm:
            c(torch.randn(2))
        self.assertIn("alloy: Alloy has no op alloytest.twice.default", str(cm.exception))

    def test_graph_break_pieces_run_on_alloy_and_the_break_is_logged(self):
        def f(x):
            y = torch.tanh(x) * 3
            torch._dynamo.graph_break()
            return torch.log_softmax(y, -1)
        c = torch.compile(f, backend=ad.alloy_backend)
        x = torch.randn(4, 5)
        ad._breaks_seen.clear()
        with torch.no_grad(), self.assertLogs("alloy.dynamo", "INFO") as logs:
            torch.testing.assert_close(c(x), f(x), rtol=1e-5, atol=1e-5)
        self.assertTrue(any("a graph break" in line and "graph_break()" in line
                            for line in logs.output), logs.output)
        self.assertEqual([k for k, _ in ad.decisions], ["alloy", "alloy"])

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
