/*
 * sdk/src/trace.c: tracing (alloy_trace_start / alloy_trace_stop of
 * alloy/runtime.h; trace_clock_ns, trace_on and trace_range of host.h, which
 * host.c hands to plugins as clock_ns, trace_enabled and trace_range).
 *
 * While a trace is on, every range is appended to one in-memory buffer under
 * a mutex: a range is [begin_ns, end_ns) of the monotonic clock on a track
 * ("queue 0", "compile") of a process (the host "alloy", or a plugin by
 * name). Strings are interned, so a range costs 24 bytes; past
 * TRACE_MAX_RANGES ranges the rest are dropped and counted. When no trace is
 * on, trace_range is one relaxed atomic load.
 *
 * alloy_trace_stop writes Chrome trace JSON (the "JSON Object Format" that
 * chrome://tracing and Perfetto open):
 *   {"displayTimeUnit":"ns","otherData":{"dropped_ranges":N},"traceEvents":[
 *    {"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"alloy"}},
 *    {"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"queue 0"}},
 *    {"name":"execute","cat":"alloy","ph":"X","ts":12.345,"dur":6.789,"pid":1,"tid":1},
 *    ...]}
 * pid numbers the process strings and tid the track strings within each
 * process, from 1 in order of first appearance; "cat" is the process; ts and
 * dur are microseconds from alloy_trace_start, to the nanosecond (a range
 * begun before the start is cut there). Strings are escaped for JSON, and
 * bytes that are not UTF-8 become U+FFFD. alloy_trace_stop(NULL) ends the
 * trace without writing it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdk/src/host.h"

/* 24 MiB of ranges at most (a few seconds of a busy run). */
#define TRACE_MAX_RANGES (1u << 20)

typedef struct trace_event {
  uint64_t begin_ns, end_ns;
  uint32_t track; /* index in tracks */
  uint32_t name;  /* index in strings */
} trace_event;

typedef struct trace_track {
  uint32_t process, name; /* indices in strings */
  uint32_t pid, tid;      /* numbered when written */
} trace_track;

/* An open-addressing table of indices (slot = index + 1; 0 is empty). */
typedef struct trace_index {
  uint32_t *slots;
  uint32_t cap; /* a power of two, or 0 */
} trace_index;

/* Everything a trace records; moved out whole by stop. */
typedef struct trace_data {
  uint64_t start_ns;
  uint64_t dropped;
  trace_event *events;
  uint32_t nevents, cap_events;
  char **strings;
  uint32_t nstrings, cap_strings;
  trace_index string_index;
  trace_track *tracks;
  uint32_t ntracks, cap_tracks;
  trace_index track_index;
} trace_data;

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool trace_active;
static trace_data trace; /* under trace_lock */

uint64_t trace_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool trace_on(void) { return atomic_load_explicit(&trace_active, memory_order_relaxed); }

/* ---- recording ----------------------------------------------------------- */

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* Makes room for one more entry in an index of n entries. */
static bool index_reserve(trace_index *ix, uint32_t n, uint64_t (*hash)(const trace_data *, uint32_t),
                          const trace_data *d) {
  if ((uint64_t)(n + 1) * 2 <= ix->cap) return true;
  uint32_t cap = ix->cap ? ix->cap * 2 : 64;
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t j = (uint32_t)hash(d, i) & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = i + 1;
  }
  free(ix->slots);
  ix->slots = slots;
  ix->cap = cap;
  return true;
}

static uint64_t string_hash(const trace_data *d, uint32_t i) { return alloy_hash_str(d->strings[i]); }

static uint64_t track_key(uint32_t process, uint32_t name) {
  return mix64(((uint64_t)process << 32) | name);
}

static uint64_t track_hash(const trace_data *d, uint32_t i) {
  return track_key(d->tracks[i].process, d->tracks[i].name);
}

static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return true;
  uint32_t ncap = *cap ? *cap * 2 : 256;
  void *p = realloc(*arr, elem * ncap);
  if (!p) return false;
  *arr = p;
  *cap = ncap;
  return true;
}

/* The index of s among the strings (copied in when new); UINT32_MAX when
 * memory runs out. */
static uint32_t intern(trace_data *d, const char *s) {
  if (!s) s = "?";
  uint64_t h = alloy_hash_str(s);
  if (d->string_index.cap) {
    uint32_t mask = d->string_index.cap - 1;
    for (uint32_t j = (uint32_t)h & mask; d->string_index.slots[j]; j = (j + 1) & mask)
      if (!strcmp(d->strings[d->string_index.slots[j] - 1], s)) return d->string_index.slots[j] - 1;
  }
  if (!index_reserve(&d->string_index, d->nstrings, string_hash, d) ||
      !grow((void **)&d->strings, &d->cap_strings, d->nstrings + 1, sizeof *d->strings))
    return UINT32_MAX;
  char *copy = strdup(s);
  if (!copy) return UINT32_MAX;
  uint32_t i = d->nstrings++, mask = d->string_index.cap - 1, j = (uint32_t)h & mask;
  d->strings[i] = copy;
  while (d->string_index.slots[j]) j = (j + 1) & mask;
  d->string_index.slots[j] = i + 1;
  return i;
}

static uint32_t track_of(trace_data *d, uint32_t process, uint32_t name) {
  uint64_t h = track_key(process, name);
  if (d->track_index.cap) {
    uint32_t mask = d->track_index.cap - 1;
    for (uint32_t j = (uint32_t)h & mask; d->track_index.slots[j]; j = (j + 1) & mask) {
      const trace_track *t = &d->tracks[d->track_index.slots[j] - 1];
      if (t->process == process && t->name == name) return d->track_index.slots[j] - 1;
    }
  }
  if (!index_reserve(&d->track_index, d->ntracks, track_hash, d) ||
      !grow((void **)&d->tracks, &d->cap_tracks, d->ntracks + 1, sizeof *d->tracks))
    return UINT32_MAX;
  uint32_t i = d->ntracks++, mask = d->track_index.cap - 1, j = (uint32_t)h & mask;
  d->tracks[i] = (trace_track){.process = process, .name = name};
  while (d->track_index.slots[j]) j = (j + 1) & mask;
  d->track_index.slots[j] = i + 1;
  return i;
}

static void record(trace_data *d, const char *process, const char *track, const char *name,
                   uint64_t begin_ns, uint64_t end_ns) {
  if (d->nevents >= TRACE_MAX_RANGES ||
      !grow((void **)&d->events, &d->cap_events, d->nevents + 1, sizeof *d->events)) {
    d->dropped++;
    return;
  }
  uint32_t p = intern(d, process), t = intern(d, track), n = intern(d, name);
  uint32_t k = p != UINT32_MAX && t != UINT32_MAX ? track_of(d, p, t) : UINT32_MAX;
  if (k == UINT32_MAX || n == UINT32_MAX) {
    d->dropped++;
    return;
  }
  d->events[d->nevents++] = (trace_event){begin_ns, end_ns, k, n};
}

void trace_range(const char *process, const char *track, const char *name, uint64_t begin_ns,
                 uint64_t end_ns) {
  if (!trace_on()) return;
  pthread_mutex_lock(&trace_lock);
  /* Checked again under the lock: stop may have taken the buffer since. */
  if (atomic_load_explicit(&trace_active, memory_order_relaxed))
    record(&trace, process ? process : "?", track ? track : "?", name ? name : "?", begin_ns,
           end_ns);
  pthread_mutex_unlock(&trace_lock);
}

static void trace_data_free(trace_data *d) {
  for (uint32_t i = 0; i < d->nstrings; i++) free(d->strings[i]);
  free(d->strings);
  free(d->string_index.slots);
  free(d->tracks);
  free(d->track_index.slots);
  free(d->events);
  memset(d, 0, sizeof *d);
}

alloy_error *alloy_trace_start(void) {
  pthread_mutex_lock(&trace_lock);
  bool busy = atomic_load_explicit(&trace_active, memory_order_relaxed);
  if (!busy) {
    trace_data_free(&trace);
    trace.start_ns = trace_clock_ns();
    atomic_store_explicit(&trace_active, true, memory_order_relaxed);
  }
  pthread_mutex_unlock(&trace_lock);
  if (busy)
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE,
                           "alloy_trace_start: a trace is already being recorded (one per "
                           "process at a time)");
  return NULL;
}

/* ---- writing ------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0. */
static int utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  int n;
  unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
  else return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (int i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  return n;
}

static void json_string(FILE *f, const char *text) {
  const unsigned char *s = (const unsigned char *)text;
  fputc('"', f);
  while (*s) {
    unsigned c = *s;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc((int)c, f);
      s++;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default: fprintf(f, "\\u%04x", c);
      }
      s++;
    } else if (c < 0x80) {
      fputc((int)c, f);
      s++;
    } else {
      int n = utf8_len(s);
      if (n) fwrite(s, 1, (size_t)n, f), s += n;
      else fputs("\\ufffd", f), s++;
    }
  }
  fputc('"', f);
}

/* Microseconds with nanosecond digits. */
static void json_us(FILE *f, uint64_t ns) {
  fprintf(f, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

/* false when memory runs out (the file is then incomplete). */
static bool write_trace(FILE *f, trace_data *d) {
  fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_ranges\":%llu},\"traceEvents\":[",
          (unsigned long long)d->dropped);
  /* Processes and their tracks, numbered in order of first appearance. */
  uint32_t *pid_of = calloc((size_t)d->nstrings + 1, sizeof *pid_of);
  uint32_t *tracks_in = calloc((size_t)d->nstrings + 1, sizeof *tracks_in);
  uint32_t npids = 0;
  bool first = true;
  if (!pid_of || !tracks_in) {
    free(pid_of);
    free(tracks_in);
    return false;
  }
  for (uint32_t i = 0; i < d->ntracks; i++) {
    trace_track *t = &d->tracks[i];
    if (!pid_of[t->process]) {
      pid_of[t->process] = ++npids;
      fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":",
              first ? "" : ",", npids);
      json_string(f, d->strings[t->process]);
      fputs("}}", f);
      first = false;
    }
    t->pid = pid_of[t->process];
    t->tid = ++tracks_in[t->process];
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
            t->pid, t->tid);
    json_string(f, d->strings[t->name]);
    fputs("}}", f);
  }
  for (uint32_t i = 0; i < d->nevents; i++) {
    const trace_event *ev = &d->events[i];
    const trace_track *t = &d->tracks[ev->track];
    /* A range begun before the trace started is cut at its start. */
    uint64_t begin = ev->begin_ns > d->start_ns ? ev->begin_ns : d->start_ns;
    uint64_t end = ev->end_ns > begin ? ev->end_ns : begin;
    fprintf(f, "%s\n{\"name\":", first ? "" : ",");
    json_string(f, d->strings[ev->name]);
    fputs(",\"cat\":", f);
    json_string(f, d->strings[t->process]);
    fputs(",\"ph\":\"X\",\"ts\":", f);
    json_us(f, begin - d->start_ns);
    fputs(",\"dur\":", f);
    json_us(f, end - begin);
    fprintf(f, ",\"pid\":%u,\"tid\":%u}", t->pid, t->tid);
    first = false;
  }
  fputs("\n]}\n", f);
  free(pid_of);
  free(tracks_in);
  return true;
}

alloy_error *alloy_trace_stop(const char *path) {
  pthread_mutex_lock(&trace_lock);
  bool was_on = atomic_load_explicit(&trace_active, memory_order_relaxed);
  trace_data d = trace;
  if (was_on) {
    atomic_store_explicit(&trace_active, false, memory_order_relaxed);
    memset(&trace, 0, sizeof trace);
  }
  pthread_mutex_unlock(&trace_lock);
  if (!was_on)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "alloy_trace_stop: no trace is being recorded (alloy_trace_start)");
  alloy_error *e = NULL;
  if (path) {
    FILE *f = fopen(path, "w");
    if (!f) {
      e = alloy_error_new(ALLOY_ERR_IO, "cannot write the trace to %s: %s", path, strerror(errno));
    } else {
      bool written = write_trace(f, &d);
      bool bad = ferror(f) != 0;
      int saved = errno;
      if (fclose(f) != 0 && !bad) bad = true, saved = errno;
      if (!written)
        e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory writing the trace to %s", path);
      else if (bad)
        e = alloy_error_new(ALLOY_ERR_IO, "cannot write the trace to %s: %s", path, strerror(saved));
    }
  }
  trace_data_free(&d);
  return e;
}
