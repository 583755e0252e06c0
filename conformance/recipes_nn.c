/*
 * conformance/recipes_nn.c: the recipes of the convolution, pooling, normalization, losses, padding, upsampling and
 * embedding ops (recipes.h gives the language).
 */
#include "conformance/recipes.h"

#include <stddef.h>

const conform_recipe conform_recipes_nn[] = {
    /* ---- dropout ---- */
    /* nondeterministic: only shapes and dtypes compare, except p=0 or train off */
    {"aten.native_dropout.default", "T[S] {0.0|0.5|1.0} {true|false|None}"},

    /* ---- convolution ---- */
    /* weight: (C_out, C_in/groups, k...); transposed: (C_in, C_out/groups, k...) */
    {"aten.convolution.default",
     "T[2,4,6,5] T[6,2,3,3] {T[6]|None} {[1,1]|[2,1]} {[0,0]|[1,2]} {[1,1]|[2,1]} false [0,0] 2"},
    {"aten.convolution.default", "T[2,4,5] T[4,3,3] {T[6]|None} [2] [1] {[1]|[2]} true {[0]|[1]} 2"},
    {"aten.convolution.default", "T[1,2,3,4,4] T[3,2,2,2,2] T[3] [1,1,1] [1,0,1] [1,1,1] false [0,0,0] 1"},
    {"aten.conv2d.default", "T[2,4,6,5] T[6,2,3,3] {T[6]|None} {[1,1]|[2,1]} {[0,0]|[1,2]} {[1,1]|[2,1]} 2"},
    {"aten.conv2d.default", "T[3,5,5] T[2,3,2,2]"},
    /* grad_output has the forward's output shape: 6x5, k3, stride 1 -> 4x3 */
    {"aten.convolution_backward.default",
     "T[2,6,4,3] T[2,4,6,5] T[6,2,3,3] {[6]|None} [1,1] [0,0] [1,1] false [0,0] 2 "
     "{[true,true,true]|[true,false,false]|[false,true,true]}"},
    /* transposed 1d: (5-1)*2 - 2*1 + (3-1) + 1 + 1 = 10 */
    {"aten.convolution_backward.default",
     "T[2,6,10] T[2,4,5] T[4,3,3] [6] [2] [1] [1] true [1] 2 [true,true,true]"},

    /* ---- embedding bags ---- */
    /* offsets must be sorted from 0: all zeros is the only sorted draw (one
     * bag with every index, or leading empty bags). With include_last_offset
     * the last offset must be len(indices), so those rows have no indices. */
    {"aten._embedding_bag.default", "T[10,5] idx10:i64[8] idx0-1:i64[{1|3}] false {0|1|2} false None false {-1|2}"},
    {"aten._embedding_bag.default", "T[10,5] idx10:i64[8] idx0-1:i64[2] false 0 false T[8] false {-1|2}"},
    {"aten._embedding_bag.default", "T[10,5] i64[0] idx0-1:i64[3] false {0|1|2} false None true"},
    {"aten._embedding_bag_forward_only.default",
     "T[10,5] idx10:i64[8] idx0-1:i64[{1|3}] false {0|1|2} false None false {-1|2}"},
    {"aten._embedding_bag_forward_only.default", "T[10,5] idx10:i64[8] idx0-1:i64[2] false 0 false T[8]"},
    {"aten._embedding_bag_forward_only.default", "T[10,5] i64[0] idx0-1:i64[3] false {0|1|2} false None true"},
    {"aten.embedding_bag.default", "T[10,5] idx10:i64[8] idx0-1:i64[{1|3}] false {0|1|2} false None false"},
    {"aten.embedding_bag.default", "T[10,5] idx10:i64[8] idx0-1:i64[2] false 0 false T[8]"},
    {"aten.embedding_bag.default", "T[10,5] i64[0] idx0-1:i64[3] false {0|1|2} false None true"},

    /* ---- grid sampling ---- */
    /* interpolation: bilinear, nearest, bicubic; padding: zeros, border, reflection */
    {"aten.grid_sampler_2d.default", "T[2,3,5,4] T[2,4,3,2] {0|1|2} {0|1|2} {false|true}"},
    {"aten.grid_sampler_3d.default", "T[1,2,3,4,4] T[1,2,3,2,3] {0|1} {0|1|2} {false|true}"},

    /* ---- normalization ---- */
    {"aten.native_group_norm.default", "T[2,6,4] {T[6]|None} {T[6]|None} 2 6 4 {1|2|3|6} 1e-5"},
    {"aten.native_group_norm.default", "T[2,4,3,3] T[4] T[4] 2 4 9 2 0.5"},
    {"aten.native_group_norm_backward.default",
     "T[2,6,4] T[2,6,4] T[2,3] pos:T[2,3] {T[6]|None} 2 6 4 3 "
     "{[true,true,true]|[true,false,false]|[false,true,true]}"},
    {"aten.native_layer_norm.default", "T[3,4,5] [5] {T[5]|None} {T[5]|None} 1e-5"},
    {"aten.native_layer_norm.default", "T[3,4,5] [4,5] T[4,5] T[4,5] 0.5"},
    {"aten.native_layer_norm_backward.default",
     "T[3,4,5] T[3,4,5] [5] T[3,4,1] pos:T[3,4,1] {T[5]|None} {T[5]|None} "
     "{[true,true,true]|[true,false,false]|[false,true,true]}"},
    {"aten.layer_norm.default", "T[3,4,5] [5] {T[5]|None} {T[5]|None} {1e-5|0.5}"},
    {"aten.layer_norm.default", "T[3,4,5] [4,5] T[4,5] T[4,5]"},
    {"aten._native_batch_norm_legit.default",
     "T[4,3,5] {T[3]|None} {T[3]|None} T[3] pos:T[3] {true|false} 0.1 1e-5"},
    {"aten._native_batch_norm_legit.default", "T[2,3,2,2] T[3] T[3] T[3] pos:T[3] true 0.5 0.5"},
    {"aten._native_batch_norm_legit_no_training.default",
     "T[4,3,5] {T[3]|None} {T[3]|None} T[3] pos:T[3] 0.1 {1e-5|0.5}"},
    {"aten._native_batch_norm_legit.no_stats", "T[4,3,5] {T[3]|None} {T[3]|None} true 0.1 {1e-5|0.5}"},
    {"aten._batch_norm_with_update.default", "T[4,3,5] {T[3]|None} {T[3]|None} T[3] pos:T[3] 0.1 1e-5"},
    {"aten._batch_norm_with_update.default", "T[2,3,2,2] T[3] T[3] T[3] pos:T[3] 0.5 0.5"},
    {"aten.native_batch_norm.default",
     "T[4,3,5] {T[3]|None} {T[3]|None} T[3] pos:T[3] {true|false} 0.1 1e-5"},
    {"aten.native_batch_norm.default", "T[2,3,2,2] T[3] T[3] None None true 0.1 1e-5"},
    {"aten.batch_norm.default",
     "T[4,3,5] {T[3]|None} {T[3]|None} T[3] pos:T[3] {true|false} 0.1 1e-5 false"},
    {"aten.batch_norm.default", "T[2,3,2,2] T[3] T[3] None None true 0.1 1e-5 false"},
    {"aten.instance_norm.default", "T[2,3,5] {T[3]|None} {T[3]|None} None None true 0.1 1e-5 false"},
    /* with use_input_stats and running stats, instance_norm updates them in
     * place, which ref declines */
    {"aten.instance_norm.default", "T[2,3,2,2] T[3] T[3] T[3] pos:T[3] false 0.1 1e-5 false"},

    /* ---- distances and norms ---- */
    {"aten._cdist_forward.default", "T[2,4,3] T[2,5,3] {0.0|1.0|2.0|3.5|inf} {None|1|2}"},
    {"aten._cdist_forward.default", "T[4,3] T[1,6,3] 2.0 None"},
    {"aten.norm.ScalarOpt_dim", "T[3,4,5] {None|0|1|3.5|inf} {[1]|[0,-1]} {false|true}"},
    {"aten.norm.ScalarOpt_dim", "T[256,260] 2 [1]"},

    /* ---- pooling ---- */
    /* adaptive: input sizes not multiples of the output's */
    {"aten._adaptive_avg_pool2d.default", "T[2,3,7,9] {[3,4]|[1,1]|[7,9]|[4,5]}"},
    {"aten._adaptive_avg_pool2d.default", "T[3,6,6] [4,3]"},
    {"aten.adaptive_avg_pool2d.default", "T[2,3,7,9] {[3,4]|[1,1]|[7,9]}"},
    {"aten.adaptive_avg_pool2d.default", "T[3,6,6] [4,3]"},
    {"aten._adaptive_avg_pool2d_backward.default", "T[2,3,3,4] T[2,3,7,9]"},
    {"aten._adaptive_avg_pool2d_backward.default", "T[3,4,3] T[3,6,6]"},
    {"aten._adaptive_avg_pool3d.default", "T[2,2,4,5,6] {[2,3,4]|[1,1,1]|[3,3,5]}"},
    {"aten._adaptive_avg_pool3d.default", "T[2,5,4,3] [2,2,2]"},
    {"aten.adaptive_max_pool2d.default", "T[2,3,7,9] {[3,4]|[1,1]|[7,9]}"},
    {"aten.adaptive_max_pool2d.default", "T[3,6,6] [4,3]"},
    {"aten.adaptive_max_pool3d.default", "T[2,2,4,5,6] {[2,3,4]|[1,1,1]}"},
    {"aten.adaptive_max_pool3d.default", "T[2,5,4,3] [2,2,2]"},
    {"aten.avg_pool2d.default", "T[2,3,7,8] [3,2] [2,1] {[0,0]|[1,1]} {false|true} {false|true}"},
    {"aten.avg_pool2d.default", "T[3,6,6] [2,2] divisor_override={None|3}"},
    /* out: H (7+2-3)/2+1 = 4, W (8+2-2)/1+1 = 9, ceil or not */
    {"aten.avg_pool2d_backward.default",
     "T[2,3,4,9] T[2,3,7,8] [3,2] [2,1] [1,1] {false|true} {false|true} {None|2}"},
    {"aten.avg_pool3d.default", "T[2,2,5,6,7] [3,2,2] [2,1,2] {[0,0,0]|[1,1,1]} {false|true} {false|true}"},
    {"aten.avg_pool3d.default", "T[2,4,4,4] [2,2,2] divisor_override={None|3}"},
    {"aten.max_pool2d_with_indices.default",
     "T[2,3,7,8] [3,2] {[]|[2,1]} {[0,0]|[1,1]} {[1,1]|[2,1]} {false|true}"},
    {"aten.max_pool2d_with_indices.default", "T[3,5,5] [2,2]"},
    {"aten.max_pool2d.default", "T[2,3,7,8] [3,2] {[]|[2,1]} {[0,0]|[1,1]} {[1,1]|[2,1]} {false|true}"},
    {"aten.max_pool2d.default", "T[3,5,5] [2,2]"},
    /* indices: positions in the 7x8 input plane */
    {"aten.max_pool2d_with_indices_backward.default",
     "T[2,3,4,9] T[2,3,7,8] [3,2] [2,1] [1,1] [1,1] {false|true} idx56:i64[2,3,4,9]"},
    {"aten.max_pool3d_with_indices.default",
     "T[2,2,5,6,7] [3,2,2] {[]|[2,1,2]} {[0,0,0]|[1,1,1]} {[1,1,1]|[2,1,1]} {false|true}"},
    {"aten.max_pool3d_with_indices.default", "T[2,4,4,4] [2,2,2]"},
    /* random_samples: in [0, 1), (N, C, spatial dims) */
    {"aten.fractional_max_pool2d.default", "T[2,3,9,8] [3,2] {[4,4]|[2,3]|[7,7]} prob:T[2,3,2]"},
    {"aten.fractional_max_pool2d.default", "T[3,6,6] [2,2] [3,4] prob:T[1,3,2]"},
    {"aten.fractional_max_pool3d.default", "T[2,3,5,5,6] [2,2,3] {[2,3,2]|[4,4,4]} prob:T[2,3,3]"},
    {"aten.fractional_max_pool3d.default", "T[2,5,4,4] [2,2,2] [2,3,2] prob:T[1,2,3]"},
    /* one element per plane: indices never collide */
    {"aten.max_unpool2d.default", "T[2,3,1,1] idx20:i64[2,3,1,1] [4,5]"},
    {"aten.max_unpool2d.default", "T[3,1,1] idx12:i64[3,1,1] [3,4]"},
    {"aten.max_unpool3d.default", "T[2,2,1,1,1] idx60:i64[2,2,1,1,1] [3,4,5] [2,2,2] [0,0,0]"},
    {"aten.max_unpool3d.default", "T[3,1,1,1] idx24:i64[3,1,1,1] [2,3,4] [2,2,2] [1,1,1]"},

    /* ---- padding ---- */
    {"aten.constant_pad_nd.default", "T[2,3,4] {[1,2]|[1,0,-1,2]|[0,0,1,1,2,0]} {0|2}"},
    {"aten.pad.default", "T[2,3,4] {[1,2]|[1,-1,2,0]} 'constant' {None|2.5}"},
    /* reflect, replicate, circular: 2k pads for an input of rank k+1 or k+2 */
    {"aten.pad.default", "T[2,3,5] {[1,2]|[2,0]} {'reflect'|'replicate'|'circular'}"},
    {"aten.pad.default", "T[2,3,4,5] {[1,2,0,1]|[1,1,2,0,1,1]} {'reflect'|'replicate'|'circular'}"},
    {"aten.reflection_pad1d.default", "T[2,3,6] {[2,3]|[0,5]|[-1,2]}"},
    {"aten.reflection_pad1d.default", "T[3,6] [1,1]"},
    {"aten.reflection_pad2d.default", "T[2,3,4,5] {[1,2,3,0]|[4,4,3,3]|[-1,2,1,-1]}"},
    {"aten.reflection_pad2d.default", "T[3,4,5] [1,1,1,1]"},
    {"aten.reflection_pad3d.default", "T[1,2,3,4,5] {[1,2,0,3,2,1]|[4,4,3,3,2,2]}"},
    {"aten.reflection_pad3d.default", "T[2,3,4,5] [2,2,1,1,1,0]"},
    {"aten.replication_pad1d.default", "T[2,3,6] {[2,3]|[0,7]|[-1,2]}"},
    {"aten.replication_pad1d.default", "T[3,6] [1,1]"},
    {"aten.replication_pad2d.default", "T[2,3,4,5] {[1,2,3,0]|[6,4,5,3]|[-1,2,1,-1]}"},
    {"aten.replication_pad2d.default", "T[3,4,5] [1,1,1,1]"},
    {"aten.replication_pad3d.default", "T[1,2,3,4,5] {[1,2,0,3,2,1]|[6,4,5,3,4,4]|[-1,1,0,-1,1,0]}"},
    {"aten.replication_pad3d.default", "T[2,3,4,5] [2,2,1,1,1,0]"},

    /* ---- upsampling ---- */
    {"aten.upsample_nearest1d.default", "T[2,3,5] {[3]|[8]|[10]}"},
    {"aten.upsample_nearest1d.default", "T[2,3,5] [11] 2.3"},
    {"aten._upsample_nearest_exact1d.default", "T[2,3,5] {[3]|[8]|[10]}"},
    {"aten._upsample_nearest_exact1d.default", "T[2,3,5] [11] 2.3"},
    {"aten.upsample_nearest2d.default", "T[2,3,4,5] {[3,4]|[7,9]|[8,10]}"},
    {"aten.upsample_nearest2d.default", "T[2,3,4,5] [9,11] 2.3 2.1"},
    {"aten.upsample_nearest2d.vec", "T[2,3,4,5] {[3,4]|[7,9]} None"},
    {"aten.upsample_nearest2d.vec", "T[2,3,4,5] None {[2.0,1.5]|[0.5,0.7]}"},
    {"aten.upsample_linear1d.default", "T[2,3,5] {[3]|[8]|[1]} {false|true}"},
    {"aten.upsample_linear1d.default", "T[2,3,5] [11] false 2.3"},
    {"aten.upsample_bilinear2d.default", "T[2,3,4,5] {[3,4]|[7,9]|[1,1]} {false|true}"},
    {"aten.upsample_bilinear2d.default", "T[2,3,4,5] [9,11] false 2.3 2.1"},
    {"aten.upsample_bilinear2d.vec", "T[2,3,4,5] {[3,4]|[7,9]} {false|true} None"},
    {"aten.upsample_bilinear2d.vec", "T[2,3,4,5] None {false|true} {[2.0,1.5]|[0.5,0.7]}"},
    {"aten._upsample_bilinear2d_aa.default", "T[2,3,6,8] {[3,4]|[9,10]|[2,11]} {false|true}"},
    {"aten._upsample_bilinear2d_aa.default", "T[2,3,6,8] [3,3] false 0.5 0.4"},
    {"aten.upsample_bicubic2d.default", "T[2,3,4,5] {[3,4]|[7,9]|[1,1]} {false|true}"},
    {"aten.upsample_bicubic2d.default", "T[2,3,4,5] [9,11] false 2.3 2.1"},
    {"aten.upsample_trilinear3d.default", "T[2,2,3,4,5] {[2,3,4]|[5,6,7]} {false|true}"},
    {"aten.upsample_trilinear3d.default", "T[1,2,3,4,5] [6,9,11] false 2.0 2.3 2.1"},

    /* ---- folding and shuffling ---- */
    /* col2im input: (N, C*kh*kw, L), L the number of blocks of output_size */
    {"aten.col2im.default", "T[2,8,12] [4,5] [2,2] [1,1] [0,0] [1,1]"},
    {"aten.col2im.default", "T[8,15] [4,5] [2,2] [1,2] [1,1] [2,1]"},
    {"aten.im2col.default", "T[2,2,4,5] [2,2] {[1,1]|[1,2]} {[0,0]|[1,1]} {[1,1]|[2,1]}"},
    {"aten.im2col.default", "T[3,5,5] [3,2] [1,1] [1,0] [2,2]"},
    {"aten.channel_shuffle.default", "T[2,6,3,3] {1|2|3}"},
    {"aten.channel_shuffle.default", "T[1,4,5] 2"},
    {"aten.pixel_shuffle.default", "T[2,9,2,3] {1|3}"},
    {"aten.pixel_shuffle.default", "T[8,2,2] 2"},
    {"aten.pixel_unshuffle.default", "T[2,1,6,4] {1|2}"},
    {"aten.pixel_unshuffle.default", "T[3,4,6] 2"},

    /* ---- activations ---- */
    {"aten.glu.default", "T[4,6] {-1|0|1}"},
    {"aten.glu.default", "T[2,3,8] -1"},

    /* ---- losses ---- */
    {"aten.multi_margin_loss.default", "T[5,4] idx4:i64[5] {1|2} {1|0.5} {None|pos:T[4]} {0|1|2}"},
    {"aten.multi_margin_loss.default", "T[4] idx4:i64[] 1 1 None 1"},
    {"aten.nll_loss_forward.default", "T[5,3] idx3:i64[5] {None|pos:T[3]} {0|1|2} {-100|1}"},
    {"aten.nll_loss_forward.default", "T[3] idx3:i64[] None {0|1|2} -100"},
    {"aten.nll_loss2d_forward.default", "T[2,3,4,5] idx3:i64[2,4,5] {None|pos:T[3]} {0|1|2} {-100|1}"},
    /* probabilities in (0, 1): the kernel refuses any outside [0, 1] */
    {"aten.binary_cross_entropy.default", "prob:T[S] prob:T[S] {None|pos:T[S]} {0|1|2}"},
    /* labels up to the first -1 are a sample's targets */
    {"aten.multilabel_margin_loss_forward.default", "T[4,5] idx-1-5:i64[4,5] {0|1|2}"},
    {"aten.multilabel_margin_loss_forward.default", "T[5] idx-1-5:i64[5] {0|1|2}"},
    /* class indices, then class probabilities as the target */
    {"aten.cross_entropy_loss.default", "T[5,3] idx3:i64[5] {None|pos:T[3]} {0|1|2} {-100|1} {0.0|0.2}"},
    {"aten.cross_entropy_loss.default", "T[2,3,4] idx3:i64[2,4] None {0|1|2} -100 0.0"},
    {"aten.cross_entropy_loss.default", "T[5,3] prob:T[5,3] {None|pos:T[3]} {0|1|2} -100 {0.0|0.2}"},
    {NULL, NULL},
};
