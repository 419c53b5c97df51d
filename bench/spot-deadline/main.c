/* bench/spot-deadline — pitstop's spot policy against greedy, uniform progress
 * (Can't Be Late, NSDI '24) and the exact optimum on every trace of a
 * directory (default ../shared/data/skypilot-spot-traces), for jobs of 10, 30
 * and 100 h, restart overheads of 0.1, 0.5 and 1 h, deadlines of 1.1, 1.25,
 * 1.5 and 2 × the on-demand time (job + restart). Prices: on-demand 1, spot
 * 0.3 (costs are compared as ratios, so the unit does not matter).
 * Prints one line per case (cost and gap to the optimum of each policy) and a
 * summary: missed deadlines, mean gap, mean gap of each policy's worst 10% of
 * cases, cases where pitstop costs more than uniform progress.
 * usage: bench-spot-deadline [TRACE_DIR] [--quick]   (--quick: jobs 10 h only)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/sim.h"

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

int main(int argc, char **argv) {
  const char *dir = "../shared/data/skypilot-spot-traces";
  int quick = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else
      dir = argv[i];
  walk(dir);
  qsort(paths, (size_t)npaths, sizeof paths[0], (int (*)(const void *, const void *))strcmp);
  if (npaths == 0) {
    fprintf(stderr, "bench-spot-deadline: no .json trace under '%s'\n", dir);
    return 1;
  }
  static const double jobs[] = {10, 30, 100}, restarts[] = {0.1, 0.5, 1}, factors[] = {1.1, 1.25, 1.5, 2};
  enum { NP = 4 };
  static const enum pit_spot_policy pol[NP] = {PIT_SPOT_PITSTOP, PIT_SPOT_GREEDY, PIT_SPOT_UNIFORM, PIT_SPOT_ON_DEMAND};
  int cap = npaths * 36, n = 0, missed[NP] = {0}, above_up = 0;
  double *gap[NP], sum[NP] = {0};
  for (int k = 0; k < NP; k++)
    gap[k] = calloc((size_t)cap, sizeof(double));
  printf("%-60s %5s %4s %5s %9s %8s %8s %8s %8s\n", "trace", "job_h", "R_h", "D/od", "optimum", "pitstop", "greedy",
         "UP", "od");
  for (int f = 0; f < npaths; f++) {
    struct pit_trace tr;
    struct pit_err e = {0};
    if (pit_trace_load(&tr, paths[f], &e)) {
      fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
      return 1;
    }
    for (size_t j = 0; j < (quick ? 1 : sizeof jobs / sizeof jobs[0]); j++)
      for (size_t r = 0; r < sizeof restarts / sizeof restarts[0]; r++)
        for (size_t q = 0; q < sizeof factors / sizeof factors[0]; q++) {
          struct pit_sim_case c = {.trace = &tr, .job_h = jobs[j], .restart_h = restarts[r],
                                   .deadline_h = factors[q] * (jobs[j] + restarts[r]), .price_h = 1,
                                   .spot_price_h = 0.3, .nodes = 1};
          struct pit_sim_result opt, res;
          if (pit_sim_optimum(&c, 0, &opt, &e)) {
            fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
            return 1;
          }
          const char *name = strstr(paths[f], "traces/") ? strstr(paths[f], "traces/") + 7 : paths[f];
          printf("%-60s %5g %4g %5g %9.3f", name, jobs[j], restarts[r], factors[q], opt.cost);
          for (int k = 0; k < NP; k++) {
            if (pit_sim_run(&c, pol[k], 0, &res, &e)) {
              fprintf(stderr, "bench-spot-deadline: %s\n", e.msg);
              return 1;
            }
            double g = res.cost / opt.cost - 1;
            missed[k] += !res.deadline_met;
            gap[k][n] = g;
            sum[k] += g;
            printf(" %7.1f%%", 100 * g);
            pit_sim_result_release(&res);
          }
          above_up += gap[0][n] > gap[2][n] + 1e-9;
          printf("\n");
          pit_sim_result_release(&opt);
          n++;
        }
    pit_trace_release(&tr);
  }
  printf("\n%d cases (%d traces)\n", n, npaths);
  printf("%-18s %7s %10s %16s\n", "policy", "missed", "mean_gap", "worst10%_gap");
  static const char *names[NP] = {"pitstop", "greedy", "uniform_progress", "on_demand"};
  double w[NP];
  for (int k = 0; k < NP; k++) {
    w[k] = worst10(gap[k], n);
    printf("%-18s %7d %9.1f%% %15.1f%%\n", names[k], missed[k], 100 * sum[k] / n, 100 * w[k]);
  }
  printf("summary: pitstop mean gap %.1f%% vs uniform progress %.1f%% (ratio %.2f; aim <= 0.5), worst 10%% %.1f%% vs "
         "%.1f%%, missed %d, costlier than UP in %d of %d cases\n",
         100 * sum[0] / n, 100 * sum[2] / n, sum[2] > 0 ? sum[0] / sum[2] : NAN, 100 * w[0], 100 * w[2], missed[0],
         above_up, n);
  for (int k = 0; k < NP; k++)
    free(gap[k]);
  return 0;
}
