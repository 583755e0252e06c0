/*
 * tests/test_sym.c: the symbolic-dimension algebra (ir/sym.c): canonical
 * forms, range reasoning, broadcasting, evaluation, print/parse round trips,
 * import and the sticky errors.
 */
#include "alloy/sym.h"

#include <stdlib.h>

#include "harness.h"
#include "testsym.h"

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

/* A table with symbols s0..s(n-1), each in [lo, hi]. */
static alloy_symtab *table(int n, int64_t lo, int64_t hi, alloy_dim *syms) {
  alloy_symtab *st = alloy_symtab_new();
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "s%d", i);
    CHECK_OK(alloy_sym_new(st, name, lo, hi, &syms[i]));
  }
  return st;
}

/* Message of a parse error (freed), or "" when the text parsed. */
static const char *parse_error(alloy_symtab *st, const char *text) {
  static char msg[256];
  alloy_dim d;
  size_t used;
  alloy_error *e = alloy_dim_parse(st, text, strlen(text), &d, &used);
  msg[0] = '\0';
  if (e) {
    CHECK_INT(alloy_error_code_of(e), ALLOY_ERR_PARSE);
    snprintf(msg, sizeof msg, "%s", alloy_error_message(e));
    alloy_error_free(e);
  }
  return msg;
}

TEST(sym_add_same_as_scale) {
  alloy_dim s[2];
  alloy_symtab *st = table(2, 0, ALLOY_SYM_INF, s);
  alloy_dim a = alloy_dim_add(st, s[0], s[0]), b = alloy_dim_mul(st, C(2), s[0]);
  CHECK(alloy_dim_same(a, b));
  CHECK(alloy_dim_same(a, alloy_dim_mul(st, s[0], C(2))));
  CHECK_STR(S(a), "2*s0");
  CHECK(alloy_dim_same(alloy_dim_sub(st, a, s[0]), s[0]));
  CHECK(alloy_dim_same(alloy_dim_sub(st, s[1], s[1]), C(0)));
  CHECK(alloy_dim_same(alloy_dim_add(st, C(2), C(3)), C(5)));
  CHECK(!alloy_dim_same(s[0], s[1]));
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_symtab_free(st);
}

TEST(sym_mul_commutes_and_expands) {
  alloy_dim s[3];
  alloy_symtab *st = table(3, 0, ALLOY_SYM_INF, s);
  CHECK(alloy_dim_same(alloy_dim_mul(st, s[0], s[1]), alloy_dim_mul(st, s[1], s[0])));
  alloy_dim abc = alloy_dim_mul(st, alloy_dim_mul(st, s[2], s[0]), s[1]);
  CHECK(alloy_dim_same(abc, alloy_dim_mul(st, s[0], alloy_dim_mul(st, s[1], s[2]))));
  CHECK_STR(S(abc), "s0*s1*s2");
  alloy_dim p = alloy_dim_mul(st, alloy_dim_add(st, s[0], C(1)), alloy_dim_sub(st, s[0], C(1)));
  alloy_dim q = alloy_dim_sub(st, alloy_dim_mul(st, s[0], s[0]), C(1));
  CHECK(alloy_dim_same(p, q));
  CHECK_STR(S(p), "s0*s0 - 1");
  alloy_dim r = alloy_dim_mul(st, alloy_dim_add(st, s[1], C(1)), alloy_dim_add(st, s[0], C(1)));
  CHECK_STR(S(r), "s0*s1 + s0 + s1 + 1");
  CHECK(alloy_dim_same(alloy_dim_mul(st, s[0], C(0)), C(0)));
  CHECK(alloy_dim_same(alloy_dim_mul(st, s[0], C(1)), s[0]));
  alloy_symtab_free(st);
}

TEST(sym_floordiv_simplifies) {
  alloy_dim s[2];
  alloy_symtab *st = table(2, 0, ALLOY_SYM_INF, s);
  alloy_dim two_s0_1 = alloy_dim_add(st, alloy_dim_mul(st, C(2), s[0]), C(1));
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, two_s0_1, C(2)), s[0]));
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, alloy_dim_mul(st, s[0], C(12)), C(12)), s[0]));
  alloy_dim prod = alloy_dim_mul(st, alloy_dim_mul(st, C(12), s[0]), s[1]);
  alloy_dim q = alloy_dim_floordiv(st, prod, alloy_dim_mul(st, s[0], s[1]));
  CHECK(alloy_dim_is_const(q));
  CHECK_INT(q.value, 12);
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, alloy_dim_mul(st, s[0], s[1]), s[0]), s[1]));
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, s[1], s[1]), C(1)));
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, s[0], C(1)), s[0]));
  /* common factors cancel: (2*s0 + 1)//4 is s0//2 */
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, two_s0_1, C(4)),
                       alloy_dim_floordiv(st, s[0], C(2))));
  CHECK_STR(S(alloy_dim_floordiv(st, alloy_dim_add(st, s[0], C(1)), C(2))), "(s0 + 1)//2");
  CHECK_STR(S(P(st, "(4*s1 + s0 + 5)//4")), "s1 + (s0 + 1)//4 + 1");
  CHECK_STR(S(P(st, "s0//(-2)")), "(-s0)//2");
  CHECK_STR(S(alloy_dim_ceildiv(st, s[0], C(4))), "-((-s0)//4)");
  CHECK(alloy_dim_same(alloy_dim_ceildiv(st, alloy_dim_mul(st, C(4), s[0]), C(4)), s[0]));
  CHECK(alloy_dim_same(alloy_dim_ceildiv(st, P(st, "4*s0 + 1"), C(4)), P(st, "s0 + 1")));
  CHECK_INT(alloy_dim_ceildiv(st, C(7), C(2)).value, 4);
  CHECK_INT(alloy_dim_floordiv(st, C(-7), C(2)).value, -4);
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_symtab_free(st);
}

TEST(sym_floordiv_by_ranges) {
  alloy_dim s0, s1;
  alloy_symtab *st = alloy_symtab_new();
  CHECK_OK(alloy_sym_new(st, "s0", 0, 3, &s0));
  CHECK_OK(alloy_sym_new(st, "s1", 4, 9, &s1));
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, s0, C(4)), C(0)));
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, alloy_dim_add(st, s0, C(8)), C(4)), C(2)));
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, s0, s1), C(0)));
  CHECK(alloy_dim_same(alloy_dim_mod(st, s0, s1), s0));
  CHECK(!alloy_dim_is_const(alloy_dim_floordiv(st, s1, C(4))));
  alloy_symtab_free(st);
}

TEST(sym_floordiv_chains) {
  alloy_dim s[1];
  alloy_symtab *st = table(1, 0, ALLOY_SYM_INF, s);
  alloy_dim a = alloy_dim_floordiv(st, alloy_dim_floordiv(st, s[0], C(2)), C(3));
  CHECK(alloy_dim_same(a, alloy_dim_floordiv(st, s[0], C(6))));
  CHECK_STR(S(a), "s0//6");
  CHECK(alloy_dim_same(P(st, "((s0 + 1)//2)//2"), P(st, "(s0 + 1)//4")));
  CHECK(alloy_dim_same(P(st, "(s0//2 + 1)//3"), P(st, "(s0 + 2)//6")));
  CHECK(alloy_dim_same(P(st, "s0//2//2//2"), P(st, "s0//8")));
  /* the identities must hold numerically too */
  alloy_dim chain = P(st, "((s0//2 + 1)//3 + 5)//7");
  for (int64_t v = 0; v < 200; v++) {
    int64_t got = -1, want = ((v / 2 + 1) / 3 + 5) / 7;
    CHECK_OK(alloy_dim_eval(st, chain, &v, NULL, 1, &got));
    CHECK_INT(got, want);
  }
  alloy_symtab_free(st);
}

TEST(sym_mod_simplifies) {
  alloy_dim s[2];
  alloy_symtab *st = table(2, 0, ALLOY_SYM_INF, s);
  alloy_dim m = alloy_dim_mod(st, P(st, "2*s0 + 1"), C(2));
  CHECK(alloy_dim_is_const(m));
  CHECK_INT(m.value, 1);
  CHECK_STR(S(alloy_dim_mod(st, s[0], C(4))), "s0 % 4");
  CHECK_STR(S(P(st, "(s0 + 5) % 4")), "(s0 + 1) % 4");
  CHECK_STR(S(P(st, "5*s0 % 4")), "s0 % 4");
  CHECK(alloy_dim_same(P(st, "(4*s0 + 6) % 4"), C(2)));
  CHECK(alloy_dim_same(P(st, "s0 % 8 % 4"), P(st, "s0 % 4")));
  CHECK(alloy_dim_same(P(st, "s0*s1 % s1"), C(0)));
  CHECK(alloy_dim_same(P(st, "s1 % s1"), C(0)));
  CHECK(alloy_dim_same(P(st, "s1 % 1"), C(0)));
  CHECK(alloy_dim_same(alloy_dim_mod(st, s[0], s[1]), P(st, "s0 % s1")));
  CHECK_INT(alloy_dim_mod(st, C(-7), C(2)).value, 1);
  CHECK_INT(alloy_dim_mod(st, C(7), C(-2)).value, -1);
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_symtab_free(st);
}

TEST(sym_division_by_zero_is_sticky) {
  alloy_dim s[1];
  alloy_symtab *st = table(1, 0, ALLOY_SYM_INF, s);
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, s[0], C(0)), C(0)));
  REQUIRE(alloy_symtab_error(st) != NULL);
  CHECK(strstr(alloy_symtab_error(st), "division by zero") != NULL);
  alloy_symtab_clear_error(st);
  CHECK(alloy_dim_same(alloy_dim_mod(st, C(5), C(0)), C(0)));
  CHECK(alloy_symtab_error(st) != NULL);
  alloy_symtab_clear_error(st);
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_symtab_free(st);
}

TEST(sym_min_max) {
  alloy_dim s0, s1;
  alloy_symtab *st = alloy_symtab_new();
  CHECK_OK(alloy_sym_new(st, "s0", 2, 10, &s0));
  CHECK_OK(alloy_sym_new(st, "s1", 0, ALLOY_SYM_INF, &s1));
  CHECK(alloy_dim_same(alloy_dim_max(st, s0, C(1)), s0));
  CHECK(alloy_dim_same(alloy_dim_min(st, s0, C(100)), s0));
  CHECK(alloy_dim_same(alloy_dim_min(st, s0, C(1)), C(1)));
  CHECK(alloy_dim_same(alloy_dim_max(st, s0, alloy_dim_add(st, s0, C(1))),
                       alloy_dim_add(st, s0, C(1))));
  alloy_dim m = alloy_dim_min(st, s0, C(5));
  CHECK(!alloy_dim_is_const(m));
  CHECK_STR(S(m), "min(s0, 5)");
  CHECK(alloy_dim_same(m, alloy_dim_min(st, C(5), s0)));
  CHECK_STR(S(alloy_dim_max(st, s1, C(1))), "max(s1, 1)");
  CHECK(alloy_dim_same(alloy_dim_max(st, s1, s0), alloy_dim_max(st, s0, s1)));
  CHECK_INT(alloy_dim_max(st, C(3), C(-4)).value, 3);
  CHECK_INT(alloy_dim_min(st, C(3), C(-4)).value, -4);
  int64_t lo, hi;
  alloy_dim_range(m, &lo, &hi);
  CHECK_INT(lo, 2);
  CHECK_INT(hi, 5);
  alloy_symtab_free(st);
}

TEST(sym_point_ranges_decide) {
  alloy_dim s0, three;
  alloy_symtab *st = alloy_symtab_new();
  CHECK_OK(alloy_sym_new(st, "s0", 1, ALLOY_SYM_INF, &s0));
  CHECK_OK(alloy_sym_new(st, "three", 3, 3, &three));
  /* -1//s0 is -1 for every s0 >= 1, so it is the constant */
  CHECK(alloy_dim_same(alloy_dim_floordiv(st, C(-1), s0), C(-1)));
  CHECK(alloy_dim_same(P(st, "s0 % 1 + max(s0, 0)"), s0));
  /* provably equal operands: min and max still do not depend on the order */
  CHECK(alloy_dim_same(alloy_dim_min(st, three, C(3)), alloy_dim_min(st, C(3), three)));
  CHECK(alloy_dim_same(alloy_dim_max(st, three, C(3)), C(3)));
  CHECK_INT(alloy_dim_eq(st, three, C(3)), ALLOY_TRUE);
  alloy_dim out;
  CHECK_OK(alloy_dim_broadcast(st, three, C(3), &out));
  CHECK(alloy_dim_same(out, C(3)));
  alloy_symtab_free(st);
}

TEST(sym_broadcast) {
  alloy_dim s[2], out, big;
  alloy_symtab *st = table(2, 0, ALLOY_SYM_INF, s);
  CHECK_OK(alloy_sym_new(st, "big", 2, ALLOY_SYM_INF, &big));
  CHECK_OK(alloy_dim_broadcast(st, s[0], C(1), &out));
  CHECK(alloy_dim_same(out, s[0]));
  CHECK_OK(alloy_dim_broadcast(st, C(1), s[0], &out));
  CHECK(alloy_dim_same(out, s[0]));
  CHECK_OK(alloy_dim_broadcast(st, s[0], s[0], &out));
  CHECK(alloy_dim_same(out, s[0]));
  CHECK_OK(alloy_dim_broadcast(st, big, C(1), &out));
  CHECK(alloy_dim_same(out, big));
  CHECK_OK(alloy_dim_broadcast(st, C(3), C(3), &out));
  CHECK_INT(out.value, 3);

  alloy_error *e = alloy_dim_broadcast(st, s[0], s[1], &out);
  REQUIRE(e != NULL);
  CHECK_INT(alloy_error_code_of(e), ALLOY_ERR_TYPE);
  CHECK_STR(alloy_error_message(e),
            "cannot broadcast size s0 against size s1 (not provably equal, and neither is 1)");
  alloy_error_free(e);

  e = alloy_dim_broadcast(st, C(3), C(4), &out);
  REQUIRE(e != NULL);
  CHECK(strstr(alloy_error_message(e), "size 3 against size 4") != NULL);
  alloy_error_free(e);

  e = alloy_dim_broadcast(st, s[0], alloy_dim_add(st, s[0], C(1)), &out);
  REQUIRE(e != NULL);
  CHECK(strstr(alloy_error_message(e), "s0 against size s0 + 1 (they differ") != NULL);
  alloy_error_free(e);

  /* s0 might be 1 (broadcast) or 4 (equal): PyTorch would specialize */
  e = alloy_dim_broadcast(st, s[0], C(4), &out);
  REQUIRE(e != NULL);
  CHECK(strstr(alloy_error_message(e), "cannot prove") != NULL);
  CHECK(strstr(alloy_error_message(e), "s0") != NULL);
  alloy_error_free(e);

  e = alloy_dim_broadcast(st, big, C(4), &out);
  REQUIRE(e != NULL);
  CHECK(strstr(alloy_error_message(e), "size big against size 4") != NULL);
  alloy_error_free(e);
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_symtab_free(st);
}

TEST(sym_truth_values) {
  alloy_dim s0, s1, s2;
  alloy_symtab *st = alloy_symtab_new();
  CHECK_OK(alloy_sym_new(st, "s0", 0, ALLOY_SYM_INF, &s0));
  CHECK_OK(alloy_sym_new(st, "s1", 1, 5, &s1));
  CHECK_OK(alloy_sym_new(st, "s2", 10, 20, &s2));
  alloy_dim s0p1 = alloy_dim_add(st, s0, C(1));
  CHECK_INT(alloy_dim_eq(st, s0, s0), ALLOY_TRUE);
  CHECK_INT(alloy_dim_eq(st, s0, s0p1), ALLOY_FALSE);
  CHECK_INT(alloy_dim_eq(st, s0, s1), ALLOY_UNKNOWN);
  CHECK_INT(alloy_dim_eq(st, s1, s2), ALLOY_FALSE);
  CHECK_INT(alloy_dim_eq(st, C(3), C(3)), ALLOY_TRUE);
  CHECK_INT(alloy_dim_eq(st, C(3), C(4)), ALLOY_FALSE);
  CHECK_INT(alloy_dim_lt(st, s0, s0p1), ALLOY_TRUE);
  CHECK_INT(alloy_dim_lt(st, s0p1, s0), ALLOY_FALSE);
  CHECK_INT(alloy_dim_lt(st, s0, s0), ALLOY_FALSE);
  CHECK_INT(alloy_dim_lt(st, s1, s2), ALLOY_TRUE);
  CHECK_INT(alloy_dim_lt(st, s0, s1), ALLOY_UNKNOWN);
  CHECK_INT(alloy_dim_le(st, s0, s0), ALLOY_TRUE);
  CHECK_INT(alloy_dim_le(st, C(0), s0), ALLOY_TRUE);
  CHECK_INT(alloy_dim_le(st, C(-1), s0), ALLOY_TRUE);
  CHECK_INT(alloy_dim_le(st, s0p1, C(0)), ALLOY_FALSE);
  CHECK_INT(alloy_dim_le(st, alloy_dim_mul(st, s1, s1), C(25)), ALLOY_TRUE);
  CHECK_INT(alloy_dim_le(st, alloy_dim_mul(st, s1, s1), C(24)), ALLOY_UNKNOWN);
  /* deciding never leaves a sticky error, even when a - b overflows */
  CHECK_INT(alloy_dim_eq(st, alloy_dim_mul(st, C(INT64_MAX), s0), alloy_dim_mul(st, C(-2), s0)),
            ALLOY_UNKNOWN);
  CHECK(alloy_symtab_error(st) == NULL);
  int64_t lo, hi;
  alloy_dim_range(alloy_dim_sub(st, s2, s1), &lo, &hi);
  CHECK_INT(lo, 5);
  CHECK_INT(hi, 19);
  alloy_dim_range(alloy_dim_mul(st, s0, s1), &lo, &hi);
  CHECK_INT(lo, 0);
  CHECK(hi == ALLOY_SYM_INF);
  alloy_dim_range(alloy_dim_mul(st, C(-1), s0), &lo, &hi);
  CHECK(lo == INT64_MIN);
  CHECK_INT(hi, 0);
  alloy_symtab_free(st);
}

TEST(sym_eval_python_semantics) {
  alloy_dim s[2];
  alloy_symtab *st = table(2, INT64_MIN, ALLOY_SYM_INF, s);
  alloy_dim fd = alloy_dim_floordiv(st, s[0], s[1]), md = alloy_dim_mod(st, s[0], s[1]);
  static const int64_t cases[][4] = {
      /* a, b, a // b, a % b */
      {-7, 2, -4, 1}, {7, -2, -4, -1}, {-7, -2, 3, -1}, {7, 2, 3, 1},
      {0, 5, 0, 0},   {6, 3, 2, 0},    {-6, 3, -2, 0},  {INT64_MIN, 1, INT64_MIN, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t v[2] = {cases[i][0], cases[i][1]}, got = 0;
    CHECK_OK(alloy_dim_eval(st, fd, v, NULL, 2, &got));
    CHECK_INT(got, cases[i][2]);
    CHECK_OK(alloy_dim_eval(st, md, v, NULL, 2, &got));
    CHECK_INT(got, cases[i][3]);
  }
  alloy_dim e = P(st, "2*s0*s1 - max(s0, s1) + min(s0, 3) - 1");
  int64_t v[2] = {4, 5}, got = 0;
  CHECK_OK(alloy_dim_eval(st, e, v, NULL, 2, &got));
  CHECK_INT(got, 40 - 5 + 3 - 1);
  CHECK_OK(alloy_dim_eval(st, C(42), NULL, NULL, 0, &got));
  CHECK_INT(got, 42);

  int64_t zero[2] = {5, 0};
  alloy_error *err = alloy_dim_eval(st, fd, zero, NULL, 2, &got);
  REQUIRE(err != NULL);
  CHECK_STR(alloy_error_message(err), "division by zero evaluating s0//s1");
  alloy_error_free(err);
  int64_t big[2] = {INT64_MAX, 2};
  err = alloy_dim_eval(st, e, big, NULL, 2, &got);
  REQUIRE(err != NULL);
  CHECK(strstr(alloy_error_message(err), "overflow") != NULL);
  alloy_error_free(err);
  alloy_symtab_free(st);
}

TEST(sym_eval_unbound_symbol) {
  alloy_dim s[3];
  alloy_symtab *st = table(3, 0, ALLOY_SYM_INF, s);
  alloy_dim e = P(st, "s0 + s2");
  int64_t v[3] = {1, 2, 3}, got;
  bool bound[3] = {true, true, false};
  alloy_error *err = alloy_dim_eval(st, e, v, bound, 3, &got);
  REQUIRE(err != NULL);
  CHECK_STR(alloy_error_message(err), "symbol s2 is unbound");
  alloy_error_free(err);
  err = alloy_dim_eval(st, e, v, NULL, 2, &got);
  REQUIRE(err != NULL);
  CHECK(strstr(alloy_error_message(err), "s2") != NULL);
  alloy_error_free(err);
  bound[2] = true;
  CHECK_OK(alloy_dim_eval(st, e, v, bound, 3, &got));
  CHECK_INT(got, 4);
  alloy_symtab_free(st);
}

TEST(sym_print) {
  alloy_dim s[2];
  alloy_symtab *st = table(2, 0, ALLOY_SYM_INF, s);
  static const char *const same[] = {
      "2*s0 + s1 - 3", "-s0 + 4",    "s0*s1",          "(s0 + 1)//2",   "s1*(s0//2)",
      "(s0 + 1) % 4",  "min(s0, 4)", "max(s0, s1)",    "-(s0//2)",      "2*(s0 % 3)",
      "-5",            "0",          "s0*s0*s1 - s1",  "s0//s1",        "(2*s0)//s1",
      "s0*s1//3",      "s0//(s1*s1)", "-s0*s1 + 1",    "s0//s1 + s0 % s1",
  };
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) CHECK_STR(S(P(st, same[i])), same[i]);
  CHECK_STR(S(P(st, "s1 - 3 + s0 * 2")), "2*s0 + s1 - 3");
  CHECK_STR(S(P(st, "4 - s0")), "-s0 + 4");
  CHECK_STR(S(P(st, "(s0//2)*s1")), "s1*(s0//2)");
  CHECK_STR(S(C(INT64_MIN)), "-9223372036854775808");
  /* the return value is the full length, like snprintf */
  char small[5];
  CHECK_INT(alloy_dim_print(P(st, "2*s0 + s1 - 3"), small, sizeof small), 13);
  CHECK_STR(small, "2*s0");
  CHECK_INT(alloy_dim_print(s[0], NULL, 0), 2);
  alloy_symtab_free(st);
}

TEST(sym_print_parse_round_trip) {
  alloy_dim s[3];
  alloy_symtab *st = table(3, 0, ALLOY_SYM_INF, s);
  alloy_dim neg;
  CHECK_OK(alloy_sym_new(st, "n", -10, 10, &neg));
  static const char *const texts[] = {
      "s0",                 "s0 + s1 + s2",          "3*s0 - 2*s1 + 7",
      "(s0 + 1)*(s1 - 1)",  "(s0 + s1)*(s0 + s1)",   "s0*s1*s2*s0",
      "s0//2",              "(s0 + 1)//2",           "(s0//2)*(s1//3)",
      "-(s0//2)",           "(-s0)//3",              "s0 % 7 + s1 % 7",
      "(s0*s1 + 3) % 5",    "min(s0, s1) + 1",       "max(s0 + 1, 2*s1)",
      "min(s0//2, s1 % 3)", "max(min(s0, 4), s1)",   "s0//s1",
      "(s0 + 1)//(s1 + 1)", "s0 % (s1*s2)",          "n*n - n",
      "n//3 - n % 3",       "-n",                    "(n - 5)//(-2)",
      "n % (-3)",           "-9223372036854775807*s0 - 1",
      "9223372036854775807*s0", "-(9223372036854775807*s0) - 9223372036854775807 - 1",
      "s0*(-9223372036854775807 - 1) + s1*(-9223372036854775807 - 1)",
      "-9223372036854775807 - 1",
      "2*min(s0, 3)*max(s1, 2)", "(s0 - s1)//(s0 + s1)", "s0//2//s1",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    alloy_dim d = P(st, texts[i]);
    char buf[512];
    alloy_dim_print(d, buf, sizeof buf);
    alloy_dim back = P(st, buf);
    if (!alloy_dim_same(d, back))
      harness_fail(__FILE__, __LINE__, "\"%s\" printed \"%s\" parsed back as \"%s\"", texts[i],
                   buf, S(back));
  }
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_symtab_free(st);
}

TEST(sym_parse_errors_name_the_column) {
  alloy_dim s[1];
  alloy_symtab *st = table(1, 0, ALLOY_SYM_INF, s);
  CHECK_STR(parse_error(st, "s0 + x"), "unknown symbol 'x' at column 5");
  CHECK_STR(parse_error(st, "s0 +"), "expected an expression, found the end of the text at column 4");
  CHECK_STR(parse_error(st, "(s0 + 1"), "expected ')' at column 7");
  CHECK_STR(parse_error(st, "min(s0 4)"), "expected ',' at column 7");
  CHECK_STR(parse_error(st, "s0 * )"), "expected an integer, a symbol, '(', min or max at column 5");
  CHECK_STR(parse_error(st, "99999999999999999999"), "integer literal too large at column 0");
  CHECK_STR(parse_error(st, "1 + 9223372036854775808"), "integer literal too large at column 4");
  CHECK_STR(parse_error(st, "s0//0"), "division by zero in floordiv at column 2");
  CHECK_STR(parse_error(st, "9223372036854775807 + 1"), "int64 overflow in add at column 20");
  CHECK_STR(parse_error(st, ""), "expected an expression, found the end of the text at column 0");
  CHECK_STR(parse_error(st, "-9223372036854775808"), "");
  char deep[300];
  memset(deep, '(', 200);
  strcpy(deep + 200, "s0");
  CHECK(strstr(parse_error(st, deep), "nested too deeply") != NULL);
  memset(deep, '-', 200);
  CHECK(strstr(parse_error(st, deep), "nested too deeply") != NULL);
  /* parse errors never leave a sticky error in the table */
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_dim d;
  alloy_error *e = alloy_dim_parse(st, "s0 ]", 4, &d, NULL);
  REQUIRE(e != NULL);
  CHECK_STR(alloy_error_message(e), "unexpected character at column 3");
  alloy_error_free(e);
  alloy_symtab_free(st);
}

TEST(sym_parse_stops_and_reports_used) {
  alloy_dim s[2], d;
  alloy_symtab *st = table(2, 0, ALLOY_SYM_INF, s);
  size_t used = 0;
  const char *text = "s0 + 2*s1, s1]";
  CHECK_OK(alloy_dim_parse(st, text, strlen(text), &d, &used));
  CHECK_INT(used, 9);
  CHECK_STR(S(d), "s0 + 2*s1");
  text = "  s0 * 4 ] tail";
  CHECK_OK(alloy_dim_parse(st, text, strlen(text), &d, &used));
  CHECK_INT(used, 9); /* the whitespace before ']' could have continued it */
  CHECK_STR(S(d), "4*s0");
  text = "min (s0, 3)//s1";
  CHECK_OK(alloy_dim_parse(st, text, strlen(text), &d, &used));
  CHECK_INT(used, strlen(text));
  CHECK_STR(S(d), "min(s0, 3)//s1");
  /* only len bytes are read */
  CHECK_OK(alloy_dim_parse(st, "s0 + s1", 2, &d, &used));
  CHECK_INT(used, 2);
  CHECK(alloy_dim_same(d, s[0]));
  text = "12 / 3";
  CHECK_OK(alloy_dim_parse(st, text, strlen(text), &d, &used));
  CHECK_INT(used, 3);
  CHECK_INT(d.value, 12);
  /* a symbol may be called min when not followed by '(' */
  alloy_dim m;
  CHECK_OK(alloy_sym_new(st, "min", 1, 4, &m));
  CHECK(alloy_dim_same(P(st, "min(min, 2) + min"), P(st, "min + min(2, min)")));
  alloy_symtab_free(st);
}

TEST(sym_parse_survives_junk) {
  alloy_dim s[2];
  alloy_symtab *st = table(2, 0, ALLOY_SYM_INF, s);
  static const char alphabet[] = "s01 +-*/%()min,ax9_\t\0\xff";
  unsigned seed = 12345;
  for (int iter = 0; iter < 20000; iter++) {
    char buf[40];
    size_t n = (size_t)(iter % 40);
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      buf[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
    }
    alloy_dim d;
    size_t used = 0;
    alloy_error *e = alloy_dim_parse(st, buf, n, &d, &used);
    if (e) {
      CHECK_INT(alloy_error_code_of(e), ALLOY_ERR_PARSE);
      alloy_error_free(e);
    } else {
      CHECK(used <= n);
    }
  }
  CHECK(alloy_symtab_error(st) == NULL);
  alloy_symtab_free(st);
}

TEST(sym_import_across_tables) {
  alloy_dim a[2], b0, out;
  alloy_symtab *src = table(2, 0, ALLOY_SYM_INF, a);
  alloy_symtab *dst = alloy_symtab_new();
  CHECK_OK(alloy_sym_new(dst, "other", 0, 9, &b0));
  alloy_dim d = P(src, "(s0*s1 + 3)//2 + max(s0, 4) - s1 % 3");
  CHECK_OK(alloy_dim_import(dst, src, d, &out));
  CHECK_INT(alloy_symtab_count(dst), 3);
  CHECK_STR(alloy_symtab_name(dst, 1), "s0");
  CHECK_STR(S(out), S(d));
  CHECK(alloy_dim_same(out, P(dst, S(d))));
  alloy_dim again;
  CHECK_OK(alloy_dim_import(dst, src, d, &again));
  CHECK(alloy_dim_same(out, again));
  CHECK_OK(alloy_dim_import(dst, src, C(7), &again));
  CHECK_INT(again.value, 7);
  alloy_dim u = alloy_sym_unbacked(src, 0, 5);
  CHECK_OK(alloy_dim_import(dst, src, u, &again));
  CHECK(alloy_symtab_is_unbacked(dst, 3));

  alloy_symtab *clash = alloy_symtab_new();
  alloy_dim c0;
  CHECK_OK(alloy_sym_new(clash, "s0", 1, 2, &c0));
  alloy_error *e = alloy_dim_import(clash, src, d, &out);
  REQUIRE(e != NULL);
  CHECK(strstr(alloy_error_message(e), "s0") != NULL);
  alloy_error_free(e);
  CHECK(alloy_symtab_error(clash) == NULL);
  alloy_symtab_free(clash);
  alloy_symtab_free(dst);
  alloy_symtab_free(src);
}

TEST(sym_overflow_is_sticky) {
  alloy_dim s[1];
  alloy_symtab *st = table(1, 0, ALLOY_SYM_INF, s);
  alloy_dim r = alloy_dim_add(st, C(INT64_MAX), C(1));
  CHECK(alloy_dim_same(r, C(0)));
  REQUIRE(alloy_symtab_error(st) != NULL);
  CHECK_STR(alloy_symtab_error(st), "int64 overflow in add");
  /* the first error stays until cleared */
  alloy_dim_mul(st, C(INT64_MAX), C(2));
  CHECK_STR(alloy_symtab_error(st), "int64 overflow in add");
  alloy_symtab_clear_error(st);
  CHECK(alloy_symtab_error(st) == NULL);
  r = alloy_dim_mul(st, alloy_dim_mul(st, C(INT64_MAX), s[0]), C(2));
  CHECK(alloy_dim_same(r, C(0)));
  CHECK_STR(alloy_symtab_error(st), "int64 overflow in mul");
  alloy_symtab_clear_error(st);
  alloy_dim_sub(st, C(INT64_MIN), C(1));
  CHECK_STR(alloy_symtab_error(st), "int64 overflow in sub");
  alloy_symtab_clear_error(st);
  alloy_dim_floordiv(st, C(INT64_MIN), C(-1));
  CHECK_STR(alloy_symtab_error(st), "int64 overflow in floordiv");
  alloy_symtab_clear_error(st);
  /* ordinary arithmetic on concrete dims needs no table */
  CHECK_INT(alloy_dim_mul(NULL, C(6), C(7)).value, 42);
  CHECK(alloy_dim_same(alloy_dim_add(NULL, C(INT64_MAX), C(1)), C(0)));
  alloy_symtab_free(st);
}

TEST(sym_term_limit) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_dim sum = C(0), sums[2] = {C(0), C(0)};
  for (int i = 0; i < ALLOY_SYM_MAX_TERMS; i++) {
    char name[16];
    alloy_dim x;
    snprintf(name, sizeof name, "x%d", i);
    CHECK_OK(alloy_sym_new(st, name, 0, ALLOY_SYM_INF, &x));
    sum = alloy_dim_add(st, sum, x);
    if (i < 40) sums[i % 2] = alloy_dim_add(st, sums[i % 2], x);
  }
  CHECK(alloy_symtab_error(st) == NULL);
  CHECK(!alloy_dim_is_const(sum));
  alloy_dim more;
  CHECK_OK(alloy_sym_new(st, "one_more", 0, ALLOY_SYM_INF, &more));
  CHECK(alloy_dim_same(alloy_dim_add(st, sum, more), C(0)));
  REQUIRE(alloy_symtab_error(st) != NULL);
  CHECK(strstr(alloy_symtab_error(st), "more than 256 terms") != NULL);
  alloy_symtab_clear_error(st);
  /* 20 x 20 distinct products */
  CHECK(alloy_dim_same(alloy_dim_mul(st, sums[0], sums[1]), C(0)));
  REQUIRE(alloy_symtab_error(st) != NULL);
  CHECK(strstr(alloy_symtab_error(st), "mul") != NULL);
  alloy_symtab_clear_error(st);
  /* cancellation keeps it small: sum - sum */
  CHECK(alloy_dim_same(alloy_dim_sub(st, sum, sum), C(0)));
  CHECK(alloy_symtab_error(st) == NULL);
  /* a power with too many factors */
  alloy_dim p = more;
  for (int i = 0; i < 300 && !alloy_symtab_error(st); i++) p = alloy_dim_mul(st, p, more);
  REQUIRE(alloy_symtab_error(st) != NULL);
  CHECK(strstr(alloy_symtab_error(st), "factors") != NULL);
  alloy_symtab_free(st);
}

TEST(sym_symbols_and_unbacked) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_dim a, b, u1;
  CHECK_OK(alloy_sym_new(st, "u1", 0, 7, &u1));
  alloy_dim u = alloy_sym_unbacked(st, 0, ALLOY_SYM_INF);
  CHECK_STR(S(u), "u0");
  CHECK_STR(S(alloy_sym_unbacked(st, 2, 3)), "u2"); /* u1 was taken */
  CHECK(alloy_symtab_is_unbacked(st, 1));
  CHECK(!alloy_symtab_is_unbacked(st, 0));
  CHECK_INT(alloy_symtab_count(st), 3);
  int64_t lo, hi;
  alloy_symtab_range(st, 2, &lo, &hi);
  CHECK_INT(lo, 2);
  CHECK_INT(hi, 3);
  CHECK(alloy_dim_same(alloy_symtab_symbol(st, 1), u));
  CHECK(alloy_symtab_name(st, 3) == NULL);

  CHECK_OK(alloy_sym_new(st, "batch", 1, 64, &a));
  CHECK_OK(alloy_sym_new(st, "batch", 1, 64, &b));
  CHECK(alloy_dim_same(a, b));
  alloy_error *e = alloy_sym_new(st, "batch", 1, 65, &b);
  REQUIRE(e != NULL);
  CHECK_STR(alloy_error_message(e), "symbol batch already has range [1, 64], not [1, 65]");
  alloy_error_free(e);
  e = alloy_sym_new(st, "2x", 0, 1, &b);
  CHECK(e != NULL);
  alloy_error_free(e);
  e = alloy_sym_new(st, "lo_gt_hi", 5, 1, &b);
  CHECK(e != NULL);
  alloy_error_free(e);
  alloy_dim found;
  CHECK(alloy_sym_find(st, "batch_size", 5, &found));
  CHECK(alloy_dim_same(found, a));
  CHECK(!alloy_sym_find(st, "batc", 4, &found));
  CHECK(alloy_sym_unbacked(st, 3, 2).value == 0 && alloy_symtab_error(st) != NULL);
  alloy_symtab_free(st);
  alloy_symtab_free(NULL);
}

/* Random expressions built through the API must evaluate like the same
 * operations done on the numbers, stay inside their ranges and survive a
 * print/parse round trip: this checks every simplification for soundness. */
typedef struct {
  alloy_dim d;
  int64_t v[5]; /* value under each binding */
} sample;

TEST(sym_random_expressions_agree_with_numbers) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_dim s0, s1, s2;
  CHECK_OK(alloy_sym_new(st, "s0", 0, 50, &s0));
  CHECK_OK(alloy_sym_new(st, "s1", 1, 10, &s1));
  CHECK_OK(alloy_sym_new(st, "s2", -5, 5, &s2));
  static const int64_t binds[5][3] = {{0, 1, -5}, {7, 3, 0}, {50, 10, 5}, {13, 4, -2}, {1, 7, 3}};
  sample pool[64];
  int n = 0;
  alloy_dim base[6] = {s0, s1, s2, C(1), C(3), C(-2)};
  for (; n < 6; n++) {
    pool[n].d = base[n];
    for (int b = 0; b < 5; b++) pool[n].v[b] = n < 3 ? binds[b][n] : base[n].value;
  }
  unsigned seed = 7;
  for (int iter = 0; iter < 3000; iter++) {
    seed = seed * 1103515245u + 12345u;
    sample *x = &pool[(seed >> 8) % (unsigned)n], *y = &pool[(seed >> 16) % (unsigned)n];
    int op = (int)((seed >> 24) % 7);
    /* divide only by things that are never 0 under any binding */
    if (op == 3 || op == 4) {
      bool ok = true;
      int64_t lo, hi;
      alloy_dim_range(y->d, &lo, &hi);
      ok = lo >= 1 || hi <= -1;
      if (!ok) continue;
    }
    sample r;
    switch (op) {
    case 0: r.d = alloy_dim_add(st, x->d, y->d); break;
    case 1: r.d = alloy_dim_sub(st, x->d, y->d); break;
    case 2: r.d = alloy_dim_mul(st, x->d, y->d); break;
    case 3: r.d = alloy_dim_floordiv(st, x->d, y->d); break;
    case 4: r.d = alloy_dim_mod(st, x->d, y->d); break;
    case 5: r.d = alloy_dim_min(st, x->d, y->d); break;
    default: r.d = alloy_dim_max(st, x->d, y->d); break;
    }
    for (int b = 0; b < 5; b++) {
      alloy_dim xv = C(x->v[b]), yv = C(y->v[b]);
      alloy_dim c = op == 0 ? alloy_dim_add(st, xv, yv)
                  : op == 1 ? alloy_dim_sub(st, xv, yv)
                  : op == 2 ? alloy_dim_mul(st, xv, yv)
                  : op == 3 ? alloy_dim_floordiv(st, xv, yv)
                  : op == 4 ? alloy_dim_mod(st, xv, yv)
                  : op == 5 ? alloy_dim_min(st, xv, yv)
                            : alloy_dim_max(st, xv, yv);
      r.v[b] = c.value;
    }
    if (alloy_symtab_error(st)) { /* grew too big: start the pool over */
      alloy_symtab_clear_error(st);
      n = 6;
      continue;
    }
    for (int b = 0; b < 5; b++) {
      int64_t got = 0, lo, hi;
      alloy_error *e = alloy_dim_eval(st, r.d, binds[b], NULL, 3, &got);
      if (e && strstr(alloy_error_message(e), "overflow")) {
        alloy_error_free(e); /* an expanded term may overflow where the value does not */
        continue;
      }
      if (e) {
        harness_fail(__FILE__, __LINE__, "eval %s: %s", S(r.d), alloy_error_message(e));
        alloy_error_free(e);
        continue;
      }
      if (got != r.v[b])
        harness_fail(__FILE__, __LINE__, "%s under binding %d is %lld, expected %lld", S(r.d),
                     b, (long long)got, (long long)r.v[b]);
      alloy_dim_range(r.d, &lo, &hi);
      if (got < lo || got > hi)
        harness_fail(__FILE__, __LINE__, "%s = %lld outside its range [%lld, %lld]", S(r.d),
                     (long long)got, (long long)lo, (long long)hi);
    }
    char buf[4096];
    size_t len = alloy_dim_print(r.d, buf, sizeof buf);
    if (len < sizeof buf) {
      alloy_dim back = P(st, buf);
      if (!alloy_dim_same(back, r.d))
        harness_fail(__FILE__, __LINE__, "\"%s\" parsed back as \"%s\"", buf, S(back));
    }
    if (len > 120) continue; /* keep the pool to readable sizes */
    if (n < 64) pool[n++] = r;
    else pool[6 + (seed >> 4) % 58] = r;
  }
  alloy_symtab_free(st);
}

/* Interning shares subexpressions but printing walks the tree: nesting that
 * doubles the tree each step must stop with the sticky error, not grow. */
TEST(sym_tree_size_is_bounded) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_dim s0, s1;
  CHECK_OK(alloy_sym_new(st, "s0", 1, 100, &s0));
  CHECK_OK(alloy_sym_new(st, "s1", 1, 100, &s1));
  alloy_dim x = s0;
  int steps = 0;
  while (!alloy_symtab_error(st) && steps < 40) {
    alloy_dim lo = alloy_dim_min(st, x, s1), hi = alloy_dim_max(st, x, s1);
    x = alloy_dim_mul(st, alloy_dim_add(st, lo, alloy_dim_const(1)),
                      alloy_dim_add(st, hi, alloy_dim_const(2)));
    steps++;
  }
  CHECK(alloy_symtab_error(st) != NULL);
  CHECK(steps < 40);
  CHECK(alloy_dim_print(x, NULL, 0) < 100000);
  alloy_symtab_free(st);
}
