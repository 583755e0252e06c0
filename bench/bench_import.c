/*
 * bench/bench_import.c: how long importing a torch.export archive takes,
 * for every .pt2 in a folder (the golden models by default): open and map
 * the archive, read the weight configs, parse model.json and build and type
 * the graph (alloy_model_load). Each model is imported `reps` times; the
 * median and the fastest are printed, with the archive's size and the
 * graph's node count. The goal (issue 5): the largest shared model under
 * 50 ms.
 *
 *   build/bench/bench_import [DIR] [reps]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "alloy/model.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "../shared/golden/models";
  int reps = argc > 2 ? atoi(argv[2]) : 21;
  if (reps < 1) reps = 1;
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "bench_import: no folder %s (the golden models live in ../shared/golden/models)\n",
            dir);
    return 1;
  }
  char *names[256];
  int n = 0;
  for (struct dirent *de; (de = readdir(d)) && n < 256;) {
    size_t len = strlen(de->d_name);
    if (len > 4 && !strcmp(de->d_name + len - 4, ".pt2")) names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  double *t = calloc((size_t)reps, sizeof *t), worst = 0;
  int status = 0;
  printf("%-32s %10s %7s %10s %10s\n", "model", "bytes", "nodes", "median ms", "min ms");
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat sb;
    int nodes = 0;
    if (stat(path, &sb) != 0) continue;
    for (int r = 0; r < reps; r++) {
      alloy_model *m = NULL;
      double t0 = now_ms();
      alloy_error *e = alloy_model_load(path, &m);
      t[r] = now_ms() - t0;
      if (e) {
        printf("%-32s import failed: %s\n", names[i], alloy_error_message(e));
        alloy_error_free(e);
        status = 1;
        break;
      }
      nodes = alloy_graph_num_nodes(alloy_model_graph(m));
      alloy_model_free(m);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    if (t[reps / 2] > worst) worst = t[reps / 2];
    printf("%-32s %10lld %7d %10.2f %10.2f\n", names[i], (long long)sb.st_size, nodes,
           t[reps / 2], t[0]);
    free(names[i]);
  }
  printf("slowest median import: %.2f ms (goal: under 50 ms)\n", worst);
  free(t);
  return status;
}
