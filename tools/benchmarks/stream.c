/*===- stream.c - gnnc-stream: the STREAM triad -----------------------------===
 *
 * Part of gnnc's benchmark harness (tools/bench). McCalpin's STREAM triad,
 * a[i] = b[i] + s * c[i] over three arrays of doubles, with OpenMP, counted
 * the STREAM way: 24 bytes per element (two arrays read, one written; the
 * write-allocate read of `a` is not counted). The arrays must be much larger
 * than the last-level cache; the harness sizes them (default 2^25 doubles,
 * 256 MiB each). Prints one JSON object: the best and median of --reps
 * timed triads (after one untimed pass that faults the pages in), and the
 * figure STREAM reports, the best.
 *
 *   gnnc-stream [--elements N] [--reps R]
 *
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

int main(int argc, char **argv) {
  long n = 1L << 25;
  int reps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--elements"))
      n = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
  }
  if (n < 1024 || reps < 1 || reps > 1000) {
    fprintf(stderr, "usage: gnnc-stream [--elements N>=1024] [--reps 1..1000]\n");
    return 2;
  }
  double *a = aligned_alloc(64, (size_t)n * sizeof(double));
  double *b = aligned_alloc(64, (size_t)n * sizeof(double));
  double *c = aligned_alloc(64, (size_t)n * sizeof(double));
  if (!a || !b || !c) {
    printf("{\"ok\": false, \"error\": \"cannot allocate 3 x %ld doubles\"}\n", n);
    return 1;
  }
  /* First touch in parallel, with the same static schedule as the triad. */
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.5;
  }
  const double s = 3.0;
  double *t = malloc((size_t)reps * sizeof(double));
  for (int r = -1; r < reps; ++r) {
    double t0 = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + s * c[i];
    double dt = now() - t0;
    if (r >= 0)
      t[r] = dt;
  }
  double check = 0.0;
  for (long i = 0; i < n; i += 4099)
    check += a[i];
  qsort(t, (size_t)reps, sizeof(double), cmp);
  double bytes = 24.0 * (double)n;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  printf("{\"ok\": true, \"kernel\": \"triad\", \"elements\": %ld, "
         "\"array_bytes\": %.0f, \"bytes_per_triad\": %.0f, \"reps\": %d, "
         "\"threads\": %d, \"best_s\": %.9g, \"median_s\": %.9g, "
         "\"best_gbs\": %.6g, \"median_gbs\": %.6g, \"check\": %.6g}\n",
         n, 8.0 * (double)n, bytes, reps, threads, t[0], t[reps / 2],
         bytes / t[0] / 1e9, bytes / t[reps / 2] / 1e9,
         check);
  free(t);
  free(a);
  free(b);
  free(c);
  return 0;
}
