# tests/vectors/rnn/record.py: records the recurrent layers (packed and padded) with
# make_vectors.py's Store and Recorder over extra.py's samples
# (direct calls of the ops on the CPU). Unlike
# make_vectors.py's main it keeps these ops, which PyTorch tags
# nondeterministic_seeded (for their dropout between layers) but which are
# deterministic in evaluation.
#   /work/venv/bin/python tests/vectors/rnn/record.py tests/vectors/rnn/extra.py OUT PER_OP
import importlib.util
import os
import sys

import torch

spec = importlib.util.spec_from_file_location("make_vectors", "tests/vectors/make_vectors.py")
mv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mv)
extra, out, per_op = sys.argv[1], sys.argv[2], int(sys.argv[3])
scope = {}
exec(compile(open(extra).read(), extra, "exec"), scope)
wanted = {"aten.%s.%s" % (op, form) for op in ("rnn_tanh", "rnn_relu", "gru", "lstm")
          for form in ("data", "input")}
store = mv.Store(out, False)
rec = mv.Recorder(store, wanted, per_op)
torch.manual_seed(0)
rec.opinfo = "extra:" + os.path.basename(extra)
for fn, args, kwargs in scope["samples"](torch):
    ts = mv.tensors_in([args, kwargs], [])
    rec.dtype = mv.DTYPE_NAMES.get(ts[0].dtype, ("", ""))[0] if ts else ""
    with torch.no_grad():
        rec.call(fn, args, kwargs)
store.write()
print("PyTorch", torch.__version__, {k: v for k, v in sorted(store.counts.items())})
