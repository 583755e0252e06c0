/*
 * ir/meta_rnn.c: shape functions of the recurrent layers and cells.
 */
#include "ir/meta.h"

const alloy_meta_entry alloy_meta_rnn[] = {
    {NULL, NULL, 0},
};
