# tests/vectors/nn/extra_samples.py: samples for make_vectors.py --extra, for
# the nn-family overloads that no OpInfo of PyTorch's test suite reaches
# (the CPU convolution kernels an export may name, the upsampling .vec
# overloads, ...). Each yields (op, args, kwargs); the op is called and
# recorded as it is.


def samples(torch):
    a = torch.ops.aten
    r = torch.randn

    # --- convolutions ---------------------------------------------------------
    for dt in (torch.float32, torch.float64):
        x, w, b = r(2, 4, 7, 6, dtype=dt), r(6, 2, 3, 3, dtype=dt), r(6, dtype=dt)
        yield a._convolution.default, (x, w, b, [1, 2], [1, 0], [1, 1], False, [0, 0], 2,
                                       False, False, True, True), {}
        wt = r(4, 3, 3, 2, dtype=dt)
        yield a._convolution.default, (x, wt, None, [2, 1], [1, 1], [1, 2], True, [1, 0], 1,
                                       False, False, True, False), {}
        yield a._convolution.deprecated, (r(2, 3, 9, dtype=dt), r(5, 3, 4, dtype=dt), None, [2],
                                          [1], [1], False, [0], 1, False, False, True), {}
        yield a._convolution_mode.default, (x, r(3, 4, 4, 3, dtype=dt), b[:3], [1, 1], "same",
                                            [1, 2], 1), {}
        yield a._convolution_mode.default, (r(1, 2, 5, 5, 4, dtype=dt), r(2, 2, 2, 3, 3, dtype=dt),
                                            None, [1], "same", [2, 1, 1], 1), {}
        yield a._convolution_mode.default, (x, w, b, [2, 1], "valid", [1, 1], 2), {}
        yield a.conv_tbc.default, (r(7, 2, 4, dtype=dt), r(3, 4, 5, dtype=dt), r(5, dtype=dt), 1), {}
        yield a.thnn_conv2d.default, (x, r(3, 4, 3, 2, dtype=dt), [3, 2], b[:3], [2, 1], [1, 0]), {}
        yield a._slow_conv2d_forward.default, (x, r(3, 4, 2, 2, dtype=dt), [2, 2], None, [1, 1],
                                               [0, 1]), {}
        x3 = r(2, 3, 4, 5, 5, dtype=dt)
        yield a.slow_conv3d.default, (x3, r(2, 3, 2, 3, 2, dtype=dt), [2, 3, 2], r(2, dtype=dt),
                                      [1, 2, 1], [1, 0, 1]), {}
        yield a.slow_conv3d_forward.default, (x3, r(4, 3, 3, 3, 3, dtype=dt), [3, 3, 3], None,
                                              [1, 1, 1], [1, 1, 1]), {}
        yield a.slow_conv_dilated2d.default, (x, r(3, 4, 3, 3, dtype=dt), [3, 3], b[:3], [1, 1],
                                              [1, 1], [2, 1]), {}
        yield a.slow_conv_dilated2d.default, (x[0], r(3, 4, 2, 2, dtype=dt), [2, 2]), {}
        yield a.slow_conv_dilated3d.default, (x3, r(2, 3, 2, 2, 2, dtype=dt), [2, 2, 2], None,
                                              [2, 1, 1], [0, 1, 1], [1, 2, 1]), {}
        yield a.slow_conv_transpose2d.default, (x, r(4, 3, 3, 3, dtype=dt), [3, 3], b[:3], [2, 2],
                                                [1, 1], [1, 0], [1, 1]), {}
        yield a.slow_conv_transpose2d.default, (x[0], r(4, 2, 2, 3, dtype=dt), [2, 3]), {}
        yield a.slow_conv_transpose3d.default, (x3, r(3, 2, 2, 2, 3, dtype=dt), [2, 2, 3], None,
                                                [1, 2, 1], [0, 1, 1], [0, 1, 0], [2, 1, 1]), {}
        yield a.slow_conv_transpose3d.default, (x3[0], r(3, 2, 2, 2, 2, dtype=dt), [2, 2, 2]), {}
    x = r(2, 4, 6, 6)
    yield a.mkldnn_convolution.default, (x, r(6, 2, 3, 3), r(6), [1, 0], [2, 1], [1, 2], 2), {}
    yield a.mkldnn_convolution.default, (r(1, 3, 8), r(4, 3, 3), None, [1], [1], [1], 1), {}
    yield a.thnn_conv2d.default, (torch.randint(-4, 4, (1, 2, 5, 5)),
                                  torch.randint(-4, 4, (3, 2, 2, 2)), [2, 2]), {}

    # --- normalization ----------------------------------------------------------
    for dt, pt in ((torch.float32, torch.float32), (torch.float64, torch.float64),
                   (torch.float16, torch.float32), (torch.bfloat16, torch.bfloat16)):
        x = r(3, 4, 5, dtype=dt)
        w, b, rm, rv = r(4, dtype=pt), r(4, dtype=pt), r(4, dtype=pt), torch.rand(4, dtype=pt) + 0.5
        yield a._batch_norm_no_update.default, (x, w, b, rm, rv, 0.1, 1e-5), {}
        yield a._batch_norm_with_update_functional.default, (x, w, b, rm, rv, 0.2, 1e-3), {}
        yield a._native_batch_norm_legit_functional.default, (x, None, b, rm, rv, True, 0.1,
                                                               1e-5), {}
        yield a._native_batch_norm_legit_functional.default, (x, w, None, rm, rv, False, 0.1,
                                                               1e-5), {}
        yield a._fused_rms_norm.default, (x, [5], r(5, dtype=dt), 1e-5), {}
        yield a._fused_rms_norm.default, (x, [4, 5], None, None), {}
    x4 = r(2, 3, 4, 4)
    yield a._batch_norm_with_update_functional.default, (x4, None, None, r(3), torch.rand(3),
                                                         0.1, 1e-5), {}
    for dt in (torch.float32, torch.float64, torch.bfloat16):
        v = r(3, 4, 5, dtype=dt)
        yield a._weight_norm_interface.default, (v, r(3, 1, 1, dtype=dt), 0), {}
        yield a._weight_norm_interface.default, (v, r(1, 1, 5, dtype=dt), 2), {}
        yield a._weight_norm.default, (v, r(3, 1, 1, dtype=dt), 0), {}
        yield a._weight_norm.default, (v, r(1, 4, 1, dtype=dt), 1), {}
        yield a._weight_norm.default, (v, r(1, 1, 1, dtype=dt), -1), {}
        yield a.norm_except_dim.default, (v, 2, 0), {}
        yield a.norm_except_dim.default, (v, 3, 1), {}
        yield a.norm_except_dim.default, (v, 2, -1), {}
    yield a._weight_norm.default, (r(3, 4, dtype=torch.float16), r(3, 1, dtype=torch.float16), 0), {}
    yield a._weight_norm_interface.default, (r(5, 2), r(5), 0), {}

    # --- upsampling -------------------------------------------------------------
    for dt in (torch.float32, torch.float64):
        x1, x2, x3 = r(2, 3, 7, dtype=dt), r(1, 2, 5, 6, dtype=dt), r(1, 2, 3, 4, 5, dtype=dt)
        yield a.upsample_nearest1d.vec, (x1, None, [1.7]), {}
        yield a.upsample_nearest1d.vec, (x1, [12], None), {}
        yield a.upsample_nearest3d.default, (x3, [5, 3, 8]), {}
        yield a.upsample_nearest3d.default, (x3, [6, 6, 6], 2.0, 1.5, 1.3), {}
        yield a.upsample_nearest3d.vec, (x3, None, [1.5, 0.7, 2.0]), {}
        yield a._upsample_nearest_exact1d.vec, (x1, None, [2.3]), {}
        yield a._upsample_nearest_exact2d.default, (x2, [7, 4]), {}
        yield a._upsample_nearest_exact2d.vec, (x2, None, [1.3, 0.5]), {}
        yield a._upsample_nearest_exact3d.default, (x3, [2, 7, 9], None, 1.8, None), {}
        yield a._upsample_nearest_exact3d.vec, (x3, [4, 4, 4], None), {}
        yield a.upsample_linear1d.vec, (x1, None, False, [1.6]), {}
        yield a.upsample_linear1d.vec, (x1, [4], True, None), {}
        yield a.upsample_bicubic2d.vec, (x2, None, False, [1.5, 0.8]), {}
        yield a.upsample_bicubic2d.vec, (x2, [9, 3], True, None), {}
        yield a.upsample_trilinear3d.vec, (x3, None, False, [1.5, 2.0, 0.6]), {}
        yield a.upsample_trilinear3d.vec, (x3, [5, 2, 7], True, None), {}
        yield a._upsample_bicubic2d_aa.default, (r(1, 2, 12, 10, dtype=dt), [5, 4], False), {}
        yield a._upsample_bicubic2d_aa.default, (x2, [9, 13], True), {}
        yield a._upsample_bicubic2d_aa.default, (r(2, 1, 20, 8, dtype=dt), [3, 8], False, 0.15, None), {}
        yield a._upsample_bicubic2d_aa.vec, (r(1, 3, 16, 11, dtype=dt), None, False, [0.4, 0.6]), {}
        yield a._upsample_bilinear2d_aa.vec, (r(1, 3, 16, 11, dtype=dt), None, True, [0.3, 1.4]), {}
    u8 = torch.randint(0, 255, (1, 2, 5, 6), dtype=torch.uint8)
    yield a._upsample_nearest_exact2d.vec, (u8, [8, 3], None), {}
    yield a.upsample_nearest3d.vec, (u8.unsqueeze(2), None, [2.0, 1.5, 0.5]), {}
    yield a.upsample_bicubic2d.vec, (r(1, 2, 5, 6, dtype=torch.bfloat16), [7, 9], False, None), {}
    yield a.upsample_trilinear3d.vec, (r(1, 1, 3, 4, 5, dtype=torch.float16), [4, 5, 6], False, None), {}

    # --- losses and distances -----------------------------------------------------
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x, y = r(4, 5, dtype=dt), r(4, 5, dtype=dt)
        yield a.l1_loss.default, (x, y, 0), {}
        yield a.kl_div.default, (x, y.abs(), 1), {"log_target": False}
        yield a.kl_div.default, (x, y, 2), {"log_target": True}
        yield a.poisson_nll_loss.default, (x, (y.abs() * 3).round(), True, True, 1e-8, 1), {}
        yield a.poisson_nll_loss.default, (x.abs(), y.abs() * 3, False, True, 1e-8, 0), {}
        yield a.margin_ranking_loss.default, (x[0], y[0], torch.tensor([1., -1, 1, -1, 1], dtype=dt), 0.3, 2), {}
        yield a.hinge_embedding_loss.default, (x, torch.randint(0, 2, (4, 5)).to(dt) * 2 - 1, 0.7, 0), {}
        yield a.cosine_embedding_loss.default, (x, y, torch.tensor([1., -1, 1, -1], dtype=dt), 0.2, 1), {}
        yield a.triplet_margin_loss.default, (x, y, r(4, 5, dtype=dt), 1.0, 2.0, 1e-6, True, 0), {}
        yield a.pairwise_distance.default, (x, y[0], 3.0, 1e-6, True), {}
        yield a.cosine_similarity.default, (x, y[:1], 0, 1e-8), {}
    for dt in (torch.float32, torch.float64):
        yield a._euclidean_dist.default, (r(5, 3, dtype=dt), r(4, 3, dtype=dt)), {}
        yield a._euclidean_dist.default, (r(2, 5, 3, dtype=dt), r(1, 4, 3, dtype=dt)), {}
        yield a.cdist.default, (r(30, 4, dtype=dt), r(27, 4, dtype=dt), 2.0, None), {}
        yield a.cdist.default, (r(2, 6, 4, dtype=dt), r(5, 4, dtype=dt), 1.0, 2), {}
        yield a.cdist.default, (r(6, 4, dtype=dt), r(5, 4, dtype=dt), 2.0, 1), {}
        yield a.pdist.default, (r(7, 3, dtype=dt), 1.5), {}
        lg = torch.log_softmax(r(2, 4, 3, 5, dtype=dt), 1)
        yield a.nll_loss2d.default, (lg, torch.randint(0, 4, (2, 3, 5)), r(4, dtype=dt).abs(), 1, -100), {}
        yield a.nll_loss_nd.default, (torch.log_softmax(r(2, 4, 3, dtype=dt), 1),
                                      torch.tensor([[0, 1, -100], [3, 2, 1]]), None, 0, -100), {}
    w = r(10, 3)
    ix = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 3, 5])
    yield a.embedding_bag.padding_idx, (w, ix, off, False, 0, False, None, False, -1), {}
    yield a.embedding_bag.padding_idx, (w, ix, off, False, 1, False, None, True, 4), {}
    yield a.embedding_bag.padding_idx, (w, ix, off, False, 2, False, None, False, None), {}
    yield a.multilabel_margin_loss.default, (r(3, 4), torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]]), 1), {}

    # --- padding, grids, linear and attention variants ------------------------------
    for dt in (torch.float32, torch.float64):
        x = r(1, 2, 5, 4, dtype=dt)
        yield a._pad_circular.default, (x, [2, 1, 1, 3]), {}
        yield a._pad_enum.default, (x, [2, 1], 1, None), {}
        yield a._pad_enum.default, (x, [1, 2, 0, 3], 2, None), {}
        yield a._pad_enum.default, (x, [1, 2, 2, 0], 0, 1.5), {}
        yield a._pad_enum.default, (x, [1, 1], 3, None), {}
        yield a.native_channel_shuffle.default, (r(2, 6, 3, dtype=dt), 3), {}
        yield a.prelu.default, (r(2, 3, 4, dtype=dt), r(3, dtype=dt)), {}
        yield a.prelu.default, (r(5, dtype=dt), r(1, dtype=dt)), {}
        yield a.bilinear.default, (r(2, 4, 3, dtype=dt), r(2, 4, 5, dtype=dt), r(6, 3, 5, dtype=dt),
                                   r(6, dtype=dt)), {}
        yield a._addmm_activation.default, (r(5, dtype=dt), r(3, 4, dtype=dt), r(4, 5, dtype=dt)), {}
        yield a._addmm_activation.default, (r(3, 5, dtype=dt), r(3, 4, dtype=dt), r(4, 5, dtype=dt)), {"beta": 0.5, "alpha": 2.0, "use_gelu": True}
        yield a.embedding_renorm.default, (r(6, 3, dtype=dt) * 2, torch.tensor([0, 2, 2, 5]), 1.0, 2.0), {}
        yield a.embedding_renorm.default, (r(6, 3, dtype=dt) * 2, torch.tensor([[1, 4]]), 0.8, 1.0), {}
        yield a.affine_grid_generator.default, (r(2, 2, 3, dtype=dt), [2, 3, 4, 5], False), {}
        yield a.affine_grid_generator.default, (r(1, 2, 3, dtype=dt), [1, 1, 1, 6], True), {}
        yield a.affine_grid_generator.default, (r(2, 3, 4, dtype=dt), [2, 1, 3, 4, 5], True), {}
        yield a.grid_sampler.default, (r(1, 2, 4, 5, dtype=dt), torch.rand(1, 3, 3, 2, dtype=dt) * 2.4 - 1.2,
                                       0, 0, False), {}
        yield a.grid_sampler.default, (r(1, 2, 3, 4, 5, dtype=dt), torch.rand(1, 2, 3, 3, 3, dtype=dt) * 2 - 1,
                                       1, 1, True), {}
        yield a._grid_sampler_2d_cpu_fallback.default, (r(2, 2, 4, 5, dtype=dt),
                                                        torch.rand(2, 3, 3, 2, dtype=dt) * 2.4 - 1.2, 2, 2,
                                                        True), {}
        q, k, v = r(2, 3, 4, 8, dtype=dt), r(2, 3, 5, 8, dtype=dt), r(2, 3, 5, 6, dtype=dt)
        yield a._scaled_dot_product_attention_math.default, (q, k, v), {}
        yield a._scaled_dot_product_attention_math.default, (q, k, v, torch.rand(4, 5) > 0.3), {"scale": 0.5}
        yield a._scaled_dot_product_attention_math.default, (q, k, v, None, 0.0, True), {}
        yield a._scaled_dot_product_attention_math.default, (q, k, v, r(2, 3, 4, 5, dtype=dt), 0.25, False,
                                                             torch.rand(2, 3, 4, 5) > 0.25), {}
        yield a._scaled_dot_product_attention_math.default, (q, r(2, 1, 5, 8, dtype=dt), r(2, 1, 5, 6, dtype=dt)), {"enable_gqa": True}
        v8 = r(2, 3, 5, 8, dtype=dt)
        yield a._scaled_dot_product_flash_attention_for_cpu.default, (q, k, v8), {}
        yield a._scaled_dot_product_flash_attention_for_cpu.default, (q, k, v8, 0.0, True), {"scale": 0.3}
        yield a._scaled_dot_product_flash_attention_for_cpu.default, (q, k, v8), {"attn_mask": r(2, 3, 4, 5, dtype=dt)}
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = r(1, 2, 4, 8, dtype=dt), r(1, 2, 6, 8, dtype=dt), r(1, 2, 6, 8, dtype=dt)
        yield a._scaled_dot_product_flash_attention_for_cpu.default, (q, k, v), {}
        yield a._scaled_dot_product_attention_math.default, (q, k, v), {}
        yield a._addmm_activation.default, (r(5, dtype=dt), r(3, 4, dtype=dt), r(4, 5, dtype=dt)), {"use_gelu": True}

    # --- recurrent layers and cells -------------------------------------------------
    def params(gates, layers, dirs, I, H, P=None, bias=True, dt=torch.float32):
        ps = []
        for l in range(layers):
            for _ in range(dirs):
                inp = I if l == 0 else (P or H) * dirs
                ps += [r(gates * H, inp, dtype=dt) * 0.4, r(gates * H, P or H, dtype=dt) * 0.4]
                if bias:
                    ps += [r(gates * H, dtype=dt) * 0.2, r(gates * H, dtype=dt) * 0.2]
                if P:
                    ps.append(r(P, H, dtype=dt) * 0.4)
        return ps
    for dt in (torch.float32, torch.float64):
        x = r(5, 2, 3, dtype=dt)
        h = r(2, 4, dtype=dt)
        yield a.rnn_tanh_cell.default, (x[0], h, r(4, 3, dtype=dt), r(4, 4, dtype=dt), r(4, dtype=dt), r(4, dtype=dt)), {}
        yield a.rnn_relu_cell.default, (x[0], h, r(4, 3, dtype=dt), r(4, 4, dtype=dt)), {}
        yield a.gru_cell.default, (x[0], h, r(12, 3, dtype=dt), r(12, 4, dtype=dt), r(12, dtype=dt), r(12, dtype=dt)), {}
        yield a.lstm_cell.default, (x[0], [h, r(2, 4, dtype=dt)], r(16, 3, dtype=dt), r(16, 4, dtype=dt),
                                    r(16, dtype=dt), r(16, dtype=dt)), {}
        yield a.rnn_tanh.input, (x, r(1, 2, 4, dtype=dt), params(1, 1, 1, 3, 4, dt=dt), True, 1, 0.0, False,
                                 False, False), {}
        yield a.rnn_relu.input, (x.transpose(0, 1), r(4, 2, 4, dtype=dt), params(1, 2, 2, 3, 4, dt=dt), True, 2,
                                 0.0, False, True, True), {}
        yield a.gru.input, (x, r(2, 2, 4, dtype=dt), params(3, 2, 1, 3, 4, dt=dt), True, 2, 0.0, False,
                            False, False), {}
        yield a.gru.input, (x, r(2, 2, 4, dtype=dt), params(3, 1, 2, 3, 4, bias=False, dt=dt), False, 1, 0.3,
                            False, True, False), {}
        yield a.lstm.input, (x, [r(1, 2, 4, dtype=dt), r(1, 2, 4, dtype=dt)], params(4, 1, 1, 3, 4, dt=dt), True,
                             1, 0.0, False, False, False), {}
        yield a.lstm.input, (x.transpose(0, 1), [r(4, 2, 4, dtype=dt), r(4, 2, 4, dtype=dt)],
                             params(4, 2, 2, 3, 4, dt=dt), True, 2, 0.0, False, True, True), {}
        yield a.lstm.input, (x, [r(2, 2, 2, dtype=dt), r(2, 2, 4, dtype=dt)], params(4, 2, 1, 3, 4, P=2, dt=dt),
                             True, 2, 0.0, False, False, False), {}
    x = r(4, 2, 3, dtype=torch.bfloat16)
    yield a.gru.input, (x, r(1, 2, 4, dtype=torch.bfloat16), params(3, 1, 1, 3, 4, dt=torch.bfloat16), True, 1,
                        0.0, False, False, False), {}
    yield a.lstm.input, (x, [r(1, 2, 4, dtype=torch.bfloat16), r(1, 2, 4, dtype=torch.bfloat16)],
                         params(4, 1, 1, 3, 4, dt=torch.bfloat16), True, 1, 0.0, False, False, False), {}

    # --- masked softmax, batch statistics -------------------------------------------
    for dt in (torch.float32, torch.float64, torch.float16):
        x = r(2, 3, 4, dtype=dt)
        yield a._masked_softmax.default, (x, torch.rand(2, 3, 4) > 0.6, 1, None), {}
        yield a._masked_softmax.default, (x, torch.rand(2, 3, 4) > 0.3), {}
        x4 = r(2, 2, 3, 3, dtype=dt)
        yield a._masked_softmax.default, (x4, torch.tensor([[False, True, False], [False, False, True]]), 3, 1), {}
        yield a._masked_softmax.default, (x4, torch.tensor([[False, True, False], [False, False, True], [True, False, False]]), 2, 0), {}
        yield a.batch_norm_update_stats.default, (r(2, 3, 4, dtype=dt), r(3), torch.rand(3), 0.1), {}
        yield a.batch_norm_update_stats.default, (r(5, 3, dtype=dt), None, None, 0.1), {}

    # --- ctc_loss ---------------------------------------------------------------------
    for dt in (torch.float32, torch.float64):
        lp = r(7, 3, 5, dtype=dt).log_softmax(2)
        yield a.ctc_loss.IntList, (lp, torch.tensor([[1, 2, 2], [3, 1, 4], [2, 0, 0]]), [7, 6, 5], [3, 2, 1], 0, 0, False), {}
        yield a.ctc_loss.IntList, (lp, torch.tensor([1, 2, 2, 3, 1, 4]), [7, 6, 7], [3, 2, 1], 0, 1, False), {}
        yield a.ctc_loss.IntList, (lp, torch.tensor([[1, 1, 1], [3, 1, 4], [2, 2, 2]]), [2, 6, 0], [3, 0, 2], 0, 0, True), {}
        yield a.ctc_loss.IntList, (lp, torch.tensor([[1, 1, 1], [3, 1, 4], [2, 2, 2]]), [2, 6, 0], [3, 0, 2], 0, 2, False), {}
        yield a.ctc_loss.IntList, (lp[:, 0], torch.tensor([4, 3, 3]), [7], [3], 2, 0, False), {}

    # --- multi-head attention ------------------------------------------------------------
    for dt in (torch.float32, torch.float64):
        x = r(2, 3, 8, dtype=dt)
        w, b, pw, pb = r(24, 8, dtype=dt) * 0.3, r(24, dtype=dt), r(8, 8, dtype=dt) * 0.3, r(8, dtype=dt)
        yield a._transform_bias_rescale_qkv.default, (r(2, 3, 24, dtype=dt), b, 2), {}
        yield a._native_multi_head_attention.default, (x, x, x, 8, 2, w, b, pw, pb), {}
        yield a._native_multi_head_attention.default, (x, x, x, 8, 4, w, b, pw, pb, None, True, False), {}
        yield a._native_multi_head_attention.default, (x, r(2, 3, 8, dtype=dt), r(2, 3, 8, dtype=dt), 8, 2, w, b, pw,
                                                       pb, torch.tensor([[False, False, True], [False, True, True]]),
                                                       True, True, 1), {}
        kv = r(2, 3, 8, dtype=dt)
        yield a._native_multi_head_attention.default, (x, kv, kv, 8, 2, w, b, pw, pb, torch.rand(2, 2, 3, 3) > 0.7,
                                                       True, True, 2), {}

    # --- TorchScript's interpolation builtins -------------------------------------------
    ip = getattr(a, "__interpolate")
    x1, x2, x3 = r(1, 2, 5), r(1, 2, 4, 5), r(1, 1, 3, 4, 5)
    yield ip.default, (x1, 8, None, "nearest"), {}
    yield ip.default, (x2, None, 1.7, "bilinear", False, None), {}
    yield ip.default, (x2, None, 1.7, "bicubic", True, False), {}
    yield ip.scale_list, (x3, None, [1.5, 2.0, 0.6], "trilinear", False, False), {}
    yield ip.scale_list, (x2, None, [0.5, 0.4], "area"), {}
    yield ip.size_list, (x1, [7], None, "linear", True), {}
    yield ip.size_list_scale_list, (x3, [4, 6, 2], None, "nearest"), {}
    yield ip.size_list_scale_list, (x2, None, [1.3, 2.6], "nearest", None, False), {}
    up = getattr(a, "__upsample")
    yield up.default, (x2, None, 2, "bilinear", True), {}
    yield up.size_list, (x1, [9], None, "linear", False), {}
    upn = getattr(a, "__upsample_nearest")
    yield upn.default, (x3, None, 2), {}
    yield upn.size_list, (x2, [3, 7], None), {}
    upb = getattr(a, "__upsample_bilinear")
    yield upb.default, (x2, 6, None), {}
    yield upb.scale_list, (x2, None, [2, 3]), {}
    yield upb.size_list, (x2, [7, 3], None), {}
    yield upb.size_list_scale_list, (x2, None, [3, 2]), {}
