/*
 * ir/meta_random.c: shape functions of random ops.
 */
#include "ir/meta.h"

const alloy_meta_entry alloy_meta_random[] = {
    {NULL, NULL, 0},
};
