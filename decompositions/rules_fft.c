/*
 * decompositions/rules_fft.c: the FFT family (fft_fft ... fft_hfftn, fftshift), from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_fft[] = {
    {NULL, NULL, 0},
};
