/*
 * ir/meta_backward.c: shape functions of the backward ops of training graphs.
 */
#include "ir/meta.h"

const alloy_meta_entry alloy_meta_backward[] = {
    {NULL, NULL, 0},
};
