# tests/vectors/resize/extra.py: samples for make_vectors.py --extra of the
# functional resizes (resize_as and resize_as.out): a new tensor of the
# template's shape holding self's elements in row-major order. Only
# shrinking and same-count resizes: the elements a growing resize adds are
# uninitialized memory in PyTorch. Each yields (op, args, kwargs), called as
# it is.


def samples(torch):
    a = torch.ops.aten
    for dt in (torch.float32, torch.int64, torch.float16, torch.bool):
        x = torch.randn(3, 4).mul(4).to(dt)
        yield a.resize_as.default, (x, torch.empty(2, 5, dtype=torch.float64)), {}
        yield a.resize_as.default, (x, torch.empty(6, 2)), {}
    x = torch.randn(2, 3, 4)
    yield a.resize_as.default, (x, torch.empty(4, 3)), {"memory_format": torch.contiguous_format}
    yield a.resize_as.default, (x, torch.empty(7)), {"memory_format": torch.preserve_format}
    yield a.resize_as.default, (x, torch.empty(0, 3)), {}
    yield a.resize_as.default, (torch.randn(5), torch.empty(())), {}
    yield a.resize_as.out, (x, torch.empty(3, 2, 2)), {"out": torch.empty(0)}
