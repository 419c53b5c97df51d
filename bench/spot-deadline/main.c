/* bench/spot-deadline — pitstop's spot policy against greedy, uniform progress
 * (Can't Be Late, NSDI '24) and the exact optimum on every trace of a
 * directory (default ../shared/data/skypilot-spot-traces), for jobs of 10, 30
 * and 100 h, restart overheads of 0.1, 0.5 and 1 h, deadlines of 1.1, 1.25,
 * 1.5 and 2 × the on-demand time (job + restart). Prices: on-demand 1, spot
 * 0.3 (costs are compared as ratios, so the unit does not matter).
 * Each (trace, job, restart, deadline) is run from --starts N points of the
 * trace: tick 0 and N-1 more drawn by a fixed-seed generator (the paper
 * samples 300 random starts per trace; one start per trace is too few).
 * Traces are split by their sorted index: even = the tuning set (pitstop's
 * policy constants were chosen on it), odd = held out; the summary is printed
 * for each set and for all.
 * Prints one line per case (cost and gap to the optimum of each policy;
 * --summary: only the summaries) and per set: missed deadlines, mean gap,
 * mean gap of each policy's worst 10% of cases, cases where pitstop costs
 * more than uniform progress.
 * --csv FILE: also every case as one CSV row (trace, start tick, job, restart,
 * deadline factor, the optimum's cost, then per policy its cost, gap to the
 * optimum and whether it met the deadline), written atomically.
 * --scale TRACE: instead, one job on 1000 nodes over 14 days of TRACE
 * (pit_sim_multi, each policy), with the wall time (monotonic clock) and the
 * memory (the bytes the simulation held, and the process's peak RSS).
 * --set tune|held_out: only that set's traces (the start offsets stay the same).
 * usage: bench-spot-deadline [TRACE_DIR] [--quick] [--starts N] [--spot-ratio X] [--summary] [--csv FILE]
 *                            [--set tune|held_out]
 *        bench-spot-deadline --scale TRACE
 *   --quick: jobs 10 h only; --starts: default 1; --spot-ratio: spot / on-demand price, default 0.3
 */
#include <dirent.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "pitstop/sim.h"
#include "pitstop/util.h"

static char paths[256][1024];
static int npaths;

static void walk(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *de;
  while ((de = readdir(d)) && npaths < 256) {
    if (de->d_name[0] == '.')
      continue;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    size_t l = strlen(p);
    if (l > 5 && strcmp(p + l - 5, ".json") == 0)
      snprintf(paths[npaths++], sizeof paths[0], "%s", p);
    else
      walk(p);
  }
  closedir(d);
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* mean of the largest 10% of v (sorted in place) */
static double worst10(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  int k = n / 10 > 0 ? n / 10 : 1;
  double s = 0;
  for (int i = n - k; i < n; i++)
    s += v[i];
  return s / k;
}

struct set {
  const char *name;
  int n, missed[4], above_up;
  double *gap[4], sum[4];
};

static void summary(struct set *st) {
  static const char *names[4] = {"pitstop", "greedy", "uniform_progress", "on_demand"};
  int n = st->n;
  if (n == 0)
    return;
  printf("\n[%s] %d cases\n", st->name, n);
  printf("%-18s %7s %10s %16s\n", "policy", "missed", "mean_gap", "worst10%_gap");
  double w[4];
  for (int k = 0; k < 4; k++) {
    w[k] = worst10(st->gap[k], n);
    printf("%-18s %7d %9.1f%% %15.1f%%\n", names[k], st->missed[k], 100 * st->sum[k] / n, 100 * w[k]);
  }
  printf("summary[%s]: pitstop mean gap %.1f%% vs uniform progress %.1f%% (ratio %.2f; aim <= 0.5), worst 10%% %.1f%% "
         "vs %.1f%%, missed %d, costlier than UP in %d of %d cases\n",
         st->name, 100 * st->sum[0] / n, 100 * st->sum[2] / n, st->sum[2] > 0 ? st->sum[0] / st->sum[2] : NAN,
         100 * w[0], 100 * w[2], st->missed[0], st->above_up, n);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 1000 nodes, a 250 h job due in 14 days (336 h), restart 0.2 h, spot 0.3 */
static int scale(const char *path) {
  struct pit_trace tr;
  struct pit_err e = {0};
  double t0 = now_s();
  if (pit_trace_load(&tr, path, &e)) {
    fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
    return 1;
  }
  double t1 = now_s();
  struct pit_sim_case c = {.trace = &tr, .job_h = 250, .deadline_h = 336, .restart_h = 0.2, .price_h = 1,
                           .spot_price_h = 0.3, .nodes = 1000};
  printf("scale: %s, %d ticks of %g s (%.1f days), 1000 nodes, job 250 h, deadline 336 h, restart 0.2 h; load %.3f s\n",
         path, tr.n, tr.gap_s, tr.n * tr.gap_s / 86400, t1 - t0);
  static const enum pit_spot_policy pol[4] = {PIT_SPOT_PITSTOP, PIT_SPOT_GREEDY, PIT_SPOT_UNIFORM, PIT_SPOT_ON_DEMAND};
  for (int k = 0; k < 4; k++) {
    struct pit_sim_result r;
    size_t bytes = 0;
    double a = now_s();
    if (pit_sim_multi(&c, pol[k], &r, &bytes, &e)) {
      fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
      return 1;
    }
    double b = now_s();
    printf("scale: %-17s cost %10.1f finish %7.2f h met %s spot %9.1f node-h od %9.1f node-h reclaims %d  wall %.4f s, "
           "held %zu bytes\n",
           pit_spot_policy_name(pol[k]), r.cost, r.finish_h, r.deadline_met ? "yes" : "NO", r.spot_h, r.od_h,
           r.preemptions, b - a, bytes);
    pit_sim_result_release(&r);
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("scale: total wall %.3f s, peak RSS %ld KiB\n", now_s() - t0, ru.ru_maxrss);
  pit_trace_release(&tr);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--scale") == 0)
    return scale(argv[2]);
  const char *dir = "../shared/data/skypilot-spot-traces";
  const char *csv = NULL;
  int quick = 0, starts = 1, quiet = 0, only = -1;
  double ratio = 0.3;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--summary") == 0)
      quiet = 1;
    else if (strcmp(argv[i], "--starts") == 0 && i + 1 < argc)
      starts = atoi(argv[++i]);
    else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && (strcmp(argv[i + 1], "tune") == 0 ||
                                                                strcmp(argv[i + 1], "held_out") == 0))
      only = strcmp(argv[++i], "tune") == 0 ? 0 : 1;
    else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
      csv = argv[++i];
    else if (strcmp(argv[i], "--spot-ratio") == 0 && i + 1 < argc)
      ratio = atof(argv[++i]);
    else
      dir = argv[i];
  if (starts < 1 || !(ratio > 0 && ratio < 1)) {
    fprintf(stderr, "bench-spot-deadline: --starts >= 1 and 0 < --spot-ratio < 1\n");
    return 2;
  }
  struct pit_atomic_file af = {0};
  if (csv) {
    struct pit_err e = {0};
    if (pit_atomic_open(&af, csv, &e)) {
      fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
      return 1;
    }
    fprintf(af.fp, "trace,start_tick,job_h,restart_h,deadline_factor,deadline_h,optimum_cost");
    for (int k = 0; k < 4; k++) {
      const char *n = pit_spot_policy_name(k == 0 ? PIT_SPOT_PITSTOP : k == 1 ? PIT_SPOT_GREEDY
                                           : k == 2 ? PIT_SPOT_UNIFORM : PIT_SPOT_ON_DEMAND);
      fprintf(af.fp, ",%s_cost,%s_gap,%s_met", n, n, n);
    }
    fprintf(af.fp, "\n");
  }
  walk(dir);
  qsort(paths, (size_t)npaths, sizeof paths[0], (int (*)(const void *, const void *))strcmp);
  if (npaths == 0) {
    fprintf(stderr, "bench-spot-deadline: no .json trace under '%s'\n", dir);
    return 1;
  }
  static const double jobs[] = {10, 30, 100}, restarts[] = {0.1, 0.5, 1}, factors[] = {1.1, 1.25, 1.5, 2};
  enum { NP = 4 };
  static const enum pit_spot_policy pol[NP] = {PIT_SPOT_PITSTOP, PIT_SPOT_GREEDY, PIT_SPOT_UNIFORM, PIT_SPOT_ON_DEMAND};
  int cap = npaths * 36 * starts;
  struct set sets[3] = {{.name = "tune"}, {.name = "held_out"}, {.name = "all"}};
  for (int s = 0; s < 3; s++)
    for (int k = 0; k < NP; k++)
      sets[s].gap[k] = calloc((size_t)cap, sizeof(double));
  if (!quiet)
    printf("%-60s %6s %5s %4s %5s %9s %8s %8s %8s %8s\n", "trace", "start", "job_h", "R_h", "D/od", "optimum",
           "pitstop", "greedy", "UP", "od");
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (int f = 0; f < npaths; f++) {
    if (only >= 0 && f % 2 != only) { /* the other set: its start offsets drawn all the same */
      for (int st = 0; st < starts; st++)
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      continue;
    }
    struct pit_trace tr;
    struct pit_err e = {0};
    if (pit_trace_load(&tr, paths[f], &e)) {
      fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
      return 1;
    }
    struct set *mine[2] = {&sets[f % 2], &sets[2]};
    for (int st = 0; st < starts; st++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      int offset = st == 0 ? 0 : (int)((rng >> 33) % (uint64_t)tr.n);
      for (size_t j = 0; j < (quick ? 1 : sizeof jobs / sizeof jobs[0]); j++)
        for (size_t r = 0; r < sizeof restarts / sizeof restarts[0]; r++)
          for (size_t q = 0; q < sizeof factors / sizeof factors[0]; q++) {
            struct pit_sim_case c = {.trace = &tr, .offset = offset, .job_h = jobs[j], .restart_h = restarts[r],
                                     .deadline_h = factors[q] * (jobs[j] + restarts[r]), .price_h = 1,
                                     .spot_price_h = ratio, .nodes = 1};
            struct pit_sim_result opt, res;
            if (pit_sim_optimum(&c, 0, &opt, &e)) {
              fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
              return 1;
            }
            const char *name = strstr(paths[f], "traces/") ? strstr(paths[f], "traces/") + 7 : paths[f];
            if (!quiet)
              printf("%-60s %6d %5g %4g %5g %9.3f", name, offset, jobs[j], restarts[r], factors[q], opt.cost);
            double g[NP], cost[NP];
            int met[NP];
            for (int k = 0; k < NP; k++) {
              if (pit_sim_run(&c, pol[k], 0, &res, &e)) {
                fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
                return 1;
              }
              cost[k] = res.cost;
              g[k] = res.cost / opt.cost - 1;
              met[k] = res.deadline_met;
              if (!quiet)
                printf(" %7.1f%%", 100 * g[k]);
              pit_sim_result_release(&res);
            }
            if (!quiet)
              printf("\n");
            if (csv) {
              fprintf(af.fp, "%s,%d,%g,%g,%g,%.6g,%.9g", name, offset, jobs[j], restarts[r], factors[q],
                      c.deadline_h, opt.cost);
              for (int k = 0; k < NP; k++)
                fprintf(af.fp, ",%.9g,%.6f,%d", cost[k], g[k], met[k]);
              fprintf(af.fp, "\n");
            }
            for (int m = 0; m < 2; m++) {
              struct set *s = mine[m];
              for (int k = 0; k < NP; k++) {
                s->missed[k] += !met[k];
                s->gap[k][s->n] = g[k];
                s->sum[k] += g[k];
              }
              s->above_up += g[0] > g[2] + 1e-9;
              s->n++;
            }
            pit_sim_result_release(&opt);
          }
    }
    pit_trace_release(&tr);
  }
  printf("\n%d traces (tuning set: even sorted index, held out: odd), %d start(s) each, spot/on-demand price %.3g\n",
         npaths, starts, ratio);
  for (int s = 0; s < 3; s++)
    summary(&sets[s]);
  if (csv) {
    struct pit_err e = {0};
    if (pit_atomic_commit(&af, &e)) {
      fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
      return 1;
    }
    printf("cases written to %s\n", csv);
  }
  for (int s = 0; s < 3; s++)
    for (int k = 0; k < NP; k++)
      free(sets[s].gap[k]);
  return 0;
}
