# Records CUDA-only backward ops with make_vectors.py's Store and Recorder:
# the samples of an --extra file (direct OpOverload calls on the GPU), the
# tensors copied to the CPU when written. Unlike make_vectors.py's main it
# keeps ops tagged nondeterministic_seeded (the memory-efficient attention
# backward, deterministic at dropout 0).
#   python3 tests/vectors/backward_cuda/record.py tests/vectors/backward_cuda/extra.py OUT PER_OP
# (from the repository root, on a machine with a CUDA GPU).
import os, sys, importlib.util, torch
path = "tests/vectors/make_vectors.py"
spec = importlib.util.spec_from_file_location("make_vectors", path)
mv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mv)
extra, out, per_op = sys.argv[1], sys.argv[2], int(sys.argv[3])
scope = {}
exec(compile(open(extra).read(), extra, "exec"), scope)
wanted = set(scope["OPS"])
store = mv.Store(out, False)
rec = mv.Recorder(store, wanted, per_op)
torch.manual_seed(0)
rec.opinfo = "extra:" + os.path.basename(extra)
for fn, args, kwargs in scope["samples"](torch):
    ts = mv.tensors_in([args, kwargs], [])
    rec.dtype = mv.DTYPE_NAMES.get(ts[0].dtype, ("", ""))[0] if ts else ""
    try:
        rec.call(fn, args, kwargs)
    except Exception as e:
        print("failed:", fn, e)
store.tensors = {k: torch.empty(v.shape, dtype=v.dtype).copy_(v) for k, v in store.tensors.items()}
store.write()
print({k: v for k, v in store.counts.items()})
