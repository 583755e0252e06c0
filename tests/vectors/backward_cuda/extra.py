# CUDA-only backward ops, called directly on the GPU.
OPS = [
    "aten._fused_rms_norm_backward.default",
    "aten.batch_norm_backward_reduce.default",
    "aten.batch_norm_backward_elemt.default",
    "aten._scaled_dot_product_efficient_attention_backward.default",
    "aten._thnn_fused_lstm_cell_backward_impl.default",
    "aten._thnn_fused_lstm_cell_backward.default",
    "aten._thnn_fused_gru_cell_backward.default",
]

def samples(torch):
    aten = torch.ops.aten
    dev = "cuda"
    def r(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, dtype=dtype)
    # rms norm
    for dt in (torch.float32, torch.float16):
        x, w = r(3, 4, 6, dtype=dt), r(6, dtype=dt)
        out, rstd = aten._fused_rms_norm.default(x, [6], w, 1e-5)
        yield aten._fused_rms_norm_backward.default, (r(3, 4, 6, dtype=dt), x, [6], rstd, w, [True, True]), {}
        x2 = r(2, 3, 4, 5, dtype=dt)
        out, rstd = aten._fused_rms_norm.default(x2, [4, 5], r(4, 5, dtype=dt), None)
        yield aten._fused_rms_norm_backward.default, (r(2, 3, 4, 5, dtype=dt), x2, [4, 5], rstd, r(4, 5, dtype=dt), [True, True]), {}
    # synchronized batch norm's pieces
    for dt in (torch.float32, torch.float16):
        x, g = r(4, 3, 5, dtype=dt), r(4, 3, 5, dtype=dt)
        w = r(3)
        mean, invstd = aten.batch_norm_stats.default(x, 1e-5)
        sdy, sdyx, gw, gb = aten.batch_norm_backward_reduce.default(g, x, mean, invstd, w, True, True, True)
        if dt == torch.float32:
            # (its float16 kernel's sums stray from float32 sums by about 1e-4)
            yield aten.batch_norm_backward_reduce.default, (g, x, mean, invstd, w, True, True, True), {}
        count = torch.tensor([20], dtype=torch.int32, device=dev)
        yield aten.batch_norm_backward_elemt.default, (g, x, mean, invstd, w, sdy, sdyx, count), {}
        count2 = torch.tensor([20, 12, 8], dtype=torch.int32, device=dev)
        yield aten.batch_norm_backward_elemt.default, (g, x, mean, invstd, None, sdy * 2, sdyx * 3, count2), {}
    # memory-efficient attention (its float16 kernel rounds in ways of its own, so float32)
    for dt, causal in ((torch.float32, False), (torch.float32, True)):
        q, k, v = r(2, 2, 12, 8, dtype=dt), r(2, 2, 12, 8, dtype=dt), r(2, 2, 12, 8, dtype=dt)
        bias = r(2, 2, 12, 16, dtype=dt)[..., :12]
        out, lse, seed, offset = aten._scaled_dot_product_efficient_attention.default(q, k, v, bias, True, 0.0, causal)
        yield aten._scaled_dot_product_efficient_attention_backward.default, (r(2, 2, 12, 8, dtype=dt), q, k, v, bias, out, lse, seed, offset, 0.0, [True, True, True, True], causal), {}
    q, k, v = r(1, 2, 40, 16), r(1, 2, 24, 16), r(1, 2, 24, 16)
    bias = r(1, 2, 40, 24)
    out, lse, seed, offset = aten._scaled_dot_product_efficient_attention.default(q, k, v, bias, True, 0.0, False, scale=0.3)
    yield aten._scaled_dot_product_efficient_attention_backward.default, (r(1, 2, 40, 16), q, k, v, bias, out, lse, seed, offset, 0.0, [True, True, True, True], False), {"scale": 0.3}
    # fused recurrent cells
    for dt in (torch.float32, torch.float16):
        B, H = 3, 5
        ig, hg, cx, ib, hb = r(B, 4 * H, dtype=dt), r(B, 4 * H, dtype=dt), r(B, H, dtype=dt), r(4 * H, dtype=dt), r(4 * H, dtype=dt)
        hy, cy, ws = aten._thnn_fused_lstm_cell.default(ig, hg, cx, ib, hb)
        yield aten._thnn_fused_lstm_cell_backward_impl.default, (r(B, H, dtype=dt), r(B, H, dtype=dt), cx, cy, ws, True), {}
        yield aten._thnn_fused_lstm_cell_backward.default, (r(B, H, dtype=dt), None, cx, cy, ws, True), {}
        ig3, hg3, hx = r(B, 3 * H, dtype=dt), r(B, 3 * H, dtype=dt), r(B, H, dtype=dt)
        hy, ws3 = aten._thnn_fused_gru_cell.default(ig3, hg3, hx, r(3 * H, dtype=dt), r(3 * H, dtype=dt))
        yield aten._thnn_fused_gru_cell_backward.default, (r(B, H, dtype=dt), ws3, True), {}


_samples = samples


def samples(torch):
    # the fused LSTM backward asserts that autograd is off
    with torch.no_grad():
        yield from _samples(torch)
