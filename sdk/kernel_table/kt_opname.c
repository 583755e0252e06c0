/*
 * sdk/kernel_table/kt_opname.c: is a kernel row's op name one the host's
 * registry knows, written as a graph names it ("aten.relu.default")? A row
 * with a misspelled name ("aten.relu.defualt") would otherwise load, match
 * no node ever, and leave a conformance run with everything skipped; so the
 * entry refuses the table, naming the row and the nearest known name.
 *
 * The helper cannot list the registry (the host table has op_find, not an
 * iterator, and a plugin never links liballoy), so "nearest" is found by
 * asking op_find about candidates: the name written as a graph writes it
 * ("aten::relu" -> "aten.relu.default"), every name one edit away (two
 * neighbours swapped, a letter deleted, replaced or inserted), the op with
 * PyTorch's usual overload names, then one edit of the op with the default
 * overload. A few thousand hash
 * lookups, only for a row that is already wrong.
 */
#include <stdio.h>
#include <string.h>

#include "sdk/kernel_table/kt_internal.h"

/* "ns.op.overload": two dots, no "::", nothing empty. */
static bool canonical(const char *s) {
  const char *a = strchr(s, '.'), *b = a ? strchr(a + 1, '.') : NULL;
  return a && b && a > s && b > a + 1 && b[1] && !strchr(b + 1, '.') && !strstr(s, "::");
}

static bool known(int (*op_find)(const char *), const char *s) {
  return canonical(s) && op_find(s) >= 0;
}

/* Overloads that PyTorch names most often. */
static const char *const overloads[] = {
    "default", "Tensor", "Scalar", "int", "dim", "dims", "self", "out", "Tensor_Scalar",
    "Scalar_Tensor", "Tensor_Tensor", "correction", "start", "start_step", "using_ints",
    "memory_format", "dim_IntList", "float", "bool", "str", "t", "input", "src", "value",
    "reduce", "two", "names", "tensor", "Dimname", "dimname", "int_out", NULL};

static bool try_overloads(int (*op_find)(const char *), const char *ns_op, size_t len, char *out,
                          size_t cap) {
  for (int i = 0; overloads[i]; i++) {
    snprintf(out, cap, "%.*s.%s", (int)len, ns_op, overloads[i]);
    if (known(op_find, out)) return true;
  }
  return false;
}

/* Every name one edit from s that the registry knows: the first found. */
static bool one_edit(int (*op_find)(const char *), const char *s, char *out, size_t cap) {
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz_.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  size_t n = strlen(s);
  char buf[256];
  if (n + 2 > sizeof buf) return false;
  for (size_t i = 0; i + 1 < n; i++) { /* swaps: the commonest slip */
    memcpy(buf, s, n + 1);
    char t = buf[i];
    buf[i] = buf[i + 1];
    buf[i + 1] = t;
    if (known(op_find, buf)) return snprintf(out, cap, "%s", buf), true;
  }
  for (size_t i = 0; i < n; i++) { /* deletions */
    memcpy(buf, s, i);
    memcpy(buf + i, s + i + 1, n - i);
    if (known(op_find, buf)) return snprintf(out, cap, "%s", buf), true;
  }
  for (size_t i = 0; i < n; i++) /* replacements */
    for (const char *c = alphabet; *c; c++) {
      if (*c == s[i]) continue;
      memcpy(buf, s, n + 1);
      buf[i] = *c;
      if (known(op_find, buf)) return snprintf(out, cap, "%s", buf), true;
    }
  for (size_t i = 0; i <= n; i++) /* insertions */
    for (const char *c = alphabet; *c; c++) {
      memcpy(buf, s, i);
      buf[i] = *c;
      memcpy(buf + i + 1, s + i, n - i + 1);
      if (known(op_find, buf)) return snprintf(out, cap, "%s", buf), true;
    }
  return false;
}

bool alloy_kt_op_name_ok(int (*op_find)(const char *), const char *name, char *why, size_t cap) {
  if (known(op_find, name)) return true;
  char near[256] = "", tmp[256];
  size_t n = strlen(name);
  /* As a graph writes it: "aten::relu" or "aten.relu" -> "aten.relu.default". */
  snprintf(tmp, sizeof tmp, "%s", name);
  char *colons = strstr(tmp, "::");
  if (colons) memmove(colons + 1, colons + 2, strlen(colons + 2) + 1), *colons = '.';
  if (op_find(name) >= 0 || op_find(tmp) >= 0) {
    const char *dot = strchr(tmp, '.');
    if (dot && !strchr(dot + 1, '.')) snprintf(near, sizeof near, "%.240s.default", tmp);
    else snprintf(near, sizeof near, "%s", tmp);
    if (known(op_find, near)) {
      snprintf(why, cap, "the op must be written as a graph names it: %s", near);
      return false;
    }
    near[0] = 0;
  }
  /* One edit anywhere, then another overload of the op. */
  const char *last = strrchr(tmp, '.');
  bool found = n < 200 && one_edit(op_find, tmp, near, sizeof near);
  if (!found && last && last != tmp)
    found = try_overloads(op_find, tmp, (size_t)(last - tmp), near, sizeof near);
  /* A misspelled op with a misspelled overload: one edit of the op part,
   * then the usual overloads. */
  if (!found && last && last != tmp && (size_t)(last - tmp) < 200) {
    char op_part[256], cand[256];
    snprintf(op_part, sizeof op_part, "%.*s.default", (int)(last - tmp) > 240 ? 240 : (int)(last - tmp), tmp);
    found = one_edit(op_find, op_part, cand, sizeof cand);
    if (found) snprintf(near, sizeof near, "%s", cand);
  }
  if (found)
    snprintf(why, cap, "no op \"%s\" in Alloy's registry; the nearest is %s (alloy ops lists them)",
             name, near);
  else
    snprintf(why, cap, "no op \"%s\" in Alloy's registry (alloy ops lists them, as a graph names "
             "them: \"aten.add.Tensor\")", name);
  return false;
}
