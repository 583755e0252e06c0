# Which dtype combinations PyTorch's CUDA addmm.dtype / baddbmm.dtype accept,
# and with which messages (run on a CUDA machine; prints only).
import torch
a = torch.ops.aten
d = "cuda"
h, b, f, dd = torch.float16, torch.bfloat16, torch.float32, torch.float64
def t(*s, dtype=f):
    return torch.randn(*s, device=d).to(dtype)
cases = []
for name, op, sh in (("addmm", a.addmm.dtype, ((2, 3), (2, 4), (4, 3))),
                     ("baddbmm", a.baddbmm.dtype, ((2, 2, 3), (2, 2, 4), (2, 4, 3)))):
    for sd, md, od in ((h, h, f), (f, h, f), (b, b, f), (f, b, f), (h, h, h), (f, f, f), (dd, dd, dd),
                       (f, f, h), (h, h, b), (b, h, f), (h, b, f), (dd, h, f), (f, f, dd), (h, h, dd),
                       (torch.int32, torch.int8, torch.int32), (torch.int8, torch.int8, torch.int32)):
        try:
            r = op(t(*sh[0], dtype=sd), t(*sh[1], dtype=md), t(*sh[2], dtype=md), od)
            print(name, sd, md, od, "->", r.dtype, tuple(r.shape))
        except Exception as e:
            print(name, sd, md, od, "ERROR", str(e).splitlines()[0][:200])
    # broadcasting self, shape errors
    for ss in ((3,), (1, 3), (2, 1)) if name == "addmm" else ((3,), (2, 3), (1, 2, 3), (2, 1, 3)):
        try:
            r = op(t(*ss, dtype=h), t(*sh[1], dtype=h), t(*sh[2], dtype=h), f)
            print(name, "self", ss, "->", tuple(r.shape))
        except Exception as e:
            print(name, "self", ss, "ERROR", str(e).splitlines()[0][:200])
    try:
        op(t(*sh[0], dtype=h), t(*sh[1], dtype=h), t(*sh[1], dtype=h), f)
    except Exception as e:
        print(name, "shape mismatch ERROR", str(e).splitlines()[0][:200])
# out dtype mismatch
try:
    a.addmm.dtype_out(t(2, 3, dtype=h), t(2, 4, dtype=h), t(4, 3, dtype=h), f, out=t(2, 3, dtype=h))
except Exception as e:
    print("addmm out mismatch ERROR", str(e).splitlines()[0][:200])
try:
    a.baddbmm.dtype_out(t(2, 2, 3, dtype=h), t(2, 2, 4, dtype=h), t(2, 4, 3, dtype=h), f, out=t(2, 2, 3, dtype=h))
except Exception as e:
    print("baddbmm out mismatch ERROR", str(e).splitlines()[0][:200])
print(torch.__version__, torch.cuda.get_device_name())
