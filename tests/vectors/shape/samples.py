"""Samples for tests/vectors/shape: the shape, reduction, factory, indexing
and dtype-conversion overloads that PyTorch's OpInfo samples do not reach
(aliases, composite views, _copy twins, joins, scalar reads). Each is
called directly, so the recorded result is PyTorch's own. Used as
    make_vectors.py --extra tests/vectors/shape/samples.py ..."""


def samples(torch):
    aten = torch.ops.aten
    r = lambda *s: torch.randn(*s)
    h = lambda *s: torch.randn(*s).half()
    i = lambda lo, hi, *s: torch.randint(lo, hi, s)
    b = lambda *s: torch.rand(*s) > 0.5
    d = lambda *s: torch.randn(*s, dtype=torch.float64)

    # views and their copies
    yield aten.alias_copy.default, (r(2, 3),), {}
    yield aten.detach_copy.default, (i(0, 9, 4),), {}
    yield aten._reshape_alias.default, (r(2, 6), [3, 4], [4, 1]), {}
    yield aten._reshape_alias_copy.default, (i(0, 9, 2, 6), [12], [1]), {}
    yield aten._reshape_copy.default, (r(2, 3, 4), [4, -1]), {}
    yield aten.broadcast_to.default, (r(3, 1), [2, 3, 4]), {}
    yield aten.swapaxes.default, (r(2, 3, 4), 0, -1), {}
    yield aten.swapdims.default, (i(0, 5, 2, 3), 1, 0), {}
    yield aten.moveaxis.int, (r(2, 3, 4), 0, 2), {}
    yield aten.moveaxis.intlist, (r(2, 3, 4, 5), [0, 1], [-1, 0]), {}
    yield aten.movedim.int, (r(2, 3, 4), -1, 0), {}
    yield aten.movedim.intlist, (h(2, 3, 4, 5), [3, 0], [1, 2]), {}
    yield aten.ravel.default, (r(2, 3, 4).transpose(0, 2),), {}
    yield aten.ravel.default, (torch.tensor(3.0),), {}
    yield aten.select_copy.int, (r(3, 4), 1, -1), {}
    yield aten.slice_copy.Tensor, (r(5, 6), 1, 1, -1, 2), {}
    yield aten.squeeze_copy.dims, (r(1, 3, 1, 2), [0, 2]), {}
    yield aten.view.dtype, (r(2, 4), torch.int32), {}
    yield aten.view.dtype, (r(2, 4), torch.float16), {}
    yield aten.view.dtype, (h(2, 4), torch.float32), {}
    yield aten.view_copy.dtype, (i(0, 100, 3, 2), torch.float64), {}
    yield aten.view_copy.dtype, (b(8), torch.uint8), {}
    yield aten.real.default, (r(3, 2),), {}
    yield aten.conj.default, (r(3),), {}
    yield aten.resolve_conj.default, (i(0, 9, 4),), {}
    yield aten.resolve_neg.default, (r(2, 2),), {}
    yield aten.conj_physical.default, (r(2, 2),), {}
    yield aten._conj_physical.default, (r(3),), {}
    yield aten._neg_view.default, (r(3, 2),), {}
    yield aten._neg_view_copy.default, (i(-5, 5, 4),), {}
    yield aten.lift.default, (r(2, 2),), {}
    yield aten.lift_fresh.default, (r(3),), {}
    yield aten.lift_fresh_copy.default, (i(0, 9, 3),), {}
    yield aten.lift_fresh_copy.default, (torch.tensor(2.5),), {}
    yield aten._lazy_clone.default, (h(2, 3),), {}
    yield aten.mT.default, (r(2, 3, 4),), {}
    yield aten.mT.a, (r(3, 4),), {}
    yield aten.mH.default, (r(3, 4),), {}
    yield aten.mH.a, (i(0, 9, 2, 3, 4),), {}
    yield aten.adjoint.default, (r(2, 5),), {}
    yield aten.matrix_H.default, (r(2, 5),), {}
    yield aten.matrix_H.a, (r(4, 3),), {}
    yield aten.numpy_T.default, (r(2, 3, 4),), {}
    yield aten.numpy_T.a, (r(2, 3),), {}
    yield aten.atleast_1d.default, (torch.tensor(1.5),), {}
    yield aten.atleast_1d.default, (r(2, 3),), {}
    yield aten.atleast_2d.default, (r(3),), {}
    yield aten.atleast_2d.default, (torch.tensor(4),), {}
    yield aten.atleast_3d.default, (r(3),), {}
    yield aten.atleast_3d.default, (r(2, 3),), {}
    yield aten.atleast_3d.default, (torch.tensor(2.0),), {}
    yield aten.atleast_1d.Sequence, ([torch.tensor(1.0), r(2)],), {}
    yield aten.atleast_2d.Sequence, ([r(3), r(2, 2, 2)],), {}
    yield aten.atleast_3d.Sequence, ([r(3), r(2, 2), torch.tensor(7)],), {}
    yield aten.tensor_split.sections, (r(7, 2), 3), {}
    yield aten.tensor_split.sections, (i(0, 9, 2, 5), 4, 1), {}
    yield aten.tensor_split.indices, (r(5, 3), [3, 1]), {}
    yield aten.tensor_split.indices, (r(2, 6), [-2, 7], -1), {}
    yield aten.hsplit.int, (r(4, 6), 3), {}
    yield aten.hsplit.int, (r(6), 2), {}
    yield aten.hsplit.array, (r(3, 5), [1, 3]), {}
    yield aten.vsplit.int, (r(4, 2), 2), {}
    yield aten.vsplit.array, (r(5, 2), [2]), {}
    yield aten.dsplit.int, (r(2, 2, 6), 3), {}
    yield aten.dsplit.array, (r(2, 2, 5), [1, 4]), {}
    yield aten.diag.default, (r(4),), {}
    yield aten.diag.default, (r(3), -1), {}
    yield aten.diag.default, (r(3, 4), 1), {}
    yield aten.diag.default, (i(0, 9, 4, 3), -2), {}
    yield aten.diagflat.default, (r(2, 2),), {}
    yield aten.diagflat.default, (torch.tensor(3.0), 1), {}
    yield aten.diagflat.default, (i(0, 9, 3), -1), {}
    yield aten.view_as.default, (r(2, 6), r(3, 4)), {}
    yield aten.reshape_as.default, (r(4, 3).t(), r(12)), {}
    yield aten.narrow.Tensor, (r(5, 3), 0, torch.tensor(1), 3), {}
    yield aten.narrow.Tensor, (r(3, 6), 1, torch.tensor(-4, dtype=torch.int32), 2), {}
    yield aten.fliplr.default, (r(3, 4, 2),), {}
    yield aten.flipud.default, (i(0, 9, 5),), {}
    yield aten.tile.default, (r(2, 3), [2]), {}
    yield aten.tile.default, (r(2), [2, 3]), {}
    yield aten.tile.default, (b(2, 2), [1, 2]), {}
    yield aten.broadcast_tensors.default, ([r(2, 1), r(3), torch.tensor(1)],), {}
    # splits and joins
    yield aten.split.default, (r(5, 2), [2, 3]), {}
    yield aten.split.sizes, (r(2, 5), [1, 4], 1), {}
    yield aten.split_copy.Tensor, (r(7), 3), {}
    yield aten.unsafe_chunk.default, (r(7, 2), 3), {}
    yield aten.unsafe_split_with_sizes.default, (r(4, 6), [1, 2, 3], -1), {}
    yield aten.concat.default, ([r(2, 3), r(1, 3)],), {}
    yield aten.concatenate.default, ([r(2, 3), i(0, 9, 2, 2)], 1), {}
    yield aten._stack.default, ([r(3), r(3)], 1), {}
    yield aten.row_stack.default, ([r(3), r(2, 3)],), {}
    yield aten.ger.default, (r(3), r(4)), {}
    # reductions and sorts
    yield aten.special_logsumexp.default, (r(3, 4), [1]), {}
    yield aten._logcumsumexp.default, (r(3, 4), 0), {}
    yield aten._aminmax.default, (r(3, 4),), {}
    yield aten._aminmax.dim, (i(0, 9, 3, 4), 1, True), {}
    yield aten.norm.Scalar, (r(3, 4),), {}
    yield aten.norm.Scalar, (r(3, 4), 1), {}
    yield aten.argsort.default, (r(3, 5),), {}
    yield aten.argsort.default, (i(0, 4, 6), 0, True), {}
    yield aten.argsort.stable, (i(0, 3, 8),), {"stable": True}
    yield aten.msort.default, (r(4, 3),), {}
    # factories
    yield aten.arange.start, (2, 9), {}
    yield aten.arange.start, (0.5, 4.0), {"dtype": torch.float64}
    # (empty values are arbitrary: only empty results are compared)
    for shape in ([0], [0, 3], [2, 0], [0, 1, 2], [3, 0, 0]):
        yield aten.new_empty.default, (r(2), shape), {}
        yield aten.new_empty.default, (i(0, 9, 2), shape), {"dtype": torch.float16}
        yield aten.empty_like.default, (r(*shape),), {}
        yield aten.empty_like.default, (r(*shape),), {"dtype": torch.int32}
    yield aten._efficientzerotensor.default, ([2, 3],), {}
    # dtype conversions
    yield aten._cast_Byte.default, (i(0, 200, 5),), {}
    yield aten._cast_Char.default, (i(-9, 9, 5),), {}
    yield aten._cast_Short.default, (r(4) * 100,), {}
    yield aten._cast_Int.default, (r(4) * 100,), {}
    yield aten._cast_Long.default, (b(4),), {}
    yield aten._cast_Half.default, (r(4),), {}
    yield aten._cast_Float.default, (d(4),), {}
    yield aten._cast_Double.default, (h(4),), {}
    # indexing
    yield aten._unsafe_index.Tensor, (r(4, 5), [i(0, 4, 3), None]), {}
    yield aten._unsafe_index.Tensor, (r(4, 5), [None, i(0, 5, 2, 2)]), {}
    yield aten._unsafe_index.Tensor_hacked_twin, (r(4, 5), [i(0, 4, 3), i(0, 5, 3)]), {}
    yield aten.index.Tensor_hacked_twin, (r(4, 5), [i(0, 4, 2)]), {}
    yield aten._unsafe_index_put.default, (r(5), [torch.tensor([0, 2, 2])], r(3), True), {}
    yield aten._unsafe_index_put.hacked_twin, (r(4, 3), [torch.tensor([1, 3])], r(2, 3)), {}
    yield aten.index_put.hacked_twin, (r(4, 3), [torch.tensor([0, 1]), torch.tensor([2, 2])], r(2), True), {}
    yield aten._index_put_impl.default, (r(5), [torch.tensor([4, 0])], r(2)), {}
    yield aten.argwhere.default, (r(3, 4) > 0,), {}
    # metadata and scalars
    yield aten.item.default, (torch.tensor([2.5]),), {}
    yield aten.item.default, (torch.tensor(7),), {}
    yield aten.ScalarImplicit.default, (torch.tensor(1.25),), {}
    yield aten.numel.default, (r(2, 3),), {}
    yield aten.size.int, (r(2, 3), -1), {}
    yield aten.stride.int, (r(2, 3, 4), 0), {}
    yield aten.storage_offset.default, (r(3),), {}
    yield aten.is_contiguous.default, (r(3, 2),), {}
    yield aten.argwhere.default, (i(0, 3, 3, 4),), {}
    yield aten.argwhere.default, (torch.tensor(2.0),), {}
    yield aten.nonzero_numpy.default, (r(3, 4) > 0,), {}
    yield aten.nonzero_numpy.default, (torch.tensor(1.0),), {}
    # joins
    yield aten.column_stack.default, ([r(3), r(3, 2), torch.arange(3)],), {}
    yield aten.column_stack.default, ([torch.tensor(1.0), torch.tensor(2.0)],), {}
    yield aten.dstack.default, ([r(3), r(3)],), {}
    yield aten.dstack.default, ([r(2, 3), r(2, 3, 2)],), {}
    yield aten.meshgrid.default, ([r(3), r(2)],), {}
    yield aten.meshgrid.indexing, ([r(3), r(2), torch.tensor(1.0)],), {"indexing": "xy"}
    yield aten.meshgrid.indexing, ([i(0, 9, 4)],), {"indexing": "ij"}
    yield aten.cartesian_prod.default, ([r(3), r(2)],), {}
    yield aten.cartesian_prod.default, ([i(0, 9, 2), i(0, 9, 3), i(0, 9, 2)],), {}
    yield aten.cartesian_prod.default, ([r(4)],), {}
    yield aten.combinations.default, (r(4),), {}
    yield aten.combinations.default, (r(4), 3, True), {}
    yield aten.combinations.default, (i(0, 9, 5), 1), {}
    yield aten.combinations.default, (r(2), 3), {}
    yield aten.combinations.default, (r(3), 0), {}
    yield aten.pad_sequence.default, ([r(2, 3), r(4, 3), r(1, 3)],), {}
    yield aten.pad_sequence.default, ([r(2), r(4)], True, 1.5, "left"), {}
    yield aten.pad_sequence.default, ([torch.tensor([1, 2]), torch.tensor([3])], True, 0.5), {}
    # products
    yield aten.outer.default, (r(3), r(4)), {}
    yield aten.outer.default, (i(0, 9, 3), r(2)), {}
    yield aten.kron.default, (r(2, 3), r(3, 2)), {}
    yield aten.kron.default, (r(3), i(0, 9, 2, 2)), {}
    yield aten.kron.default, (torch.tensor(2.0), r(2)), {}
    yield aten.tensordot.default, (r(3, 4, 5), r(4, 3, 2), [0, 1], [1, 0]), {}
    yield aten.tensordot.default, (r(3, 2), r(1, 2), [0], [0]), {}
    yield aten.tensordot.default, (r(1, 2), r(3, 2), [0, 1], [0, 1]), {}
    yield aten.tensordot.default, (d(2, 3), d(4), [], []), {}
    yield aten.inner.default, (r(2, 3), r(4, 3)), {}
    yield aten.inner.default, (r(3), torch.tensor(2.0)), {}
    yield aten.inner.default, (i(0, 9, 3), i(0, 9, 3)), {}
    # reductions made of others
    yield aten.var.default, (r(3, 4),), {}
    yield aten.var.default, (h(5), False), {}
    yield aten.std.default, (r(2, 3, 4),), {}
    yield aten.std.default, (r(1), True), {}
    yield aten.std.dim, (r(3, 4), [1]), {}
    yield aten.std.dim, (h(3, 4, 2), [0, 2], False, True), {}
    yield aten.var_mean.default, (r(4, 3),), {}
    yield aten.std_mean.default, (r(6), False), {}
    yield aten.var_mean.dim, (r(3, 4), [0], True, True), {}
    yield aten.std_mean.dim, (r(3, 4), None), {}
    yield aten.norm.ScalarOpt_dtype, (r(3, 4), None), {"dtype": torch.float64}
    yield aten.norm.ScalarOpt_dtype, (h(5), 3), {"dtype": torch.float32}
    yield aten.norm.ScalarOpt_dim_dtype, (r(3, 4), 1, [1], True), {"dtype": torch.float64}
    yield aten.norm.ScalarOpt_dim_dtype, (h(3, 4), float("inf"), [0], False), {"dtype": torch.float32}
    yield aten.frobenius_norm.dim, (r(3, 4, 2), [0, 2]), {}
    yield aten.frobenius_norm.dim, (h(3, 4), [1], True), {}
    x = r(3, 4)
    x[0, 1] = float("nan")
    x[2] = float("nan")
    yield aten.nanmean.default, (x,), {}
    yield aten.nanmean.default, (x, [1]), {}
    yield aten.nanmean.default, (x.half(), [0], True), {}
    yield aten.sum_to_size.default, (r(2, 3, 4), [3, 1]), {}
    yield aten.sum_to_size.default, (i(0, 9, 2, 3), [1, 3]), {}
    yield aten.sum_to_size.default, (r(2, 3), [2, 3]), {}
    yield aten.sum_to_size.default, (h(4, 1, 3), [1]), {}
    yield aten._is_all_true.default, (torch.rand(3, 4) > 0.1,), {}
    yield aten._is_all_true.default, (torch.ones(3, dtype=torch.bool),), {}
    yield aten._is_any_true.default, (torch.rand(3, 4) > 0.9,), {}
    yield aten._is_any_true.default, (torch.zeros(0, dtype=torch.bool),), {}
    # factories
    yield aten.range.default, (1, 4), {}
    yield aten.range.step, (1, 2, 0.3), {}
    yield aten.range.step, (1, 10, 3), {"dtype": torch.int64}
    yield aten.range.step, (5, 1, -1.5), {}
    yield aten.range.step, (0.5, 3.7, 0.25), {"dtype": torch.float16}
    yield aten.range.step, (-2.7, 3.2, 1.9), {"dtype": torch.int32}
    yield aten.range.step, (0.1, 1.0, 0.1), {"dtype": torch.float64}
    yield aten.tensor.float, (2.5,), {}
    yield aten.tensor.float, (2.5,), {"dtype": torch.int64}
    yield aten.tensor.int, (3,), {}
    yield aten.tensor.int, (3,), {"dtype": torch.float16}
    yield aten.tensor.bool, (True,), {}
    yield aten.as_tensor.float, (-1.5,), {}
    yield aten.as_tensor.int, (7,), {"dtype": torch.float64}
    yield aten.as_tensor.bool, (False,), {}
    yield aten.as_tensor.default, (i(0, 9, 3),), {"dtype": torch.float32}
    yield aten.as_tensor.default, (r(3),), {}
    yield aten.fill.Tensor, (r(2, 3), torch.tensor(3)), {}
    yield aten.fill.Tensor, (i(0, 9, 4), torch.tensor(2.7)), {}
    yield aten.fill.Tensor, (h(2), torch.tensor(1.1, dtype=torch.float64)), {}
    for shape in ([0], [0, 3], [2, 0, 1], [0, 0], [1, 0], [0, 2, 2]):
        yield aten.empty_permuted.default, (shape, list(range(len(shape)))[::-1]), {}
        yield aten.new_empty_strided.default, (r(2), shape, [1] * len(shape)), {}
    yield aten._dim_arange.default, (r(2, 5), 1), {}
    yield aten._dim_arange.default, (r(3), -1), {}
    yield aten._shape_as_tensor.default, (r(2, 5, 1),), {}
    yield aten._shape_as_tensor.default, (torch.tensor(1.0),), {}
    # conversions
    yield aten.to.other, (r(3), i(0, 9, 2)), {}
    yield aten.to.other, (r(3), r(2)), {"copy": True}
    yield aten.to.prim_dtype, (r(3), 4), {}
    yield aten.to.prim_dtype, (r(3), None), {}
    yield aten.to.prim_dtype, (i(0, 9, 3), 5), {}
    yield aten.to.prim_Device, (r(3), "cpu", 7), {}
    yield aten.to.prim_other, (r(3),), {}
    yield aten._autocast_to_reduced_precision.default, (r(3), False, True, torch.float16, torch.bfloat16), {}
    yield aten._autocast_to_reduced_precision.default, (d(3), False, True, torch.float16, torch.float16), {}
    yield aten._autocast_to_reduced_precision.default, (r(3), True, False, torch.float16, torch.float16), {}
    yield aten._autocast_to_full_precision.default, (h(3), False, True), {}
    yield aten._autocast_to_full_precision.default, (h(3), True, False), {}
    yield aten._to_cpu.default, ([r(2), i(0, 9, 3)],), {}
    yield aten.cpu.default, (r(2),), {}
    yield aten.data.default, (r(2),), {}
    # metadata and numbers
    yield aten.dim.default, (r(2, 3),), {}
    yield aten.element_size.default, (h(2),), {}
    yield aten.is_complex.default, (r(2),), {}
    yield aten.is_floating_point.default, (r(2),), {}
    yield aten.is_floating_point.default, (i(0, 3, 2),), {}
    yield aten.is_signed.default, (torch.tensor([1], dtype=torch.uint8),), {}
    yield aten.is_signed.default, (i(0, 3, 2),), {}
    yield aten.is_conj.default, (r(2),), {}
    yield aten.is_neg.default, (r(2),), {}
    yield aten.is_inference.default, (r(2),), {}
    yield aten.is_same_size.default, (r(2, 3), r(2, 3)), {}
    yield aten.is_same_size.default, (r(2, 3), r(3, 2)), {}
    yield aten.Int.Tensor, (torch.tensor(2.7),), {}
    yield aten.Int.Tensor, (torch.tensor([-2.7]),), {}
    yield aten.Int.Tensor, (torch.tensor(True),), {}
    yield aten.Float.Tensor, (torch.tensor(2),), {}
    yield aten.Bool.Tensor, (torch.tensor(0.5),), {}
    yield aten.Bool.Tensor, (torch.tensor([0]),), {}
    yield aten.is_nonzero.default, (torch.tensor([0.0]),), {}
    yield aten.is_nonzero.default, (torch.tensor(float("nan")),), {}
    yield aten.IntImplicit.default, (torch.tensor(2),), {}
    yield aten.FloatImplicit.default, (torch.tensor(2),), {}
    yield aten.FloatImplicit.default, (torch.tensor(2.5, dtype=torch.float16),), {}
    yield aten.ScalarImplicit.default, (torch.tensor(1.25),), {}
    yield aten.ScalarImplicit.default, (torch.tensor(3),), {}
    # searching, isin, gathering
    yield aten.isin.Scalar_Tensor, (2, torch.tensor([1, 2])), {}
    yield aten.isin.Scalar_Tensor, (2.5, torch.tensor([1.5, 2.5])), {"invert": True}
    yield aten.isin.Tensor_Scalar, (torch.tensor([1, 2, 3]), 2.0), {}
    yield aten.isin.Tensor_Scalar, (r(3, 2), 0.5), {"invert": True}
    yield aten.bucketize.Scalar, (2, torch.tensor([1, 2, 3])), {}
    yield aten.bucketize.Scalar, (2.5, torch.tensor([1, 2, 3])), {"out_int32": True, "right": True}
    yield aten.bucketize.Scalar, (0.1, torch.tensor([0.05, 0.1, 0.2])), {"right": True}
    yield aten.searchsorted.Scalar, (torch.tensor([1.0, 2, 3]), 2), {}
    yield aten.searchsorted.Scalar, (torch.tensor([1, 2, 3]), 2.5), {"side": "right"}
    yield aten.searchsorted.Scalar, (torch.tensor([3.0, 1, 2]), 1.5), {"sorter": torch.tensor([1, 2, 0])}
    yield aten.take_along_dim.default, (r(3, 4), torch.tensor([[0], [1], [2]]), 1), {}
    yield aten.take_along_dim.default, (r(3, 4), torch.tensor([0, 5])), {}
    yield aten.take_along_dim.default, (r(3, 1, 2), torch.tensor([[[0, 1]], [[1, 0]]]), 2), {}
    yield aten.take_along_dim.default, (r(3, 4), torch.tensor([[2, 0, 1]]).t(), 0), {}
    yield aten.scatter.value_reduce, (torch.ones(3, 3), 0, torch.tensor([[0, 1], [2, 0]]), 2.0), {"reduce": "multiply"}
    yield aten.scatter.value_reduce, (torch.ones(3, 3, dtype=torch.long), 0, torch.tensor([[0, 1], [2, 0]]), 2.5), {"reduce": "add"}
    yield aten.scatter.value_reduce, (r(2, 4), 1, torch.tensor([[3], [0]]), -1.5), {"reduce": "add"}
    # unique along a dim, _unique
    u = torch.tensor([[1, 2], [0, 5], [1, 2], [0, 1]])
    yield aten.unique_dim.default, (u, 0), {}
    yield aten.unique_dim.default, (u, 0, False, True, True), {}
    yield aten.unique_dim.default, (u.t().float(), 1), {}
    yield aten.unique_dim.default, (i(0, 2, 5, 2), 0), {}
    yield aten.unique_dim_consecutive.default, (torch.tensor([[1, 2], [1, 2], [0, 1], [1, 2]]), 0), {}
    yield aten.unique_dim_consecutive.default, (torch.tensor([[1, 1, 0], [2, 2, 1]]), 1, True, True), {}
    yield aten._unique.default, (torch.tensor([3, 1, 3]),), {}
    yield aten._unique.default, (torch.tensor([3.5, 1.0, 3.5, -2.0]), False, True), {}
    # more metadata, runtime assertions
    yield aten.get_device.default, (r(2),), {}
    yield aten.is_pinned.default, (r(2),), {}
    yield aten.is_distributed.default, (r(2),), {}
    yield aten.is_non_overlapping_and_dense.default, (r(2, 3),), {}
    yield aten.len.Tensor, (r(3, 2),), {}
    yield aten.size.default, (r(2, 3),), {}
    yield aten.sym_size.default, (r(4),), {}
    yield aten.stride.default, (r(2, 3, 4),), {}
    yield aten.sym_stride.default, (r(2, 3),), {}
    yield aten._assert_async.default, (torch.tensor(True),), {}
    yield aten._assert_async.msg, (torch.tensor([2.5]), "must hold"), {}
    yield aten._functional_assert_async.msg, (torch.tensor(1), "must hold", r(0)), {}
    yield aten._functional_assert_scalar.default, (True, "must hold", r(0)), {}
    yield aten._functional_sym_constrain_range.default, (3, 0, 5, r(0)), {}
    yield aten._functional_sym_constrain_range_for_size.default, (3, None, None, r(0)), {}
    # flattening lists of tensors
    yield aten.flatten_dense_tensors.default, ([r(2, 2), r(3)],), {}
    yield aten.flatten_dense_tensors.default, ([r(2, 3)],), {}
    yield aten.flatten_dense_tensors.default, ([i(0, 9, 2), r(0), d(1, 2)],), {}
    yield aten.unflatten_dense_tensors.default, (torch.arange(7.0), [r(2, 2), r(3)]), {}
    yield aten.unflatten_dense_tensors.default, (torch.arange(5), [r(2, 0), r(5), r(0)]), {}
    # the trapezoid rule
    yield aten.trapezoid.x, (r(3, 4), torch.tensor([0.0, 1.0, 3.0, 4.5])), {}
    yield aten.trapezoid.x, (r(3, 4), r(3, 4), ), {"dim": 0}
    yield aten.trapezoid.x, (torch.tensor([1, 2, 4]), torch.tensor([0, 1, 3])), {}
    yield aten.trapezoid.x, (h(2, 5), r(5)), {}
    yield aten.trapezoid.x, (r(2, 3, 4), r(3, 4)), {"dim": 1}
    yield aten.trapezoid.dx, (r(3, 4),), {}
    yield aten.trapezoid.dx, (r(3, 4),), {"dx": 0.5, "dim": 0}
    yield aten.trapezoid.dx, (torch.tensor([1, 2, 4]),), {"dx": 2}
    yield aten.trapezoid.dx, (h(4, 3),), {"dx": 3, "dim": 0}
    yield aten.trapezoid.dx, (torch.zeros(2, 0, dtype=torch.long),), {"dim": 1}
    yield aten.trapz.x, (r(2, 4), r(4)), {}
    yield aten.trapz.dx, (r(2, 4),), {"dx": 0.25}
    yield aten.trapz.dx, (i(0, 9, 5),), {}
    yield aten.cumulative_trapezoid.x, (r(3, 4), torch.tensor([0.0, 1.0, 3.0, 4.5])), {}
    yield aten.cumulative_trapezoid.x, (torch.tensor([1, 2, 4]), torch.tensor([0, 1, 3])), {}
    yield aten.cumulative_trapezoid.x, (r(3, 4), r(3, 4)), {"dim": 0}
    yield aten.cumulative_trapezoid.dx, (r(3, 4),), {}
    yield aten.cumulative_trapezoid.dx, (torch.tensor([1, 2, 4]),), {"dx": 3}
    yield aten.cumulative_trapezoid.dx, (h(2, 4),), {"dx": 0.5, "dim": 1}
    yield aten.cumulative_trapezoid.dx, (r(2, 0),), {"dim": 1}
    # one_hot
    yield aten.one_hot.default, (torch.tensor([0, 2, 1]),), {}
    yield aten.one_hot.default, (torch.tensor([[0, 3], [1, 1]]), 5), {}
    yield aten.one_hot.default, (torch.tensor(2), 3), {}
    yield aten.one_hot.default, (torch.tensor([], dtype=torch.long), 4), {}
