# tests/vectors/rnn/extra.py: samples of the recurrent layers for
# tests/vectors/backward_cuda/record.py (which keeps these ops, tagged
# nondeterministic_seeded for their dropout between layers, deterministic in
# evaluation; on CPU tensors its copy to the CPU changes nothing):
# the packed-sequence forms (rnn_tanh.data, rnn_relu.data, gru.data, lstm.data) on
# padded batches of sequences of different lengths packed with
# torch.nn.utils.rnn.pack_padded_sequence and run through nn.RNN, nn.GRU and
# nn.LSTM in evaluation. Those ops are CompositeImplicitAutograd, so no
# dispatch mode sees them: each sample is the op's call as the module makes
# it (_VF.gru(data, batch_sizes, hx, _flat_weights, bias, num_layers,
# dropout, training, bidirectional), hx permuted to the packed order), and
# is checked here to give the module's own results. The padded forms (.input)
# on the same batches follow, but LSTM's in float16 and bfloat16 (oneDNN's
# path on the CPU, which Alloy's rule declines). Each yields (op, args, kwargs).

OPS = ["aten.%s.%s" % (op, form) for op in ("rnn_tanh", "rnn_relu", "gru", "lstm")
       for form in ("data", "input")]


def samples(torch):
    nn = torch.nn
    pack = nn.utils.rnn.pack_padded_sequence

    def op_name(module):
        if isinstance(module, nn.LSTM):
            return "lstm"
        return "gru" if isinstance(module, nn.GRU) else "rnn_" + module.nonlinearity

    def call(module, x, lengths, hx, enforce_sorted):
        """The module's ATen call on the packed batch; asserts it gives what
        the module gives."""
        packed = pack(x, lengths, batch_first=module.batch_first, enforce_sorted=enforce_sorted)
        if hx is None:
            units = module.num_layers * (2 if module.bidirectional else 1)
            hx = torch.zeros(units, len(lengths), module.proj_size or module.hidden_size, dtype=x.dtype)
        with torch.no_grad():
            out, h = module(packed, hx)
        order = packed.sorted_indices
        perm = (lambda t: t.index_select(1, order)) if order is not None else (lambda t: t)
        hxp = [perm(t) for t in hx] if isinstance(hx, tuple) else perm(hx)
        op = getattr(torch.ops.aten, op_name(module)).data
        args = (packed.data, packed.batch_sizes, hxp, list(module._flat_weights), module.bias,
                module.num_layers, float(module.dropout), module.training, module.bidirectional)
        with torch.no_grad():
            got = op(*args)
        assert torch.equal(got[0], out.data), op
        return op, args

    def call_padded(module, x, hx):
        """The module's ATen call on the padded batch (checked likewise)."""
        with torch.no_grad():
            out, h = module(x, hx)
        if hx is None:
            units = module.num_layers * (2 if module.bidirectional else 1)
            B = x.shape[0 if module.batch_first else 1]
            hx = torch.zeros(units, B, module.proj_size or module.hidden_size, dtype=x.dtype)
        op = getattr(torch.ops.aten, op_name(module)).input
        args = (x, list(hx) if isinstance(hx, tuple) else hx, list(module._flat_weights), module.bias,
                module.num_layers, float(module.dropout), module.training, module.bidirectional,
                module.batch_first)
        with torch.no_grad():
            got = op(*args)
        assert torch.equal(got[0], out), op
        return op, args

    configs = [
        # (kind, input, hidden, layers, bidirectional, bias, extra kwargs)
        ("rnn_tanh", 3, 4, 1, False, True, {}),
        ("rnn_relu", 3, 4, 2, True, True, {}),
        ("rnn_tanh", 2, 3, 2, False, False, {}),
        ("gru", 3, 4, 1, False, True, {}),
        ("gru", 4, 3, 2, True, True, {}),
        ("gru", 2, 5, 1, True, False, {}),
        ("lstm", 3, 4, 1, False, True, {}),
        ("lstm", 4, 3, 2, True, True, {}),
        ("lstm", 3, 5, 1, True, True, {"proj_size": 2}),
    ]
    # (lengths, batch_first, enforce_sorted): a sorted batch, an unsorted one
    # (pack sorts it and the module unsorts h_n), equal lengths, one sequence
    batches = [([5, 3, 2], False, True), ([2, 4, 1, 4], True, False), ([3, 3], False, True),
               ([4], True, True)]
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for k, (kind, i, h, layers, bidir, bias, kw) in enumerate(configs):
            lengths, batch_first, enforce_sorted = batches[k % len(batches)]
            if kind == "lstm":
                m = nn.LSTM(i, h, layers, bias=bias, batch_first=batch_first,
                            bidirectional=bidir, **kw)
            elif kind == "gru":
                m = nn.GRU(i, h, layers, bias=bias, batch_first=batch_first, bidirectional=bidir)
            else:
                m = nn.RNN(i, h, layers, nonlinearity=kind[4:], bias=bias,
                           batch_first=batch_first, bidirectional=bidir)
            m = m.to(dt).eval()
            B, T = len(lengths), max(lengths)
            x = torch.randn((B, T, i) if batch_first else (T, B, i), dtype=dt)
            units = layers * (2 if bidir else 1)
            hx = torch.randn(units, B, kw.get("proj_size") or h, dtype=dt)
            if kind == "lstm":
                hx = (hx, torch.randn(units, B, h, dtype=dt))
            elif k % 2:
                hx = None  # zeros
            op, args = call(m, x, torch.tensor(lengths), hx, enforce_sorted)
            yield op, args, {}
            if kind == "lstm" and dt in (torch.float16, torch.bfloat16):
                continue
            op, args = call_padded(m, x, hx)
            yield op, args, {}
