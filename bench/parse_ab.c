/* parse_ab.c — the timing harness of bench/parse-ab: two builds of `pitstop
 * parse` linked into one process (their symbols renamed A_... and B_...),
 * run alternately on one log. On a shared machine whose speed drifts by tens of
 * percent within seconds, separate processes compare badly; pairs of runs a
 * fraction of a second apart see the same machine, and the median of the
 * per-pair ratios B/A is stable to about 1% (A against A: 0.99-1.01).
 *
 * Modes: "parse": pit_parse_file with an emit that only counts (the parser
 * alone); "pipeline": the whole command (parse, the writer thread, JSON Lines
 * to /dev/null). Prints one line of figures. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pitstop/parse.h"

typedef int (*parse_file_fn)(const char *, enum pit_parse_format, const char *, int, pit_parse_emit_fn,
                             pit_parse_warn_fn, void *, struct pit_parse_stats *, struct pit_err *);
int A_pit_parse_file(const char *, enum pit_parse_format, const char *, int, pit_parse_emit_fn, pit_parse_warn_fn,
                     void *, struct pit_parse_stats *, struct pit_err *);
int B_pit_parse_file(const char *, enum pit_parse_format, const char *, int, pit_parse_emit_fn, pit_parse_warn_fn,
                     void *, struct pit_parse_stats *, struct pit_err *);
int A_pit_cmd_parse(int argc, char **argv);
int B_pit_cmd_parse(int argc, char **argv);

/* what the CLI's main.c gives cmd_parse.c */
int pit_cli_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 2;
}
struct pit_err;
int pit_cli_fail(const struct pit_err *e) {
  (void)e;
  return 1;
}

static long nrec;
static int count(void *ctx, const struct pit_record *r, struct pit_err *e) {
  (void)ctx;
  (void)r;
  (void)e;
  nrec++;
  return 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double run(int b, int pipeline, const char *log) {
  double t0 = now();
  if (pipeline) {
    char *argv[] = {"parse", "--quiet", (char *)log, NULL};
    if ((b ? B_pit_cmd_parse : A_pit_cmd_parse)(3, argv) != 0)
      exit(1);
    fflush(stdout);
  } else {
    struct pit_err e = {0};
    struct pit_parse_stats st;
    nrec = 0;
    if ((b ? B_pit_parse_file : A_pit_parse_file)(log, PIT_PARSE_AUTO, "x", 0, count, NULL, NULL, &st, &e)) {
      fprintf(stderr, "parse_ab: %s\n", e.msg);
      exit(1);
    }
  }
  return now() - t0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "parse") && strcmp(argv[1], "pipeline"))) {
    fprintf(stderr, "usage: parse_ab parse|pipeline LOG PAIRS\n");
    return 2;
  }
  int pipeline = strcmp(argv[1], "pipeline") == 0, pairs = atoi(argv[3]);
  if (pairs < 1 || pairs > 10000)
    return 2;
  if (pipeline) { /* the JSON Lines go to /dev/null, like the benchmark's */
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, 1) < 0)
      return 1;
  }
  double *ratio = malloc(sizeof(double) * (size_t)pairs), besta = 1e30, bestb = 1e30;
  int bwins = 0;
  run(0, pipeline, argv[2]); /* warm-up: page cache, allocator */
  run(1, pipeline, argv[2]);
  for (int k = 0; k < pairs; k++) {
    int bfirst = k & 1; /* alternate the order within a pair too */
    double tb = bfirst ? run(1, pipeline, argv[2]) : 0, ta = run(0, pipeline, argv[2]);
    if (!bfirst)
      tb = run(1, pipeline, argv[2]);
    ratio[k] = tb / ta;
    bwins += tb < ta;
    besta = ta < besta ? ta : besta;
    bestb = tb < bestb ? tb : bestb;
  }
  qsort(ratio, (size_t)pairs, sizeof *ratio, cmp);
  fprintf(stderr,
          "mode=%s pairs=%d ratio_b_over_a_median=%.3f q1=%.3f q3=%.3f b_faster=%d/%d best_a_s=%.3f best_b_s=%.3f\n",
          argv[1], pairs, ratio[pairs / 2], ratio[pairs / 4], ratio[3 * pairs / 4], bwins, pairs, besta, bestb);
  free(ratio);
  return 0;
}
