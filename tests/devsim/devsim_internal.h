/*
 * tests/devsim/devsim_internal.h: what the two files of the testing backend
 * devsim share. devsim.c is the plugin: its entries, which check their
 * arguments and hand commands to queues, and the kernel-table helper behind
 * them (claims, compiles). devsim_device.c is the simulated device: memory
 * between guard pages, events, and the queues whose worker threads run the
 * commands. Everything here stays inside liballoy-devsim.so (plugins are
 * built with -fvisibility=hidden): only alloy_plugin_init leaves it.
 */
#ifndef ALLOY_TESTS_DEVSIM_INTERNAL_H
#define ALLOY_TESTS_DEVSIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sdk/kernel_table/kt_internal.h"
#include "tests/devsim/devsim.h"

#define DS_NAME "devsim"

#define DS_MAGIC_QUEUE UINT64_C(0x64657673696d7175) /* "devsimqu" */
#define DS_MAGIC_EVENT UINT64_C(0x64657673696d6576) /* "devsimev" */
#define DS_MAGIC_EXE UINT64_C(0x64657673696d6578)   /* "devsimex" */

#if defined(__GNUC__)
#define DS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DS_PRINTF(f, a)
#endif

/* Every entry but backend_close (which reports them) is counted. */
enum ds_entry {
  DS_BACKEND_OPEN, DS_DEVICE_COUNT, DS_DEVICE_INFO, DS_CLAIM, DS_COMPILE, DS_EXECUTE,
  DS_EXECUTABLE_RELEASE, DS_BUFFER_ALLOCATE, DS_BUFFER_RELEASE, DS_BUFFER_HOST_POINTER,
  DS_COPY_FROM_HOST, DS_COPY_TO_HOST, DS_COPY, DS_QUEUE_CREATE, DS_QUEUE_RELEASE, DS_EVENT_WAIT,
  DS_EVENT_QUERY, DS_EVENT_RELEASE, DS_EVENT_RECORD, DS_QUEUE_WAIT_EVENT, DS_HOST_BUFFER_ALLOCATE,
  DS_HOST_BUFFER_RELEASE, DS_BUFFER_IMPORT, DS_BACKEND_SET_OPTION, DS_QUEUE_IMPORT, DS_NUM_ENTRIES
};

/* ---- objects ------------------------------------------------------------- */

typedef struct ds_link {
  struct ds_link *prev, *next;
} ds_link;

#define DS_OF(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static inline void ds_list_init(ds_link *head) { head->prev = head->next = head; }
static inline void ds_list_push(ds_link *head, ds_link *l) {
  l->next = head->next;
  l->prev = head;
  head->next->prev = l;
  head->next = l;
}
static inline void ds_list_remove(ds_link *l) {
  l->prev->next = l->next;
  l->next->prev = l->prev;
  l->prev = l->next = l;
}

/* A command's outcome: code 0 is success; message malloc'd. */
typedef struct ds_status {
  alloy_error_code code;
  char *message;
} ds_status;

/* Device memory: one mapping, shared by the buffer that allocated it, the
 * buffers importing it and the queued commands that use it. */
typedef struct ds_region {
  ds_link link;     /* be->regions: every mapped region              */
  char *map;        /* the mapping, guard pages included             */
  size_t map_bytes;
  char *data;       /* the data start: what buffer_import takes      */
  uint64_t bytes;
  int refs;         /* be->lock                                      */
  int imports;      /* be->lock: imported buffers on it              */
  bool importable;  /* be->lock: the allocating buffer is live       */
} ds_region;

typedef struct ds_buffer {
  devsim_buffer_head head; /* first: magic, device pointer, bytes (devsim.h) */
  ds_link link;            /* be->buffers */
  ds_region *region;       /* a reference */
  bool imported;
} ds_buffer;

typedef struct ds_event {
  uint64_t magic;
  ds_link link;     /* be->events, for backend_close          */
  int refs;         /* be->ev_lock: its holder and its signaller */
  bool held;        /* the holder (host or entry) keeps it     */
  bool signalled;
  ds_status status;
} ds_event;

typedef struct ds_exe {
  uint64_t magic;
  ds_link link;          /* be->exes */
  alloy_executable *kt;  /* the helper's */
  int pending;           /* be->lock: executes enqueued, not finished */
} ds_exe;

typedef enum ds_cmd_kind { DS_FROM_HOST, DS_TO_HOST, DS_D2D, DS_RUN, DS_RECORD, DS_WAIT } ds_cmd_kind;

typedef struct ds_cmd {
  struct ds_cmd *next;
  ds_cmd_kind kind;
  bool sync;              /* the entry waits and returns the failure itself */
  ds_event *done;         /* a reference; NULL for DS_WAIT             */
  ds_region *dst, *src;   /* references                                */
  uint64_t dst_offset, src_offset, bytes;
  const void *host_src;   /* DS_FROM_HOST: lent until done             */
  void *host_dst;         /* DS_TO_HOST: lent until done               */
  ds_event *wait_for;     /* DS_WAIT: a reference                      */
  ds_exe *exe;            /* DS_RUN: its pending count holds it        */
  alloy_execute_args args; /* DS_RUN: the host's, arrays lent until done */
  ds_region **regions;    /* DS_RUN: per input then output; NULL: made by the run */
  uint64_t *region_bytes; /* DS_RUN: the buffer handle's size          */
  /* DS_RUN: the host's tensors, their sizes and strides (2 * KT_MAX_RANK
   * per tensor) and the symbol values as execute() saw them; the run
   * checks that the host left them alone (they are lent until done). */
  alloy_tensor *lent;
  int64_t *lent_dims, *lent_symbols;
} ds_cmd;

typedef struct ds_backend ds_backend;

typedef struct ds_queue {
  uint64_t magic;
  ds_link link;          /* be->queues (not the default queue) */
  ds_backend *be;
  pthread_t worker;
  pthread_mutex_t lock;  /* head, tail, closing */
  pthread_cond_t wake;
  ds_cmd *head, *tail;
  bool closing;
  unsigned serial;       /* 0 for the default queue */
  struct ds_queue *of;   /* queue_import's: the queue it stands for (no
                          * worker, list link or serial of its own)      */
  /* The worker's alone: */
  uint64_t rng, rng_seed;
  ds_status unreported;  /* the first failure since the last record */
} ds_queue;

typedef struct ds_host_buffer {
  ds_link link;          /* be->host_buffers */
  void *ptr;
} ds_host_buffer;

struct ds_backend {
  const alloy_host_api *host; /* the host's table                          */
  alloy_host_api kt_host;     /* what the helper sees: claims and errors wrapped */
  alloy_backend *kt;          /* the helper's backend                      */
  size_t page;
  uint64_t memory_bytes;
  _Atomic uint64_t delay_us, seed;
  pthread_mutex_t lock;
  pthread_cond_t exe_idle;    /* an executable's pending count dropped    */
  ds_link buffers, regions, queues, exes, host_buffers;
  uint64_t live_bytes, peak_bytes;
  ds_queue *default_queue;    /* made at first use                        */
  unsigned next_serial;
  pthread_mutex_t ev_lock;
  pthread_cond_t ev_signal;   /* some event was signalled                 */
  ds_link events;
  _Atomic uint64_t calls[DS_NUM_ENTRIES];
  _Atomic uint64_t allocations, executes, bytes_h2d, bytes_d2h, bytes_d2d;
};

/* The helper's host table has only node indices in claims_add and gives
 * errors without a way to read their code back, so each thread says which
 * backend and graph it is working for (set by every entry and by the
 * workers), and remembers the last error the helper made: its code is
 * what event_wait makes again. */
struct ds_thread {
  ds_backend *be;
  const alloy_graph *claiming;
  alloy_error *made;
  alloy_error_code made_code;
};
extern _Thread_local struct ds_thread ds_ctx;

/* The kernel-table helper's plugin over the reference kernels (devsim.c,
 * set once at load). */
extern const alloy_plugin_api *ds_kt_api;

/* ---- devsim.c ------------------------------------------------------------ */

/* host->log under devsim's name, skipped below the host's level. */
void ds_log(ds_backend *be, alloy_log_level level, const char *fmt, ...) DS_PRINTF(3, 4);
/* An error made with host->error_new from a printf-style message. */
alloy_error *ds_error(ds_backend *be, alloy_error_code code, const char *fmt, ...) DS_PRINTF(3, 4);

/* ---- devsim_device.c ------------------------------------------------------- */

/* Statuses: the first failure set wins; from_error takes over an error of
 * the helper (its code as ds_ctx remembers it) and frees it; error makes
 * the host's error for a failed status, NULL for success. */
void ds_status_set(ds_status *st, alloy_error_code code, const char *fmt, ...) DS_PRINTF(3, 4);
void ds_status_from_error(ds_backend *be, ds_status *st, alloy_error *e);
alloy_error *ds_status_error(ds_backend *be, const ds_status *st);

/* Memory. ref takes a reference under be->lock; unref drops one and unmaps
 * at the last; unmap is for backend_close. A buffer holds one reference on
 * its region; wrap makes a buffer of an existing region (an import). */
ds_region *ds_region_ref(ds_region *r);
void ds_region_unref(ds_backend *be, ds_region *r);
void ds_region_unmap(ds_backend *be, ds_region *r);
ds_buffer *ds_buffer_wrap(ds_backend *be, ds_region *r, uint64_t bytes, bool imported);
alloy_error *ds_buffer_new(ds_backend *be, uint64_t bytes, ds_buffer **out);
void ds_buffer_free(ds_backend *be, ds_buffer *b);

/* Events. drop: the holder lets go; await: waits, copying the failure into
 * st when given; free_locked: for backend_close. */
void ds_event_drop(ds_backend *be, ds_event *ev);
void ds_event_await(ds_backend *be, ds_event *ev, ds_status *st);
void ds_event_free_locked(ds_event *ev);

/* Commands and queues. A command made with cmd_new is consumed by submit,
 * enqueue_wait or cmd_free. */
ds_cmd *ds_cmd_new(ds_cmd_kind kind);
void ds_cmd_free(ds_backend *be, ds_cmd *c);
alloy_error *ds_queue_new(ds_backend *be, unsigned serial, ds_queue **out);
void ds_queue_stop(ds_queue *q);
/* Hands c to q, or to the default queue when q is NULL (then waits for it,
 * as it does when wait is set); with q and no wait, *done receives c's
 * event. */
alloy_error *ds_submit(ds_backend *be, ds_queue *q, ds_cmd *c, alloy_event **done, bool wait);
/* Later commands on q wait for ev (a reference is taken); false when
 * memory runs out. */
bool ds_enqueue_wait(ds_backend *be, ds_queue *q, ds_event *ev);

#endif
