/*
 * ir/meta_fft.c: shape functions of the FFT family.
 */
#include "ir/meta.h"

const alloy_meta_entry alloy_meta_fft[] = {
    {NULL, NULL, 0},
};
