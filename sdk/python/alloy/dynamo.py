"""torch.compile(model, backend="alloy"): Dynamo's graphs on Alloy.

Dynamo hands over each graph it captured (an FX GraphModule and its example
inputs). This backend exports it with PyTorch's own machinery
(torch.export.export, non-strict, ATen level), saves the ExportedProgram as
a .pt2 in a temporary file, loads it with alloy.load (which imports it into
Alloy's IR and compiles it on the chosen backends) and returns a function
that runs it.

Dynamic shapes. A graph Dynamo traced with dynamic sizes (a second batch
size seen, torch._dynamo.mark_dynamic, or torch.compile(dynamic=True)) has
sizes that are SymInts: its tensors' shapes hold symbols such as s77 and
the symbols themselves are graph inputs. Each symbol that is a plain size of
some input tensor becomes an export Dim with the range Dynamo's shape
environment gives it (usually [2, inf]: Dynamo specializes 0 and 1), so the
.pt2 carries it in range_constraints and Alloy's importer makes it an Alloy
symbol with that range. The function returned passes only the tensors
(the SymInt inputs are sizes of those tensors already): one Dynamo compile
serves every size in the range, and Dynamo's guards send a size outside it
(batch 1) to a new compile. Alloy itself compiles each new set of sizes for
a backend that cannot run symbolic shapes (ref, cpu) on its first run and
keeps it: Model.num_specializations counts those.

Fallbacks. What this backend cannot take runs in PyTorch eager, with the
reason logged on the "alloy.dynamo" logger at WARNING and appended to
`decisions`. An op of torch.ops that Alloy's op registry does not know (a
torch.library custom op) runs alone: the graph is split around it
(torch.fx's split_module), and the pieces between run on Alloy, each
compiled on its first run for each set of input sizes. The whole graph (the
GraphModule Dynamo gave) runs eagerly for inputs that need autograd (Alloy
runs inference), a symbolic size that is not a plain input size (a SymInt
from a Python int argument, a shape such as 2*s0), an export failure, an op
Alloy knows but cannot import or no backend runs. Never a wrong answer,
never an exception of ours (unless options["fallback"] is False).
Graph breaks are Dynamo's: the code between two graphs runs in Python as
always, and each graph comes here on its own; the reason of each new graph
break Dynamo recorded is logged once, at INFO.

Options (torch.compile(..., options={...})): "backends" (a list or "a,b",
as alloy.load: ["cpu", "ref"], ["cuda", "ref"]), "decompose",
"backend_options" (alloy.load's options: {"cpu.threads": "2"}), "dynamic"
(True by default; False sends a graph with symbolic sizes to eager) and
"fallback" (True by default; False raises instead, for tests). Registered
through the torch_dynamo_backends entry point of the package
(pyproject.toml), so backend="alloy" works once it is installed (make deps
installs it, editable, into the project venv); alloy.dynamo.alloy_backend
can also be passed directly.
"""
import logging
import os
import tempfile

import torch
from torch.utils import _pytree as pytree

log = logging.getLogger("alloy.dynamo")

# Why each graph (or piece) ran where it did, oldest first: ("alloy",
# "cpu,ref") or ("eager", reason). For tests and for users; clear it freely.
decisions = []
# Graphs and pieces compiled on Alloy, and graphs, pieces and nodes sent to
# eager, since import (or since the caller reset them): what a test counts
# to see that a new batch size did not compile again.
stats = {"alloy": 0, "eager": 0}
# The alloy.Model of the newest graph or piece compiled (its symbols, its
# num_specializations): for tests and for a look from the prompt.
last_model = None
_breaks_seen = set()


def _first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else ""


def _eager(why, what="graph"):
    decisions.append(("eager", why))
    stats["eager"] += 1
    log.warning("alloy: running this %s eagerly: %s", what, why)


def _fallback(gm, why, options):
    if not options.get("fallback", True):
        decisions.append(("eager", why))
        stats["eager"] += 1
        raise RuntimeError("alloy: " + why)
    _eager(why)
    return gm.forward


def _log_graph_breaks():
    """Logs, once each, the graph breaks Dynamo has recorded so far (the
    Python between two graphs runs eagerly, as without a backend)."""
    try:
        from torch._dynamo.utils import counters
        reasons = list(counters["graph_break"])
    except Exception:  # a Dynamo without those counters: nothing to say
        return
    for r in reasons:
        if r not in _breaks_seen:
            _breaks_seen.add(r)
            log.info("alloy: a graph break (the code there runs in Python): %s",
                     str(r).splitlines()[0])


def _placeholders(gm):
    return [n for n in gm.graph.nodes if n.op == "placeholder"]


def _symbol_plan(gm, example_inputs):
    """How the graph's symbolic sizes reach export: returns (plan, why).
    plan = (tensor_pos, sym_src, dims): the positions of the tensor
    inputs; for each SymInt input position, (tensor index, dim) where its
    value is read at run time; for each tensor, {dim: symbol name}. why: a
    reason to fall back, else None."""
    nodes = _placeholders(gm)
    if len(nodes) != len(example_inputs):
        return None, "the graph has %d placeholders, Dynamo gave %d inputs" % (
            len(nodes), len(example_inputs))
    tensor_pos, where, dims = [], {}, []
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            continue
        fake = nodes[i].meta.get("example_value")
        shape = tuple(fake.shape) if isinstance(fake, torch.Tensor) else tuple(x.shape)
        d_of = {}
        for d, s in enumerate(shape):
            if isinstance(s, int):
                continue
            expr = s.node.expr
            if expr.is_number:  # a SymInt Dynamo specialized: a constant
                continue
            if not expr.is_Symbol:
                return None, ("input %d has the size %s in dim %d: only plain symbolic sizes "
                              "are handled" % (i, expr, d))
            d_of[d] = str(expr)
            where.setdefault(str(expr), (len(tensor_pos), d))
        tensor_pos.append(i)
        dims.append(d_of)
    sym_src = {}
    for i, x in enumerate(example_inputs):
        if isinstance(x, torch.Tensor):
            continue
        ev = nodes[i].meta.get("example_value", x)
        expr = getattr(getattr(ev, "node", None), "expr", None)
        if expr is None or not expr.is_Symbol or str(expr) not in where:
            return None, ("input %d is a %s (%s) that is no size of an input tensor: not handled"
                          % (i, type(x).__name__, expr if expr is not None else x))
        sym_src[i] = where[str(expr)]
    return (tensor_pos, sym_src, dims), None


def _ranges(gm):
    """symbol name -> (lo, hi or None) from Dynamo's shape environment."""
    env = None
    for n in _placeholders(gm):
        ev = n.meta.get("example_value")
        if isinstance(ev, torch.Tensor) and getattr(ev, "fake_mode", None) is not None:
            env = ev.fake_mode.shape_env
        elif hasattr(ev, "node"):
            env = ev.node.shape_env
        if env is not None:
            break

    def finite(v):  # sympy's oo and torch's int_oo are no ints
        try:
            return int(v) if abs(int(v)) < (1 << 62) else None
        except (TypeError, ValueError, AttributeError, OverflowError):
            return None
    out = {}
    for sym, vr in (getattr(env, "var_to_range", None) or {}).items():
        out[str(sym)] = (finite(vr.lower) or 0, finite(vr.upper))
    return out


class _OverTensors(torch.nn.Module):
    """gm called with its tensor inputs only: each SymInt input is read from
    the size of the tensor it came from, each other one is a constant."""

    def __init__(self, gm, n, tensor_pos, sym_src, consts):
        super().__init__()
        self.gm = gm
        self.n, self.tensor_pos, self.sym_src, self.consts = n, tensor_pos, sym_src, consts

    def forward(self, *tensors):
        args = [None] * self.n
        for k, i in enumerate(self.tensor_pos):
            args[i] = tensors[k]
        for i, (k, d) in self.sym_src.items():
            args[i] = tensors[k].size(d)
        for i, v in self.consts.items():
            args[i] = v
        return self.gm(*args)


def _export(gm, example_inputs, plan, consts=None):
    """The graph as an ExportedProgram over its tensor inputs, with an
    export Dim (of Dynamo's range) per symbol."""
    tensor_pos, sym_src, dims = plan
    # New tensor objects over the same memory: export clears the markers
    # mark_dynamic left on its inputs, and Dynamo, guarding on the user's
    # tensors once this returns, would then recompile at every call.
    args = tuple(example_inputs[i].detach() for i in tensor_pos)
    dynamic = None
    if any(dims):
        ranges, made = _ranges(gm), {}

        def dim(name):
            if name not in made:
                lo, hi = ranges.get(name, (2, None))
                kw = {"min": max(lo, 0)}
                if hi is not None:
                    kw["max"] = hi
                made[name] = torch.export.Dim(name, **kw)
            return made[name]
        # forward(*tensors): the specs of the varargs, under their name.
        dynamic = {"tensors": tuple({d: dim(s) for d, s in dd.items()} or None for dd in dims)}
    m = _OverTensors(gm, len(example_inputs), tensor_pos, sym_src, consts or {})
    # Outside Dynamo's tracing context: export's own guards (on its inputs,
    # "tensors") must not join the guards of the frame being compiled.
    from torch._guards import tracing
    with torch.no_grad(), tracing(None):
        return torch.export.export(m, args, dynamic_shapes=dynamic, strict=False)


def _compile(gm, example_inputs, plan, options, consts=None):
    """Exports gm, loads it on Alloy; returns the function that runs it
    (called with every input of gm, SymInts included). Raises on failure."""
    from . import load
    tensor_pos = plan[0]
    ep = _export(gm, example_inputs, plan, consts)
    out_spec = ep.call_spec.out_spec
    fd, path = tempfile.mkstemp(prefix="alloy-dynamo-", suffix=".pt2")
    os.close(fd)
    try:
        torch.export.save(ep, path)
        model = load(path, backends=options.get("backends"), decompose=options.get("decompose"),
                     options=options.get("backend_options"))
    finally:
        os.unlink(path)
    if len(model.inputs) != len(tensor_pos):
        raise RuntimeError("the exported program takes %d inputs, the graph %d tensors"
                           % (len(model.inputs), len(tensor_pos)))
    global last_model
    decisions.append(("alloy", ",".join(model.backends)))
    stats["alloy"] += 1
    last_model = model
    log.info("alloy: graph of %d inputs compiled on %s%s", len(tensor_pos),
             ",".join(model.backends), "; symbols %s" % model.symbols if model.symbols else "")
    if tensor_pos == list(range(len(example_inputs))):
        def run(*args):
            return pytree.tree_unflatten(model.run(*args), out_spec)
    else:
        def run(*args):
            return pytree.tree_unflatten(model.run(*[args[i] for i in tensor_pos]), out_spec)
    run.alloy_model = model
    return run


def _foreign(node):
    """Why Alloy cannot take this node, whatever its inputs ("" when it
    may): an operator of torch.ops that Alloy's op registry does not know
    (a custom op of torch.library, an op of another namespace)."""
    t = node.target
    if node.op != "call_function":
        return ""
    if isinstance(t, torch._ops.OpOverload):
        name = "%s.%s.%s" % (t.namespace, t._opname, t._overloadname)
    elif isinstance(t, torch._ops.OpOverloadPacket):
        name = "%s.default" % t._qualified_op_name.replace("::", ".")
    else:
        return ""
    from . import _lib
    if _lib.lib().alloy_op_find(name.encode()):
        return ""
    return "Alloy has no op %s" % name


class _Piece(torch.nn.Module):
    """A piece of a graph split around the nodes Alloy cannot take: compiled
    on Alloy on its first run for each set of input sizes (the symbols do
    not cross the split), run in PyTorch where that fails (logged once)."""

    def __init__(self, gm, name, options):
        super().__init__()
        self.gm, self.piece, self.options = gm, name, options
        self.runs, self.failed = {}, None

    def forward(self, *args):
        if self.failed:
            return self.gm(*args)
        key = tuple((tuple(a.shape), a.dtype, a.device) if isinstance(a, torch.Tensor)
                    else (type(a), a) for a in args)
        run = self.runs.get(key)
        if run is None:
            tensor_pos = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
            consts = {i: a for i, a in enumerate(args) if not isinstance(a, torch.Tensor)}
            try:
                run = _compile(self.gm, list(args), (tensor_pos, {}, [{}] * len(tensor_pos)),
                               self.options, consts)
            except Exception as e:
                self.failed = "%s: %s" % (type(e).__name__, _first_line(e))
                _eager("%s: %s" % (self.piece, self.failed), "piece")
                return self.gm(*args)
            self.runs[key] = run
        return run(*args)


def _split(gm, foreign, options):
    """gm split into pieces: each node Alloy cannot take alone, in PyTorch;
    the runs of nodes between them, on Alloy (_Piece)."""
    from torch.fx.passes.split_module import split_module
    part, ids, alone = 0, {}, {}
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output", "get_attr"):
            continue
        if n in foreign:
            part += 1
            ids[n], alone[part] = part, n
            part += 1
        else:
            ids[n] = part
    split = split_module(gm, None, lambda n: ids[n], keep_original_order=True)
    for name, sub in list(split.named_children()):
        k = int(name.rsplit("_", 1)[1])
        if k in alone:
            _eager("node %s: %s" % (alone[k].name, foreign[alone[k]]), "node")
        else:
            setattr(split, name, _Piece(sub, name, options))
    return split


def alloy_backend(gm, example_inputs, options=None, **kwargs):
    """A torch.compile backend: (GraphModule, example inputs) -> callable."""
    options = dict(options or {}, **kwargs)
    _log_graph_breaks()
    plan, why = _symbol_plan(gm, example_inputs)
    if why:
        return _fallback(gm, why, options)
    tensor_pos, sym_src, dims = plan
    if (sym_src or any(dims)) and not options.get("dynamic", True):
        return _fallback(gm, "symbolic sizes, and options['dynamic'] is False", options)
    if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad
                                       for x in example_inputs):
        return _fallback(gm, "inputs require grad: Alloy runs inference only", options)
    foreign = {n: _foreign(n) for n in gm.graph.nodes}
    foreign = {n: why for n, why in foreign.items() if why}
    if foreign:
        if not options.get("fallback", True):
            return _fallback(gm, "; ".join(sorted(set(foreign.values()))), options)
        return _split(gm, foreign, options).forward
    try:
        return _compile(gm, example_inputs, plan, options)
    except Exception as e:  # export or Alloy refused it: eager, with the reason
        return _fallback(gm, "%s: %s" % (type(e).__name__, _first_line(e)), options)
