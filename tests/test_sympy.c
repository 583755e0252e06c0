/*
 * tests/test_sympy.c: the sympy srepr reader (ir/sympy.c): each head it
 * accepts, compared in canonical form with dims built through alloy/sym.h;
 * the symbols it creates and their ranges; and its errors, with columns, on
 * malformed, truncated, overflowing and hostile text.
 */
#include "ir/sympy.h"

#include <stdlib.h>

#include "harness.h"
#include "testsym.h"

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

/* Parses text as a whole; a failure is reported and gives the constant -999. */
static alloy_dim SP(alloy_symtab *st, const char *text) {
  alloy_dim d = C(-999);
  alloy_error *e = alloy_sympy_parse(st, text, strlen(text), &d);
  if (e) {
    harness_fail(__FILE__, __LINE__, "sympy \"%s\": %s", text, alloy_error_message(e));
    alloy_error_free(e);
  }
  return d;
}

/* The message of the error text gives (freed), or "" when it parsed; code is
 * set to the error's code. The table must come out without a sticky error. */
static const char *err_of(alloy_symtab *st, const char *text, alloy_error_code *code) {
  static char msg[512];
  alloy_dim d;
  alloy_error *e = alloy_sympy_parse(st, text, strlen(text), &d);
  msg[0] = '\0';
  if (code) *code = 0;
  if (e) {
    snprintf(msg, sizeof msg, "%s", alloy_error_message(e));
    if (code) *code = alloy_error_code_of(e);
    alloy_error_free(e);
  }
  CHECK(alloy_symtab_error(st) == NULL);
  return msg;
}

/* A table holding s0 in [1, inf] and s1 in [0, inf]. */
static alloy_symtab *table2(alloy_dim *s0, alloy_dim *s1) {
  alloy_symtab *st = alloy_symtab_new();
  CHECK_OK(alloy_sym_new(st, "s0", 1, ALLOY_SYM_INF, s0));
  CHECK_OK(alloy_sym_new(st, "s1", 0, ALLOY_SYM_INF, s1));
  return st;
}

#define S0 "Symbol('s0', positive=True, integer=True)"
#define S1 "Symbol('s1', integer=True, nonnegative=True)"

TEST(sympy_integer) {
  alloy_symtab *st = alloy_symtab_new();
  CHECK(alloy_dim_same(SP(st, "Integer(5)"), C(5)));
  CHECK(alloy_dim_same(SP(st, "Integer(-1)"), C(-1)));
  CHECK(alloy_dim_same(SP(st, "Integer(0)"), C(0)));
  CHECK(alloy_dim_same(SP(st, "Integer(007)"), C(7)));
  CHECK(alloy_dim_same(SP(st, "Integer(9223372036854775807)"), C(INT64_MAX)));
  CHECK(alloy_dim_same(SP(st, "Integer(-9223372036854775808)"), C(INT64_MIN)));
  CHECK_INT(alloy_symtab_count(st), 0);
  alloy_symtab_free(st);
}

TEST(sympy_symbol_creates_with_ranges) {
  alloy_symtab *st = alloy_symtab_new();
  int64_t lo, hi;
  alloy_dim d = SP(st, "Symbol('s77', positive=True, integer=True)");
  REQUIRE(alloy_symtab_count(st) == 1);
  CHECK_STR(alloy_symtab_name(st, 0), "s77");
  CHECK(alloy_dim_same(d, alloy_symtab_symbol(st, 0)));
  CHECK(!alloy_symtab_is_unbacked(st, 0));
  alloy_symtab_range(st, 0, &lo, &hi);
  CHECK_INT(lo, 1);
  CHECK(hi == ALLOY_SYM_INF);

  SP(st, "Symbol('s5', integer=True, nonnegative=True)");
  SP(st, "Symbol('s6', integer=True)");
  SP(st, "Symbol('u12', integer=True, positive=True)");
  SP(st, "Symbol('u', integer=True)");
  SP(st, "Symbol('u1x', integer=True)");
  SP(st, "Symbol('s7', positive=False, integer=True, nonnegative=False)");
  REQUIRE(alloy_symtab_count(st) == 7);
  alloy_symtab_range(st, 1, &lo, &hi);
  CHECK_INT(lo, 0);
  alloy_symtab_range(st, 2, &lo, &hi);
  CHECK(lo == INT64_MIN); /* unbounded below */
  CHECK(hi == ALLOY_SYM_INF);
  /* u<digits> is data-dependent, in [0, inf] whatever its assumptions */
  CHECK_STR(alloy_symtab_name(st, 3), "u12");
  CHECK(alloy_symtab_is_unbacked(st, 3));
  alloy_symtab_range(st, 3, &lo, &hi);
  CHECK_INT(lo, 0);
  CHECK(hi == ALLOY_SYM_INF);
  CHECK(!alloy_symtab_is_unbacked(st, 4));
  CHECK(!alloy_symtab_is_unbacked(st, 5));
  /* =False says nothing a lower bound can use */
  alloy_symtab_range(st, 6, &lo, &hi);
  CHECK(lo == INT64_MIN);
  alloy_symtab_free(st);
}

TEST(sympy_symbol_reuses_the_table) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_dim s77, u0;
  CHECK_OK(alloy_sym_new(st, "s77", 1, 64, &s77));
  CHECK_OK(alloy_sym_new_unbacked(st, "u0", 0, 10, &u0));
  /* the table's symbol wins over the text's assumptions */
  CHECK(alloy_dim_same(SP(st, "Symbol('s77', positive=True, integer=True)"), s77));
  CHECK(alloy_dim_same(SP(st, "Symbol('s77', integer=True)"), s77));
  CHECK(alloy_dim_same(SP(st, "Symbol('u0', integer=True)"), u0));
  CHECK(alloy_dim_same(SP(st, "Add(Symbol('s77', integer=True), Symbol('s77', integer=True))"),
                       alloy_dim_mul(st, C(2), s77)));
  CHECK_INT(alloy_symtab_count(st), 2);
  int64_t lo, hi;
  alloy_symtab_range(st, 0, &lo, &hi);
  CHECK_INT(hi, 64);
  alloy_symtab_free(st);
}

TEST(sympy_assumptions_any_order_and_quotes) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  CHECK(alloy_dim_same(SP(st, "Symbol('s0', integer=True, positive=True)"), s0));
  CHECK(alloy_dim_same(SP(st, "Symbol(\"s0\", positive=True, integer=True)"), s0));
  CHECK(alloy_dim_same(SP(st,
                          "Symbol('s0', real=True, finite=True, integer=True, "
                          "positive=True, commutative=True)"),
                       s0));
  /* a quote of the other kind is just a character of the name, and not an
   * identifier's */
  CHECK_STR(err_of(st, "Symbol(\"s'0\", integer=True)", NULL),
            "column 9: expected a symbol name that is an identifier of at most 127 "
            "characters, found 's'0'");
  alloy_symtab_free(st);
}

TEST(sympy_whitespace_between_tokens) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  CHECK(alloy_dim_same(SP(st, "  Mul ( Integer ( 16 ) ,\n\tSymbol ( 's0' , integer = True ) )\r\n"),
                       alloy_dim_mul(st, C(16), s0)));
  CHECK(alloy_dim_same(SP(st, "Rational( 6 ,  3 )"), C(2)));
  alloy_symtab_free(st);
}

TEST(sympy_add_mul_as_torch_writes_them) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  CHECK(alloy_dim_same(SP(st, "Mul(Integer(16), " S0 ")"), alloy_dim_mul(st, C(16), s0)));
  alloy_dim want = alloy_dim_add(st, alloy_dim_mul(st, C(2), s0), C(-1));
  CHECK(alloy_dim_same(SP(st, "Add(Mul(Integer(2), " S0 "), Integer(-1))"), want));
  CHECK_STR(S(want), "2*s0 - 1");
  /* any arity, any order: the canonical form does not care */
  CHECK(alloy_dim_same(SP(st, "Add(" S0 ")"), s0));
  CHECK(alloy_dim_same(SP(st, "Mul(" S1 ")"), s1));
  CHECK(alloy_dim_same(SP(st, "Add(Integer(1), " S1 ", " S0 ", " S0 ", Integer(2))"),
                       P(st, "2*s0 + s1 + 3")));
  CHECK(alloy_dim_same(SP(st, "Mul(" S1 ", Integer(3), " S0 ")"), P(st, "3*s0*s1")));
  CHECK(alloy_dim_same(SP(st, "Mul(Add(" S0 ", Integer(1)), Add(" S0 ", Integer(-1)))"),
                       P(st, "s0*s0 - 1")));
  CHECK(alloy_dim_same(SP(st, "Add(" S0 ", Mul(Integer(-1), " S0 "))"), C(0)));
  alloy_symtab_free(st);
}

TEST(sympy_pow) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  CHECK(alloy_dim_same(SP(st, "Pow(" S0 ", Integer(2))"), alloy_dim_mul(st, s0, s0)));
  CHECK(alloy_dim_same(SP(st, "Pow(" S0 ", Integer(1))"), s0));
  CHECK(alloy_dim_same(SP(st, "Pow(" S0 ", Integer(0))"), C(1)));
  CHECK(alloy_dim_same(SP(st, "Pow(Add(" S0 ", Integer(1)), Integer(3))"),
                       P(st, "s0*s0*s0 + 3*s0*s0 + 3*s0 + 1")));
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(2), Integer(10))"), C(1024)));
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(2), Integer(62))"), C(INT64_C(1) << 62)));
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(-2), Integer(63))"), C(INT64_MIN)));
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(3), Integer(39))"), C(INT64_C(4052555153018976267))));
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(0), Integer(0))"), C(1)));
  /* a huge exponent is a few squarings, not a long loop */
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(1), Integer(9223372036854775807))"), C(1)));
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(-1), Integer(9223372036854775807))"), C(-1)));
  CHECK(alloy_dim_same(SP(st, "Pow(Integer(0), Integer(9223372036854775807))"), C(0)));
  /* the exponent may be any expression that is a constant */
  CHECK(alloy_dim_same(SP(st, "Pow(" S0 ", Add(Integer(1), Integer(1)))"),
                       alloy_dim_mul(st, s0, s0)));
  alloy_symtab_free(st);
}

TEST(sympy_pow_limits) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  alloy_error_code code;
  CHECK_STR(err_of(st, "Pow(Integer(2), Integer(63))", &code),
            "column 1: Pow: int64 overflow in mul");
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  CHECK_STR(err_of(st, "Pow(Integer(3), Integer(9223372036854775807))", NULL),
            "column 1: Pow: int64 overflow in mul");
  CHECK_STR(err_of(st, "Pow(" S0 ", Integer(-1))", &code),
            "column 48: unsupported Pow exponent: expected a constant integer >= 0");
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  CHECK_STR(err_of(st, "Pow(Integer(2), " S0 ")", NULL),
            "column 17: unsupported Pow exponent: expected a constant integer >= 0");
  CHECK_STR(err_of(st, "Pow(Integer(2), Rational(1, 2))", NULL),
            "column 17: unsupported Rational(1, 2): a size must be an integer");
  /* a symbolic base runs into the table's size limit within a few steps */
  const char *msg = err_of(st, "Pow(" S0 ", Integer(9223372036854775807))", &code);
  CHECK(strncmp(msg, "column 1: Pow: ", 15) == 0);
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  msg = err_of(st, "Pow(Add(" S0 ", " S1 "), Integer(100000))", NULL);
  CHECK(strncmp(msg, "column 1: Pow: ", 15) == 0);
  CHECK_STR(err_of(st, "Pow(" S0 ")", NULL), "column 46: expected ',', found ')'");
  CHECK_STR(err_of(st, "Pow(" S0 ", Integer(1), Integer(1))", NULL),
            "column 58: expected ')', found ','");
  alloy_symtab_free(st);
}

TEST(sympy_division_and_modulo) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  alloy_dim half = alloy_dim_floordiv(st, s0, C(2));
  CHECK(alloy_dim_same(SP(st, "FloorDiv(" S0 ", Integer(2))"), half));
  CHECK(alloy_dim_same(SP(st, "CleanDiv(" S0 ", Integer(2))"), half));
  CHECK(alloy_dim_same(SP(st, "FloorDiv(Mul(Integer(12), " S0 "), Integer(4))"),
                       alloy_dim_mul(st, C(3), s0)));
  CHECK(alloy_dim_same(SP(st, "FloorDiv(Integer(-7), Integer(2))"), C(-4)));
  CHECK(alloy_dim_same(SP(st, "Mod(" S0 ", Integer(4))"), alloy_dim_mod(st, s0, C(4))));
  CHECK(alloy_dim_same(SP(st, "PythonMod(" S0 ", " S1 ")"), alloy_dim_mod(st, s0, s1)));
  /* Python's modulo: the remainder has the divisor's sign */
  CHECK(alloy_dim_same(SP(st, "Mod(Integer(-7), Integer(2))"), C(1)));
  CHECK(alloy_dim_same(SP(st, "PythonMod(Integer(7), Integer(-2))"), C(-1)));
  CHECK(alloy_dim_same(SP(st, "ModularIndexing(" S0 ", Integer(2), Integer(4))"),
                       alloy_dim_mod(st, half, C(4))));
  CHECK(alloy_dim_same(SP(st, "ModularIndexing(Integer(13), Integer(2), Integer(4))"), C(2)));
  CHECK(alloy_dim_same(SP(st, "ModularIndexing(Mul(Integer(8), " S0 "), Integer(2), Integer(4))"),
                       C(0)));
  alloy_error_code code;
  CHECK_STR(err_of(st, "FloorDiv(" S0 ", Integer(0))", &code),
            "column 1: FloorDiv: division by zero in floordiv");
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  CHECK_STR(err_of(st, "Add(Integer(1), Mod(Integer(1), Integer(0)))", NULL),
            "column 17: Mod: division by zero in mod");
  CHECK_STR(err_of(st, "ModularIndexing(Integer(1), Integer(1), Integer(0))", NULL),
            "column 1: ModularIndexing: division by zero in mod");
  CHECK_STR(err_of(st, "FloorDiv(Integer(1))", NULL), "column 20: expected ',', found ')'");
  CHECK_STR(err_of(st, "ModularIndexing(Integer(1), Integer(1))", NULL),
            "column 39: expected ',', found ')'");
  alloy_symtab_free(st);
}

TEST(sympy_min_max) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  CHECK(alloy_dim_same(SP(st, "Max(Integer(1), " S0 ")"), s0)); /* s0 >= 1 */
  CHECK(alloy_dim_same(SP(st, "Min(Integer(0), " S0 ")"), C(0)));
  CHECK(alloy_dim_same(SP(st, "Max(" S0 ", " S1 ")"), alloy_dim_max(st, s0, s1)));
  CHECK(alloy_dim_same(SP(st, "Min(" S1 ", Integer(4), " S0 ")"),
                       alloy_dim_min(st, alloy_dim_min(st, s1, C(4)), s0)));
  CHECK(alloy_dim_same(SP(st, "Max(Integer(3), Integer(-2), Integer(9), Integer(4))"), C(9)));
  CHECK(alloy_dim_same(SP(st, "Min(" S0 ")"), s0));
  alloy_symtab_free(st);
}

TEST(sympy_rational) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_error_code code;
  CHECK(alloy_dim_same(SP(st, "Rational(4, 2)"), C(2)));
  CHECK(alloy_dim_same(SP(st, "Rational(-6, 3)"), C(-2)));
  CHECK(alloy_dim_same(SP(st, "Rational(6, -3)"), C(-2)));
  CHECK(alloy_dim_same(SP(st, "Rational(0, 5)"), C(0)));
  CHECK(alloy_dim_same(SP(st, "Rational(-9223372036854775808, 1)"), C(INT64_MIN)));
  CHECK_STR(err_of(st, "Rational(1, 2)", &code),
            "column 1: unsupported Rational(1, 2): a size must be an integer");
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  CHECK_STR(err_of(st, "Rational(1, 0)", &code), "column 13: expected a non-zero denominator");
  CHECK_INT(code, ALLOY_ERR_PARSE);
  CHECK_STR(err_of(st, "Rational(-9223372036854775808, -1)", NULL),
            "column 1: Rational: int64 overflow");
  CHECK_STR(err_of(st, "Rational(1)", NULL), "column 11: expected ',', found ')'");
  CHECK_STR(err_of(st, "Rational(Integer(1), Integer(1))", NULL),
            "column 10: expected an integer, found 'I'");
  alloy_symtab_free(st);
}

TEST(sympy_unsupported_heads) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_error_code code;
  CHECK_STR(err_of(st, "Float('1.5', precision=53)", &code),
            "column 1: unsupported sympy function 'Float'");
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  CHECK_STR(err_of(st, "Add(Integer(1), CeilDiv(Integer(3), Integer(2)))", NULL),
            "column 17: unsupported sympy function 'CeilDiv'");
  CHECK_STR(err_of(st, "Mul(Integer(2), FloorToInt(Integer(3)))", NULL),
            "column 17: unsupported sympy function 'FloorToInt'");
  CHECK_STR(err_of(st, "oo", NULL), "column 1: unsupported sympy function 'oo'");
  CHECK_STR(err_of(st, "integer", NULL), "column 1: unsupported sympy function 'integer'");
  /* names are case-sensitive, as in Python */
  CHECK_STR(err_of(st, "add(Integer(1))", NULL), "column 1: unsupported sympy function 'add'");
  CHECK_STR(err_of(st, "Symbol('x')", &code),
            "column 1: unsupported Symbol 'x': a size must be declared integer=True");
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  CHECK_STR(err_of(st, "Symbol('x', integer=False)", NULL),
            "column 1: unsupported Symbol 'x': a size must be declared integer=True");
  CHECK_STR(err_of(st, "Symbol('x', positive=True, real=True)", NULL),
            "column 1: unsupported Symbol 'x': a size must be declared integer=True");
  CHECK_INT(alloy_symtab_count(st), 0);
  alloy_symtab_free(st);
}

TEST(sympy_syntax_errors_name_the_column) {
  alloy_symtab *st = alloy_symtab_new();
  static const struct {
    const char *text, *msg;
  } cases[] = {
      {"", "column 1: expected a sympy expression such as Integer(...), found the end of the text"},
      {"   ",
       "column 4: expected a sympy expression such as Integer(...), found the end of the text"},
      {"5", "column 1: expected a sympy expression such as Integer(...), found '5'"},
      {"(Integer(1))", "column 1: expected a sympy expression such as Integer(...), found '('"},
      {"Integer", "column 8: expected '(', found the end of the text"},
      {"Integer 5", "column 9: expected '(', found '5'"},
      {"Integer()", "column 9: expected an integer, found ')'"},
      {"Integer(- 1)", "column 10: expected an integer, found ' '"},
      {"Integer(1.5)", "column 10: expected ')', found '.'"},
      {"Integer(1) Integer(2)", "column 12: expected the end of the text, found 'I'"},
      {"Integer(1))", "column 11: expected the end of the text, found ')'"},
      {"Add(Integer(1), Integer(2)", "column 27: expected ',' or ')', found the end of the text"},
      {"Add(Integer(1),, Integer(2))",
       "column 16: expected a sympy expression such as Integer(...), found ','"},
      {"Add()", "column 5: expected a sympy expression such as Integer(...), found ')'"},
      {"Add(Integer(1) Integer(2))", "column 16: expected ',' or ')', found 'I'"},
      {"Mul(Integer(1),)",
       "column 16: expected a sympy expression such as Integer(...), found ')'"},
      {"Symbol(s0, integer=True)", "column 8: expected a quoted symbol name, found 's'"},
      {"Symbol('s0, integer=True)",
       "column 26: expected ' to end the symbol name, found the end of the text"},
      {"Symbol('', integer=True)",
       "column 9: expected a symbol name that is an identifier of at most 127 characters, "
       "found ''"},
      {"Symbol('a b', integer=True)",
       "column 9: expected a symbol name that is an identifier of at most 127 characters, "
       "found 'a b'"},
      {"Symbol('0s', integer=True)",
       "column 9: expected a symbol name that is an identifier of at most 127 characters, "
       "found '0s'"},
      {"Symbol('s0' integer=True)", "column 13: expected ',' or ')', found 'i'"},
      {"Symbol('s0', =True)", "column 14: expected an assumption such as integer=True, found '='"},
      {"Symbol('s0', integer)", "column 21: expected '=', found ')'"},
      {"Symbol('s0', integer=1)", "column 22: expected True or False, found '1'"},
      {"Symbol('s0', integer=true)", "column 22: expected True or False, found 'true'"},
      {"Symbol('s0', integer=True, integer=True)",
       "column 28: expected each assumption once, found integer again"},
      {"Symbol('s0', integer=True,)",
       "column 27: expected an assumption such as integer=True, found ')'"},
      {"Integer(1)\x01", "column 11: expected the end of the text, found byte 0x01"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    alloy_error_code code;
    const char *got = err_of(st, cases[i].text, &code);
    if (strcmp(got, cases[i].msg) != 0)
      harness_fail(__FILE__, __LINE__, "\"%s\": got \"%s\", expected \"%s\"", cases[i].text, got,
                   cases[i].msg);
  }
  CHECK_INT(alloy_symtab_count(st), 0);
  alloy_symtab_free(st);
}

TEST(sympy_integer_overflow) {
  alloy_dim s0, s1;
  alloy_symtab *st = table2(&s0, &s1);
  alloy_error_code code;
  CHECK_STR(err_of(st, "Integer(9223372036854775808)", &code),
            "column 9: integer literal outside the int64 range");
  CHECK_INT(code, ALLOY_ERR_UNSUPPORTED);
  CHECK_STR(err_of(st, "Integer(-9223372036854775809)", NULL),
            "column 9: integer literal outside the int64 range");
  CHECK_STR(err_of(st, "Integer(99999999999999999999999999999999999999)", NULL),
            "column 9: integer literal outside the int64 range");
  CHECK_STR(err_of(st, "Add(Integer(9223372036854775807), Integer(1))", NULL),
            "column 1: Add: int64 overflow in add");
  CHECK_STR(err_of(st, "Mul(Integer(4611686018427387904), Integer(2))", NULL),
            "column 1: Mul: int64 overflow in mul");
  /* the failed arithmetic leaves no sticky error (err_of checks) and the
   * table goes on working */
  CHECK(alloy_dim_same(SP(st, "Add(Integer(9223372036854775806), Integer(1))"), C(INT64_MAX)));
  alloy_symtab_free(st);
}

TEST(sympy_refuses_a_table_with_a_pending_error) {
  alloy_dim s0, s1, d;
  alloy_symtab *st = table2(&s0, &s1);
  alloy_dim_floordiv(st, s0, C(0));
  REQUIRE(alloy_symtab_error(st) != NULL);
  alloy_error *e = alloy_sympy_parse(st, "Integer(1)", 10, &d);
  REQUIRE(e != NULL);
  CHECK_INT(alloy_error_code_of(e), ALLOY_ERR_INVALID_ARGUMENT);
  alloy_error_free(e);
  CHECK(alloy_symtab_error(st) != NULL); /* the caller's error is left alone */
  alloy_symtab_clear_error(st);
  e = alloy_sympy_parse(NULL, "Integer(1)", 10, &d);
  CHECK(e != NULL);
  alloy_error_free(e);
  e = alloy_sympy_parse(st, NULL, 3, &d);
  CHECK(e != NULL);
  alloy_error_free(e);
  e = alloy_sympy_parse(st, NULL, 0, &d);
  CHECK(e != NULL && strstr(alloy_error_message(e), "column 1: expected") != NULL);
  alloy_error_free(e);
  alloy_symtab_free(st);
}

TEST(sympy_nesting_is_capped) {
  alloy_symtab *st = alloy_symtab_new();
  /* 63 Adds around an Integer: 64 calls deep, the most accepted */
  char *text = malloc(64 * 8 + 32);
  REQUIRE(text != NULL);
  size_t n = 0;
  for (int i = 0; i < 63; i++) n += (size_t)sprintf(text + n, "Add(");
  n += (size_t)sprintf(text + n, "Integer(7)");
  for (int i = 0; i < 63; i++) text[n++] = ')';
  text[n] = '\0';
  CHECK(alloy_dim_same(SP(st, text), C(7)));
  n = (size_t)sprintf(text, "Add(");
  for (int i = 0; i < 63; i++) n += (size_t)sprintf(text + n, "Add(");
  n += (size_t)sprintf(text + n, "Integer(7)");
  for (int i = 0; i < 64; i++) text[n++] = ')';
  text[n] = '\0';
  CHECK_STR(err_of(st, text, NULL), "column 257: expression nested deeper than 64 calls");
  free(text);
  /* far deeper input is refused the same way, not with a stack overflow */
  size_t deep = 1000000;
  text = malloc(deep * 4);
  REQUIRE(text != NULL);
  for (size_t i = 0; i < deep; i++) memcpy(text + 4 * i, "Mul(", 4);
  alloy_dim d;
  alloy_error *e = alloy_sympy_parse(st, text, deep * 4, &d);
  CHECK(e != NULL && strstr(alloy_error_message(e), "nested deeper") != NULL);
  alloy_error_free(e);
  free(text);
  alloy_symtab_free(st);
}

/* Every proper prefix of a valid expression is an error, never a read past
 * its end: each prefix is copied to a buffer of exactly its size, so that
 * ASan builds catch a read of one byte more. */
TEST(sympy_truncated_text_errors) {
  static const char *const texts[] = {
      "Add(Mul(Integer(2), Symbol('s0', integer=True, positive=True)), Integer(-1))",
      "ModularIndexing(Pow(Symbol(\"u3\", integer=True), Integer(2)), Rational(8, 4), "
      "Max(Integer(1), Min(Symbol('s9', nonnegative=True, integer=True), Integer(4))))",
      "PythonMod(FloorDiv(CleanDiv(Integer(100), Integer(3)), Integer(2)), Mod(Integer(7), "
      "Integer(4)))",
  };
  for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
    alloy_symtab *st = alloy_symtab_new();
    size_t len = strlen(texts[t]);
    alloy_dim d;
    for (size_t n = 0; n <= len; n++) {
      char *buf = malloc(n ? n : 1);
      REQUIRE(buf != NULL);
      memcpy(buf, texts[t], n);
      alloy_error *e = alloy_sympy_parse(st, buf, n, &d);
      if (n < len && !e) harness_fail(__FILE__, __LINE__, "prefix %zu of text %zu parsed", n, t);
      if (n == len && e)
        harness_fail(__FILE__, __LINE__, "text %zu: %s", t, alloy_error_message(e));
      if (e && strncmp(alloy_error_message(e), "column ", 7) != 0)
        harness_fail(__FILE__, __LINE__, "no column: %s", alloy_error_message(e));
      alloy_error_free(e);
      free(buf);
    }
    CHECK(alloy_symtab_error(st) == NULL);
    alloy_symtab_free(st);
  }
}

TEST(sympy_reads_only_len_bytes) {
  alloy_symtab *st = alloy_symtab_new();
  const char text[] = "Integer(12)garbage";
  alloy_dim d = C(0);
  CHECK_OK(alloy_sympy_parse(st, text, 11, &d));
  CHECK(alloy_dim_same(d, C(12)));
  /* a NUL inside the text is a character like any other */
  alloy_error *e = alloy_sympy_parse(st, "Integer(1)\0", 11, &d);
  CHECK(e != NULL && strcmp(alloy_error_message(e),
                            "column 11: expected the end of the text, found byte 0x00") == 0);
  alloy_error_free(e);
  e = alloy_sympy_parse(st, "Symbol('s\0', integer=True)", 26, &d);
  CHECK(e != NULL && strstr(alloy_error_message(e), "column 9: expected a symbol name") != NULL);
  alloy_error_free(e);
  CHECK_INT(alloy_symtab_count(st), 0);
  alloy_symtab_free(st);
}

TEST(sympy_long_symbol_names) {
  alloy_symtab *st = alloy_symtab_new();
  char text[512];
  char name[200];
  memset(name, 'a', 127);
  name[127] = '\0';
  snprintf(text, sizeof text, "Symbol('%s', integer=True)", name);
  SP(st, text);
  CHECK_INT(alloy_symtab_count(st), 1);
  memset(name, 'a', 128);
  name[128] = '\0';
  snprintf(text, sizeof text, "Symbol('%s', integer=True)", name);
  const char *msg = err_of(st, text, NULL);
  CHECK(strncmp(msg, "column 9: expected a symbol name that is an identifier", 54) == 0);
  CHECK_INT(alloy_symtab_count(st), 1);
  alloy_symtab_free(st);
}
