/*
 * conformance/compare.h: comparing a backend's output with PyTorch's, under
 * the tolerances of DESIGN.md ("Conformance tolerances").
 */
#ifndef ALLOY_CONFORM_COMPARE_H
#define ALLOY_CONFORM_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "alloy/runtime.h"
#include "alloy/safetensors.h"

/* The tolerance for results of dtype t (of op, for per-op exceptions):
 * a result passes when |got - want| <= atol + rtol * |want|. */
typedef struct conform_tolerance {
  double rtol, atol;
} conform_tolerance;
conform_tolerance conform_tolerance_for(const char *op, alloy_dtype t);

/* Whole models (`alloy run --check`, the golden models of the suite) are
 * checked against PyTorch's eager outputs, and a whole model accumulates
 * rounding differently from PyTorch's kernels (other summation orders,
 * other GEMM blocking), so the per-op tolerances are too tight: float32
 * uses rtol = atol = 1e-4, as the issue that defines --check says; the other
 * float dtypes keep their per-op values; integers stay exact. */
conform_tolerance conform_model_tolerance(alloy_dtype t);

/* True when got matches want: same dtype and shape, every element within
 * tolerance (NaN equals NaN, infinities must match exactly, integers and
 * bools exactly). On mismatch writes "max abs err A, max rel err R, first
 * mismatch at index [i, j]: got X, expected Y" to why. */
bool conform_compare(const char *op, const alloy_host_tensor *got,
                     const alloy_st_entry *want, char *why, size_t cap);

/* Compares under tolerance tol: true when every element is within it.
 * *max_abs and *max_rel get the largest errors over the finite elements
 * (infinite when the shapes differ); on failure why says where. */
bool conform_measure(const alloy_host_tensor *got, const alloy_st_entry *want,
                     conform_tolerance tol, double *max_abs, double *max_rel, char *why,
                     size_t cap);

/* For ops whose index output may pick any of equal values (see "Ties in
 * index outputs" in the golden README): true when every index of got
 * selects, along dim of self, a value equal to the one want's index
 * selects. An index tensor of one rank less than self had dim reduced. */
bool conform_ties_ok(const char *op, const alloy_host_tensor *got,
                     const alloy_st_entry *want, const alloy_st_entry *self,
                     int64_t dim);
/* Element i (row-major) of a stored tensor, as double. */
double conform_load(const alloy_st_entry *e, int64_t i);

/* The ops that may break ties their own way. */
bool conform_op_has_ties(const char *op);

#endif
