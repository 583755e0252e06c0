/*
 * sdk/src/loader.c: finding, validating and opening backends.
 *
 * Every liballoy-<name>.so on the search path is dlopen'ed (RTLD_NOW |
 * RTLD_LOCAL, so two plugins never see each other's symbols), its entry is
 * called with the host table, and the table it returns is checked before
 * anything else of it is touched: ABI major, struct size, required entries,
 * a unique name. A plugin that fails a check is kept in the list with a
 * one-line reason and unloaded; it never stops the others. The reference
 * backend is built in and joins last unless a liballoy-ref.so was found.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sdk/src/runtime_internal.h"

/* The entries a plugin of this major must provide, by offset. */
static const struct {
  const char *name;
  size_t offset;
} required_entries[] = {
#define REQ(f) {#f, offsetof(alloy_plugin_api, f)}
    REQ(backend_open),          REQ(backend_close),         REQ(device_count),
    REQ(device_info),           REQ(claim),                 REQ(compile),
    REQ(execute),               REQ(executable_release),    REQ(buffer_allocate),
    REQ(buffer_release),        REQ(buffer_host_pointer),   REQ(buffer_copy_from_host),
    REQ(buffer_copy_to_host),   REQ(buffer_copy),           REQ(queue_create),
    REQ(queue_release),         REQ(event_wait),            REQ(event_query),
    REQ(event_release),
#undef REQ
};
static char *dup_str(const char *s) { return strdup(s ? s : ""); }

static char *fmt_str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_str(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

static alloy_loaded *add_row(alloy_runtime *rt) {
  if (rt->num == rt->cap) {
    int cap = rt->cap ? rt->cap * 2 : 8;
    alloy_loaded *b = realloc(rt->backends, sizeof *b * (size_t)cap);
    if (!b) return NULL;
    rt->backends = b;
    rt->cap = cap;
  }
  alloy_loaded *row = &rt->backends[rt->num++];
  memset(row, 0, sizeof *row);
  return row;
}

static void row_release(alloy_loaded *row) {
  if (row->ok && row->api && row->be) row->api->backend_close(row->be);
  if (row->dl) dlclose(row->dl);
  free(row->name);
  free(row->vendor);
  free(row->version);
  free(row->path);
  free(row->status);
  free(row->devices);
  for (int i = 0; i < row->noptions; i++) {
    free((char *)row->options[i].key);
    free((char *)row->options[i].value);
  }
  free(row->options);
  memset(row, 0, sizeof *row);
}

static void refuse(alloy_loaded *row, char *reason) {
  row->ok = false;
  row->status = fmt_str("refused: %s", reason ? reason : "out of memory");
  free(reason);
  row->api = NULL;
  row->be = NULL;
  if (row->dl) {
    dlclose(row->dl);
    row->dl = NULL;
  }
}

/* Checks a plugin table; returns the reason it is unusable, or NULL. */
static char *check_table(const alloy_plugin_api *api) {
  if (api->struct_size < offsetof(alloy_plugin_api, abi_minor) + sizeof api->abi_minor)
    return fmt_str("its table is too small (%zu bytes) to hold a version", api->struct_size);
  if (api->abi_major != ALLOY_ABI_MAJOR)
    return fmt_str("built for ABI %u.%u, this host speaks ABI %u.%u (another major)",
                   api->abi_major, api->abi_minor, ALLOY_ABI_MAJOR, ALLOY_ABI_MINOR);
  for (size_t i = 0; i < sizeof required_entries / sizeof required_entries[0]; i++)
    if (api->struct_size < required_entries[i].offset + sizeof(void (*)(void)))
      return fmt_str("its table (%zu bytes) ends before required entry %s", api->struct_size,
                     required_entries[i].name);
  for (size_t i = 0; i < sizeof required_entries / sizeof required_entries[0]; i++) {
    void (*const *entry)(void) =
        (void (*const *)(void))((const char *)api + required_entries[i].offset);
    if (!*entry) return fmt_str("required entry %s is NULL", required_entries[i].name);
  }
  if (!api->name || !api->name[0]) return fmt_str("it has no name");
  for (const char *p = api->name; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
      return fmt_str("its name '%s' is not [A-Za-z0-9_-]+", api->name);
  return NULL;
}

static const alloy_loaded *find_ok(const alloy_runtime *rt, const char *name, int upto) {
  for (int i = 0; i < upto; i++)
    if (rt->backends[i].ok && !strcasecmp(rt->backends[i].name, name)) return &rt->backends[i];
  return NULL;
}

/* Opens the backend instance and describes its devices. */
static void open_backend(alloy_runtime *rt, alloy_loaded *row) {
  const alloy_plugin_api *api = row->api;
  row->name = dup_str(api->name);
  row->vendor = dup_str(api->vendor);
  row->version = dup_str(api->version);
  const alloy_loaded *other = find_ok(rt, api->name, (int)(row - rt->backends));
  if (other) {
    refuse(row, fmt_str("name '%s' is already taken by %s (this file: %s)", api->name,
                        other->path, row->path));
    return;
  }
  alloy_backend *be = NULL;
  alloy_error *e = host_error_take(api->backend_open(alloy_host_table(), &be), api->name,
                                   "backend_open");
  if (!e && !be)
    e = alloy_error_new(ALLOY_ERR_INTERNAL, "it returned success without a backend");
  if (e) {
    refuse(row, fmt_str("backend_open failed: %s", alloy_error_message(e)));
    alloy_error_free(e);
    return;
  }
  row->be = be;
  row->ok = true;
  row->status = dup_str("ok");
}

/* The devices a row offers, as `alloy backends` lists them. Called once
 * the row is guarded (guard.c), which bounds the device count and checks
 * the errors that come back. */
static void describe_devices(alloy_loaded *row) {
  const alloy_plugin_api *api = row->api;
  row->num_devices = api->device_count(row->be);
  /* A backend that opens without a device (no driver, no GPU) says why
   * through device_info(0)'s error: it stays loaded but runs nothing. */
  if (row->num_devices == 0) {
    alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
    alloy_error *why = api->device_info(row->be, 0, &info);
    free(row->status);
    row->status = fmt_str("no device: %s", why ? alloy_error_message(why) : "none found");
    alloy_error_free(why);
  }
  size_t len = 0, cap = 256;
  row->devices = calloc(1, cap);
  for (int d = 0; d < row->num_devices && row->devices; d++) {
    static const char *kinds[] = {"cpu", "gpu", "accelerator"};
    alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
    alloy_error *de = api->device_info(row->be, d, &info);
    char item[160];
    if (de) {
      snprintf(item, sizeof item, "%s#%d (error: %s)", d ? ", " : "", d, alloy_error_message(de));
      alloy_error_free(de);
    } else {
      snprintf(item, sizeof item, "%s%s (%s)", d ? ", " : "", info.name ? info.name : "?",
               (unsigned)info.kind < 3 ? kinds[info.kind] : "?");
    }
    size_t n = strlen(item);
    if (len + n + 1 > cap) {
      char *grown = realloc(row->devices, cap = (len + n + 1) * 2);
      if (!grown) break;
      row->devices = grown;
    }
    memcpy(row->devices + len, item, n + 1);
    len += n;
  }
}

static void load_file(alloy_runtime *rt, const char *path, const char *file_name) {
  alloy_loaded *row = add_row(rt);
  if (!row) return;
  row->path = dup_str(path);
  /* liballoy-<name>.so: the name until the plugin tells its own */
  row->name = strndup(file_name + 9, strlen(file_name) - 9 - 3);
  row->vendor = dup_str("");
  row->version = dup_str("");
  row->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!row->dl) {
    const char *why = dlerror();
    refuse(row, fmt_str("dlopen failed: %s", why ? why : "unknown error"));
    return;
  }
  alloy_plugin_entry_fn entry;
  *(void **)&entry = dlsym(row->dl, ALLOY_PLUGIN_ENTRY);
  if (!entry) {
    refuse(row, fmt_str("no entry symbol %s", ALLOY_PLUGIN_ENTRY));
    return;
  }
  alloy_host_clear_last_log();
  const alloy_plugin_api *api = entry(alloy_host_table());
  if (!api) {
    const char *why = alloy_host_last_log();
    refuse(row, fmt_str("its entry refused to load%s%s", why ? ": " : "", why ? why : ""));
    return;
  }
  if (api->struct_size >= offsetof(alloy_plugin_api, abi_minor) + sizeof api->abi_minor) {
    row->abi_major = api->abi_major;
    row->abi_minor = api->abi_minor;
  }
  char *why = check_table(api);
  if (why) {
    refuse(row, why);
    return;
  }
  free(row->name);
  free(row->vendor);
  free(row->version);
  row->api = api;
  open_backend(rt, row);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads every liballoy-*.so of dir, in name order; a folder seen before
 * (by real path) is skipped. */
/* Whether liballoy-<name>.so is among the backends asked for (all when
 * the options name none). */
static bool wanted(const alloy_runtime_options *o, const char *file_name) {
  if (!o || !ALLOY_HAS_FIELD(o, alloy_runtime_options, num_only_backends) ||
      o->num_only_backends <= 0 || !o->only_backends)
    return true;
  size_t len = strlen(file_name) - 9 - 3;
  for (int i = 0; i < o->num_only_backends; i++) {
    const char *n = o->only_backends[i];
    if (n && strlen(n) == len && !strncasecmp(n, file_name + 9, len)) return true;
  }
  return false;
}

static void scan_dir(alloy_runtime *rt, const alloy_runtime_options *o, const char *dir,
                     char ***seen, int *nseen) {
  char real[PATH_MAX];
  if (!realpath(dir, real)) return;
  for (int i = 0; i < *nseen; i++)
    if (!strcmp((*seen)[i], real)) return;
  char **grown = realloc(*seen, sizeof **seen * (size_t)(*nseen + 1));
  if (!grown) return;
  *seen = grown;
  if (!((*seen)[*nseen] = strdup(real))) return;
  (*nseen)++;
  DIR *d = opendir(real);
  if (!d) return;
  char **names = NULL;
  int n = 0;
  struct dirent *ent;
  while ((ent = readdir(d))) {
    size_t len = strlen(ent->d_name);
    if (len <= 12 || strncmp(ent->d_name, "liballoy-", 9) || strcmp(ent->d_name + len - 3, ".so") ||
        !wanted(o, ent->d_name))
      continue;
    char **more = realloc(names, sizeof *names * (size_t)(n + 1));
    if (!more) break;
    names = more;
    if ((names[n] = strdup(ent->d_name))) n++;
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, name_cmp);
  for (int i = 0; i < n; i++) {
    char *path = fmt_str("%s/%s", real, names[i]);
    if (path) load_file(rt, path, names[i]);
    free(path);
    free(names[i]);
  }
  free(names);
}

/* The folder ../lib/alloy next to the running program. */
static bool program_plugin_dir(char *out, size_t cap) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return false;
  *slash = '\0';
  return (size_t)snprintf(out, cap, "%s/../lib/alloy", exe) < cap;
}

static void load_builtin_ref(alloy_runtime *rt) {
  if (find_ok(rt, "ref", rt->num)) return;
  alloy_loaded *row = add_row(rt);
  if (!row) return;
  row->path = dup_str("(built in)");
  const alloy_plugin_api *api = alloy_ref_plugin_entry(alloy_host_table());
  char *why = api ? check_table(api) : fmt_str("the built-in reference backend failed to start");
  row->name = dup_str("ref");
  if (why) {
    row->vendor = dup_str("");
    row->version = dup_str("");
    refuse(row, why);
    return;
  }
  free(row->name);
  row->abi_major = api->abi_major;
  row->abi_minor = api->abi_minor;
  row->api = api;
  open_backend(rt, row);
}

/* Priority: the ALLOY_BACKENDS names in their order, then the rest in
 * search order, "ref" always last. A stable sort by rank. */
static int priority(const alloy_loaded *row, const char *order) {
  if (!strcasecmp(row->name, "ref")) return INT_MAX;
  int rank = 0;
  for (const char *p = order; p && *p; rank++) {
    size_t n = strcspn(p, ",");
    if (n == strlen(row->name) && !strncasecmp(p, row->name, n)) return rank;
    p += n + (p[n] == ',');
  }
  return INT_MAX - 1;
}

static void sort_by_priority(alloy_runtime *rt) {
  const char *order = getenv("ALLOY_BACKENDS");
  for (int i = 1; i < rt->num; i++) { /* insertion sort: stable, tiny n */
    alloy_loaded row = rt->backends[i];
    int pr = priority(&row, order), j = i;
    while (j > 0 && priority(&rt->backends[j - 1], order) > pr) {
      rt->backends[j] = rt->backends[j - 1];
      j--;
    }
    rt->backends[j] = row;
  }
}

alloy_error *alloy_runtime_open(const alloy_runtime_options *options,
                                alloy_runtime **out) {
  *out = NULL;
  alloy_error *e = alloy_registry_init();
  if (e) return e;
  alloy_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  char **seen = NULL;
  int nseen = 0;
  bool defaults = !(options && ALLOY_HAS_FIELD(options, alloy_runtime_options, no_default_paths) &&
                    options->no_default_paths);
  if (defaults) {
    const char *env = getenv("ALLOY_PLUGIN_PATH");
    char *paths = env ? strdup(env) : NULL;
    for (char *save = NULL, *dir = paths ? strtok_r(paths, ":", &save) : NULL; dir;
         dir = strtok_r(NULL, ":", &save))
      scan_dir(rt, options, dir, &seen, &nseen);
    free(paths);
    char dir[PATH_MAX];
    if (program_plugin_dir(dir, sizeof dir)) scan_dir(rt, options, dir, &seen, &nseen);
  }
  if (options && ALLOY_HAS_FIELD(options, alloy_runtime_options, num_plugin_dirs))
    for (int i = 0; i < options->num_plugin_dirs; i++)
      scan_dir(rt, options, options->plugin_dirs[i], &seen, &nseen);
  for (int i = 0; i < nseen; i++) free(seen[i]);
  free(seen);
  load_builtin_ref(rt);
  sort_by_priority(rt);
  /* The rows stop moving here: every open backend is guarded from now on
   * (guard.c). */
  for (int i = 0; i < rt->num; i++) {
    alloy_loaded *row = &rt->backends[i];
    if (!row->ok) continue;
    alloy_error *ge = runtime_guard(row);
    if (ge) {
      row->api->backend_close(row->be);
      row->be = NULL;
      refuse(row, fmt_str("%s", alloy_error_message(ge)));
      alloy_error_free(ge);
      continue;
    }
    describe_devices(row);
  }
  *out = rt;
  return NULL;
}

void alloy_runtime_close(alloy_runtime *rt) {
  if (!rt) return;
  cache_close(rt);
  /* Close in reverse, so the built-in reference backend goes last. */
  for (int i = rt->num - 1; i >= 0; i--) row_release(&rt->backends[i]);
  free(rt->backends);
  free(rt);
}

int alloy_runtime_num_backends(const alloy_runtime *rt) { return rt->num; }

void alloy_runtime_backend_info(const alloy_runtime *rt, int i, alloy_backend_info *info) {
  size_t size = info->struct_size;
  alloy_backend_info full = {.struct_size = size};
  if (i >= 0 && i < rt->num) {
    const alloy_loaded *row = &rt->backends[i];
    full.name = row->name ? row->name : "";
    full.vendor = row->vendor ? row->vendor : "";
    full.version = row->version ? row->version : "";
    full.abi_major = row->abi_major;
    full.abi_minor = row->abi_minor;
    full.num_devices = row->num_devices;
    full.devices = row->devices ? row->devices : "";
    full.path = row->path ? row->path : "";
    full.ok = row->ok;
    full.status = row->status ? row->status : "refused: out of memory";
  }
  /* Fill only what the caller's struct holds. */
  memcpy(info, &full, size < sizeof full ? size : sizeof full);
  info->struct_size = size;
}

int alloy_runtime_find_backend(const alloy_runtime *rt, const char *name) {
  for (int i = 0; i < rt->num; i++)
    if (rt->backends[i].ok && !strcasecmp(rt->backends[i].name, name)) return i;
  return -1;
}

alloy_error *alloy_runtime_set_backend_option(alloy_runtime *rt, int backend, const char *key,
                                              const char *value) {
  if (backend < 0 || backend >= rt->num || !rt->backends[backend].ok)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "backend %d is not usable", backend);
  alloy_loaded *row = &rt->backends[backend];
  if (!key || !*key || !value)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "backend %s: an option needs a key and a value",
                           row->name);
  const alloy_plugin_api *api = row->api;
  if (!ALLOY_HAS_FIELD(api, alloy_plugin_api, backend_set_option) || !api->backend_set_option)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "backend %s takes no options (it has no "
                           "backend_set_option entry): '%s' refused", row->name, key);
  alloy_error *e = api->backend_set_option(row->be, key, value);
  if (e) return alloy_error_wrap(e, "backend %s: option %s=%s", row->name, key, value);
  /* Remembered for compile (a later value replaces an earlier one). */
  int i = 0;
  while (i < row->noptions && strcmp(row->options[i].key, key)) i++;
  char *v = strdup(value), *k = i < row->noptions ? NULL : strdup(key);
  if (!v || (i == row->noptions && !k)) {
    free(v), free(k);
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (i == row->noptions) {
    alloy_option *o = realloc(row->options, sizeof *o * (size_t)(row->noptions + 1));
    if (!o) {
      free(v), free(k);
      return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    row->options = o;
    row->options[row->noptions++] = (alloy_option){k, NULL};
  }
  free((char *)row->options[i].value);
  row->options[i].value = v;
  return NULL;
}
