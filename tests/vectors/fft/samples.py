"""Samples for tests/vectors/fft where no OpInfo reaches an overload as it
is: fftshift and ifftshift (composites that export decomposes) and the
frequency ranges, called directly so that the recorded result is
PyTorch's own. Used as
    make_vectors.py --extra tests/vectors/fft/samples.py ..."""


def samples(torch):
    aten = torch.ops.aten
    r = lambda *s: torch.randn(*s)
    yield aten.fft_fftshift.default, (r(5, 4),), {}
    yield aten.fft_fftshift.default, (r(3, 6, 2), [0, -1]), {}
    yield aten.fft_fftshift.default, (torch.arange(7),), {}
    yield aten.fft_ifftshift.default, (r(5, 4),), {}
    yield aten.fft_ifftshift.default, (r(3, 7), [1]), {}
    yield aten.fft_ifftshift.default, (torch.arange(8, dtype=torch.float64), 0), {}
    yield aten.fft_fftfreq.default, (5,), {}
    yield aten.fft_fftfreq.default, (8, 0.25), {}
    yield aten.fft_fftfreq.default, (7, 0.3), {"dtype": torch.float64}
    yield aten.fft_fftfreq.default, (1,), {}
    yield aten.fft_rfftfreq.default, (9, 2.0), {}
    yield aten.fft_rfftfreq.default, (10,), {"dtype": torch.float64}
    yield aten.fft_rfftfreq.default, (6, 0.1), {}
