/*
 * ir/arena.c: the bump allocator behind graphs and the registry. Objects
 * that live and die together are carved out of large blocks and released in
 * one sweep, which is why graph code never frees a node or a value by itself.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

struct alloy_arena_block {
  alloy_arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

void *alloy_arena_alloc(alloy_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  alloy_arena_block *b = a->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
    b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->used = 0;
    b->cap = cap;
    /* An oversized request gets a private block behind the current one, so
     * the current block's free space is not wasted. */
    if (a->head && size > ARENA_BLOCK) {
      b->next = a->head->next;
      a->head->next = b;
    } else {
      b->next = a->head;
      a->head = b;
    }
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

char *alloy_arena_strndup(alloy_arena *a, const char *s, size_t n) {
  char *p = alloy_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *alloy_arena_strdup(alloy_arena *a, const char *s) {
  return alloy_arena_strndup(a, s, strlen(s));
}

void alloy_arena_free(alloy_arena *a) {
  alloy_arena_block *b = a->head;
  while (b) {
    alloy_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
}

alloy_error *alloy_arg_copy(alloy_arena *a, const alloy_arg *src,
                            alloy_arg *dst) {
  *dst = *src;
  if (src->kind == ALLOY_ARG_STR) {
    if (!(dst->u.s = alloy_arena_strdup(a, src->u.s)))
      return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  } else if (src->kind == ALLOY_ARG_LIST) {
    int n = src->u.list.n;
    alloy_arg *items = NULL;
    if (n > 0 && !(items = alloy_arena_alloc(a, sizeof *items * (size_t)n)))
      return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < n; i++) {
      alloy_error *e = alloy_arg_copy(a, &src->u.list.items[i], &items[i]);
      if (e) return e;
    }
    dst->u.list.items = items;
  }
  return NULL;
}

void alloy_arg_for_each_value(const alloy_arg *a, alloy_arg_value_fn fn,
                              void *ctx) {
  if (a->kind == ALLOY_ARG_VALUE) {
    fn(a->u.value, ctx);
  } else if (a->kind == ALLOY_ARG_LIST) {
    for (int i = 0; i < a->u.list.n; i++)
      alloy_arg_for_each_value(&a->u.list.items[i], fn, ctx);
  }
}

uint64_t alloy_hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}
