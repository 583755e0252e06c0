/*
 * tests/fuzz/fuzz_kernel_table.c: libFuzzer target for the two little
 * languages of a kernel-table row (sdk/kernel_table/kt_signature.c): the
 * signature string ("void(out0, in0, numel(out0))") and the dtype
 * constraint ("f32,i64->f32"), built and run by `make fuzz`.
 *
 * A vendor writes these by hand and the helper reads them when the plugin
 * loads, so any bytes must either parse or fail with a message that names a
 * column inside the text, without a crash, a sanitizer report or a leak.
 * The input is split at its first NUL byte: the signature, then the dtype
 * constraint. What parses must be self-consistent: every parameter refers
 * to an operand index the signature's own bounds report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/kernel_table/kt_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The message must name a column of the text, 1 to len + 1, when it names
 * one at all: an "at column N" that ends the message (the message quotes
 * the text, which may hold those words too). */
static void check_column(const char *what, const char *err, size_t cap, size_t len) {
  if (strlen(err) + 1 >= cap) return; /* cut at the buffer's end: its tail is the quote */
  const char *at = NULL;
  for (const char *p = strstr(err, "at column "); p; p = strstr(p + 1, "at column ")) at = p;
  char *end = NULL;
  unsigned long col = at ? strtoul(at + 10, &end, 10) : 0;
  if (!at || end == at + 10 || *end) return; /* no "at column N" that ends the message */
  if (col < 1 || col > len + 1) {
    fprintf(stderr, "%s: column %lu outside a text of %zu bytes: %s\n", what, col, len, err);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Two NUL-terminated texts from the bytes. */
  char *text = malloc(size + 2);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  text[size + 1] = '\0';
  const char *sig_text = text, *dtypes = text + strlen(text) + (strlen(text) < size ? 1 : 0);
  char err[256] = "";
  kt_sig sig;
  if (alloy_kt_sig_parse(sig_text, &sig, err, sizeof err)) {
    if (sig.nparams < 0 || sig.nparams > KT_MAX_PARAMS) {
      fprintf(stderr, "a signature of %d parameters\n", sig.nparams);
      abort();
    }
    int max_in = alloy_kt_sig_max_operand(&sig, false), max_out = alloy_kt_sig_max_operand(&sig, true);
    for (int i = 0; i < sig.nparams; i++) {
      const kt_param *p = &sig.params[i];
      int bound = p->is_out ? max_out : max_in;
      if (p->kind != KT_P_ARG && p->kind != KT_P_CALL && (p->index < 0 || p->index > bound)) {
        fprintf(stderr, "parameter %d refers to operand %d, past the bound %d\n", i, p->index, bound);
        abort();
      }
      (void)alloy_kt_sig_operand_flags(&sig, p->is_out, p->index);
    }
  } else {
    check_column("signature", err, sizeof err, strlen(sig_text));
  }
  int nin = -2, nout = -2;
  err[0] = '\0';
  if (alloy_kt_dtypes_check(dtypes, &nin, &nout, err, sizeof err)) {
    alloy_dtype in[8] = {ALLOY_F32, ALLOY_F32, ALLOY_F32, ALLOY_F32,
                         ALLOY_F32, ALLOY_F32, ALLOY_F32, ALLOY_F32};
    alloy_dtype out[8] = {ALLOY_F32, ALLOY_F32, ALLOY_F32, ALLOY_F32,
                          ALLOY_F32, ALLOY_F32, ALLOY_F32, ALLOY_F32};
    int ni = nin >= 0 && nin <= 8 ? nin : 1, no = nout >= 0 && nout <= 8 ? nout : 1;
    (void)alloy_kt_dtypes_accept(dtypes, in, ni, out, no);
  } else {
    check_column("dtypes", err, sizeof err, strlen(dtypes));
  }
  free(text);
  return 0;
}
