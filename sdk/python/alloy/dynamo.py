"""torch.compile(model, backend="alloy"): the first slice.

Dynamo hands over each graph it captured (an FX GraphModule and example
inputs); this backend exports it with PyTorch's own machinery
(torch.export.export, ATen level), saves the ExportedProgram as a .pt2 in a
temporary file, loads it with alloy.load and returns a function that runs it.
Any failure on the way (an export error, an op Alloy cannot import or no
backend claims, inputs that need autograd, symbolic sizes not handled yet)
falls back to PyTorch eager for that graph, with the reason logged on the
"alloy.dynamo" logger: never a wrong answer, never an exception of ours.

Options (torch.compile(..., options={...})): "backends" (a list or "a,b",
as alloy.load), "decompose", "backend_options" (alloy.load's options), and
"fallback" (True by default; False raises instead of falling back, for
tests). Registered through the torch_dynamo_backends entry point of the
package (pyproject.toml), so backend="alloy" works once it is installed;
alloy.dynamo.alloy_backend can also be passed directly.

Not yet (issue 20, later slices): dynamic dimensions as Alloy symbols (a
graph with symbolic sizes falls back to eager now), and autograd.
"""
import logging
import os
import tempfile

log = logging.getLogger("alloy.dynamo")

# Why each graph ran where it did, newest last (for tests and for users).
decisions = []


def _fallback(gm, why, options):
    decisions.append(("eager", why))
    if not options.get("fallback", True):
        raise RuntimeError("alloy: " + why)
    log.warning("alloy: running this graph eagerly: %s", why)
    return gm.forward


def alloy_backend(gm, example_inputs, options=None, **kwargs):
    """A torch.compile backend: (GraphModule, example inputs) -> callable."""
    import torch
    from torch.utils import _pytree as pytree

    options = dict(options or {}, **kwargs)
    for x in example_inputs:
        if not isinstance(x, torch.Tensor):
            return _fallback(gm, "a non-tensor input (%s): symbolic sizes are not handled yet"
                             % type(x).__name__, options)
        if any(not isinstance(s, int) for s in x.shape):
            return _fallback(gm, "an input of symbolic shape %s: not handled yet" % (tuple(x.shape),),
                             options)
    if torch.is_grad_enabled() and any(x.requires_grad for x in example_inputs):
        return _fallback(gm, "inputs require grad: Alloy runs inference only", options)
    try:
        from . import load
        with torch.no_grad():
            ep = torch.export.export(gm, tuple(example_inputs), strict=False)
        out_spec = ep.call_spec.out_spec
        fd, path = tempfile.mkstemp(prefix="alloy-dynamo-", suffix=".pt2")
        os.close(fd)
        try:
            torch.export.save(ep, path)
            model = load(path, backends=options.get("backends"),
                         decompose=options.get("decompose"),
                         options=options.get("backend_options"))
        finally:
            os.unlink(path)
    except Exception as e:  # export or Alloy refused it: eager, with the reason
        return _fallback(gm, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""),
                         options)
    if len(model.inputs) != len(example_inputs):
        return _fallback(gm, "the exported program takes %d inputs, the graph %d"
                         % (len(model.inputs), len(example_inputs)), options)
    decisions.append(("alloy", ",".join(model.backends)))
    log.info("alloy: graph of %d inputs compiled on %s", len(example_inputs),
             ",".join(model.backends))

    def run(*args):
        return pytree.tree_unflatten(model.run(*args), out_spec)

    run.alloy_model = model
    return run
