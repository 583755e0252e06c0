/*
 * decompositions/rules_rnn.c: the recurrent layers and cells (rnn_tanh, rnn_relu, lstm, gru), from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_rnn[] = {
    {NULL, NULL, 0},
};
