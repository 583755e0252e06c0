"""torch.compile(backend="alloy") on every model of the golden corpus
(../shared/golden/models), rebuilt as an nn.Module from its exported
program (torch.export.load(...).module()): the outputs equal eager's within
the model tolerance (and, at the corpus's own batch, the outputs PyTorch
recorded there), and two batch sizes are served by one compile (the batch
marked dynamic; the corpus exported it as Dim("batch", min=1, max=64)).

gpt2_tiny has no .dyn.core.pt2 (its decomposition failed when the corpus
was made: models.json's core_failed), so its program, rebuilt from the
static .aten.pt2, holds the batch as a constant: one batch size. For two,
it is rebuilt from its Transformers class (GPT2LMHeadModel: 2 layers,
width 64, 4 heads, vocabulary 1000, 64 positions) with the program's
weights, which gives the corpus's outputs exactly (make deps installs
Transformers in the project venv; without it that test says so and skips). The
Transformers models' outputs are ModelOutput classes, which torch.export
.load needs registered as pytree nodes; without transformers installed a
dict-like stand-in of the same serialized name takes their place.

Skipped, and counted as nothing, without torch or the corpus."""
import os
import unittest
import warnings

from _util import MODEL_TOL, MODELS, alloy, torch  # noqa: F401

BATCHES = 3  # the corpus's batch, then this one


def _register_model_outputs():
    """The Transformers output classes the corpus's programs name, for
    torch.export.load: Transformers' own when it is installed, else a
    dict subclass per name, flattened as Transformers flattens them."""
    try:
        import transformers.modeling_outputs  # noqa: F401  registers them
        return
    except Exception:
        pass
    from torch.utils import _pytree as pytree
    for name in ("CausalLMOutputWithCrossAttentions", "CausalLMOutputWithPast",
                 "BaseModelOutputWithPoolingAndCrossAttentions"):
        qual = "transformers.modeling_outputs." + name
        if qual in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE:
            continue
        cls = type(name, (dict,), {})
        pytree.register_pytree_node(
            cls, lambda o: (list(o.values()), list(o.keys())),
            (lambda c: lambda values, keys: c(zip(keys, values)))(cls),
            serialized_type_name=qual)


def _flat(out):
    if isinstance(out, dict):
        return list(out.values())
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _batch(x, n):
    """x's rows repeated to n rows (ids stay valid ids, masks masks)."""
    reps = -(-n // x.shape[0])
    return torch.cat([x] * reps)[:n].contiguous()


@unittest.skipUnless(torch is not None, "no torch")
@unittest.skipUnless(os.path.isdir(MODELS), "no golden corpus")
class GoldenModels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import alloy.dynamo
        cls.ad = alloy.dynamo
        _register_model_outputs()

    def run_model(self, name, backends=None):
        from alloy.safetensors import load as load_st
        from torch._dynamo.utils import counters
        ad = self.ad
        dyn = os.path.join(MODELS, name + ".dyn.core.pt2")
        path = dyn if os.path.exists(dyn) else os.path.join(MODELS, name + ".aten.pt2")
        io = load_st(os.path.join(MODELS, name + ".io.safetensors"), as_torch=True)
        ins = [io["input%d" % i] for i in range(len(io)) if "input%d" % i in io]
        golden = [io["output%d" % i] for i in range(len(io)) if "output%d" % i in io]
        with warnings.catch_warnings():  # the archive's read-only weights: copied by torch
            warnings.simplefilter("ignore", UserWarning)
            m = torch.export.load(path).module()
        torch._dynamo.reset()
        counters.clear()
        del ad.decisions[:]
        a0 = ad.stats["alloy"]
        opts = {"backends": backends} if backends else {}
        c = torch.compile(m, backend=ad.alloy_backend, options=opts)
        n0 = ins[0].shape[0]
        batches = [n0, BATCHES if n0 != BATCHES else 5] if path == dyn else [n0]
        for n in batches:
            xs = [_batch(x, n) for x in ins]
            if path == dyn:
                for x in xs:
                    torch._dynamo.mark_dynamic(x, 0)
            with torch.no_grad():
                got, want = _flat(c(*xs)), _flat(m(*xs))
            self.assertEqual(len(got), len(want))
            for k, (g, w) in enumerate(zip(got, want)):
                tol = MODEL_TOL[str(w.dtype).replace("torch.", "")]
                what = "%s batch %d output%d" % (name, n, k)
                self.assertEqual(tuple(g.shape), tuple(w.shape), what)
                torch.testing.assert_close(g, w, rtol=tol[0], atol=tol[1], msg=what)
                if n == n0:  # against what PyTorch recorded in the corpus
                    torch.testing.assert_close(g, golden[k], rtol=tol[0], atol=tol[1],
                                               msg=what + " (corpus)")
        # One compile, on Alloy, for every batch size.
        self.assertEqual([d for d, _ in ad.decisions], ["alloy"], ad.decisions)
        self.assertEqual(ad.stats["alloy"] - a0, 1)
        self.assertEqual(counters["stats"]["unique_graphs"], 1)
        if path == dyn:
            self.assertEqual(len(ad.last_model.symbols), 1, ad.last_model.symbols)
            lo, hi = list(ad.last_model.symbols.values())[0]
            self.assertLessEqual(lo, 2)
            self.assertGreaterEqual(hi or 1 << 62, max(batches))
        return batches

    def test_mlp(self):
        self.assertEqual(self.run_model("mlp"), [8, 3])

    def test_mlp_on_ref(self):
        self.run_model("mlp", backends=["ref"])
        self.assertEqual(self.ad.last_model.backends, ["ref"])
        self.assertEqual(self.ad.last_model.num_specializations, 2)  # ref: per batch size

    def test_attn_block(self):
        self.assertEqual(self.run_model("attn_block"), [2, 3])

    def test_bert_tiny(self):
        self.assertEqual(self.run_model("bert_tiny"), [2, 3])

    def test_llama_tiny(self):
        self.assertEqual(self.run_model("llama_tiny"), [2, 3])

    def test_gpt2_tiny_static(self):
        self.assertEqual(self.run_model("gpt2_tiny"), [2])

    def test_gpt2_tiny_dynamic_from_its_transformers_class(self):
        try:
            from transformers import GPT2Config, GPT2LMHeadModel
        except Exception as e:
            self.skipTest("no transformers: %s" % e)
        from alloy.safetensors import load as load_st
        from torch._dynamo.utils import counters
        ad = self.ad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ep = torch.export.load(os.path.join(MODELS, "gpt2_tiny.aten.pt2"))
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=64, use_cache=False,
                         bos_token_id=0, eos_token_id=0)
        m = GPT2LMHeadModel(cfg).eval()
        m.load_state_dict(ep.state_dict)
        io = load_st(os.path.join(MODELS, "gpt2_tiny.io.safetensors"), as_torch=True)
        ids = io["input0"]
        torch._dynamo.reset()
        counters.clear()
        del ad.decisions[:]
        a0 = ad.stats["alloy"]
        c = torch.compile(lambda x: m(x).logits, backend=ad.alloy_backend)
        tol = MODEL_TOL["float32"]
        for n in (2, 3):
            x = _batch(ids, n)
            torch._dynamo.mark_dynamic(x, 0)
            with torch.no_grad():
                got, want = c(x), m(x).logits
            torch.testing.assert_close(got, want, rtol=tol[0], atol=tol[1], msg="gpt2_tiny batch %d" % n)
            if n == 2:
                torch.testing.assert_close(got, io["output0"], rtol=tol[0], atol=tol[1], msg="gpt2_tiny (corpus)")
        self.assertEqual([d for d, _ in ad.decisions], ["alloy"], ad.decisions)
        self.assertEqual(ad.stats["alloy"] - a0, 1)
        self.assertEqual(counters["stats"]["unique_graphs"], 1)
        self.assertEqual(len(ad.last_model.symbols), 1, ad.last_model.symbols)

    def test_squeezenet1_1(self):
        self.assertEqual(self.run_model("squeezenet1_1"), [2, 3])


if __name__ == "__main__":
    unittest.main()
