/* bench/spot-scale — fleets over the shared spot traces: pitstop's fleet policy
 * against on_demand, best fixed membership in hindsight, greedy, uniform
 * progress, SkyNomad-like and ROSS-like, each as its gap to the limit (the
 * exact optimum where the DP fits, else the proven lower bound; both from
 * src/sim/limit.c), over a grid:
 *   job 10 and 48 h (on N nodes), N = 1, 4, 16, 64, restart 0.1 and 0.5 h,
 *   deadlines 1.1, 1.5, 2 × (job + restart), 1, 2 and 4 zones (as the region
 *   has), 2 starts per region (tick 0 and one fixed-seed tick).
 * Regions: the traces of one folder and one kind (v100_1, k80_8, ...), each
 * file one zone. The split is fixed by trace file, whole regions at a time
 * (a case's zones never straddle the halves): held_out = aws-02-15-2023 v100_1,
 * aws-04-19-2023 intel_64, aws-10-26-2022 k80_1 and v100_8; tune = the rest
 * (the policy's constants were chosen looking at tune only).
 * Capacity: the traces count what one request could get (1-node traces: 0/1,
 * the 4-node trace: 0-4); for N nodes a count c is read as c × ceil(N / the
 * trace's max) nodes (an ASSUMPTION: the zone's capacity scales with the
 * request). Prices: on-demand 1, spot 0.3 in every zone; a move carries a
 * 10 GB checkpoint at 10 Gbit/s and 0.02 $/GB.
 * Prints per half and per group (single node = N 1 and one zone, also at 1.1×
 * and 2× deadlines; many nodes in one zone; 2-4 zones): per policy the mean gap
 * to the limit, the mean of its worst 10%, misses, cost summed, and how many
 * limits were exact. --csv FILE: every case (with --oracle, the Bayes oracle's cost, gap and met too;
 * empty where it did not run); --chart-dir DIR: one chart per
 * (region, zones, N) at the first start, 1.5× deadline, 48 h, 0.5 h restart
 * (work against the deadline and nodes by market and zone over time; gnuplot).
 * --scale: 1000 and 500 nodes over 10 zones for 14 days (the traces wrapped; the 8
 * traces of 600 s ticks and 2 of them shifted by half their length),
 * every policy, wall time (monotonic clock) and memory (bytes the simulation
 * held, and the process's peak RSS), to show time and memory per node.
 * --max-cells N: the exact limit's size (default 4e6 states, its work up to 40 N steps; the
 * 30-34 s traces' 48 h jobs need about 1e9 for the exact DP, else they get the bound).
 * --single: the single-node cases only (N 1, one zone; to tune the single-node policy quickly).
 * --oracle (implies --single): per half and deadline, the safe optimum (pit_sim_optimum_safe) and
 * the Bayes oracle of oracle.h beside pitstop and uniform progress: how far an online policy can get.
 * --synth SEED: every trace redrawn from its own span model first (oracle_synth; the model's world).
 * --oracle-cells N: the Bayes oracle's DP size (states, default 1.2e9: all but the 30-34 s traces' long
 * jobs; 8e10 takes every held-out 1.1x case, 20 min on 2 cores); --oracle-gb G: its memory (default 2;
 * beyond it the DP keeps checkpoints and does twice the work). --oracle-prev: the oracle also knows how
 * a span's length depends on the previous span of its kind (two buckets: above or below the median;
 * 4 times the states). --deadline X: only the X x deadlines.
 * Node ranges (the group "fleet, node range"): N = 4 and 16 within --nnodes 1:N and N/2:N with
 * linear throughput (the exact DP where it fits), N/2:N with each zone giving half the nodes the
 * trace scales to (spot for part of the job), and N/2:N under USL sigma 0.05 (the bound); the
 * same jobs, restarts, deadlines, zones and starts. pitstop chooses the count; the baselines hold
 * N (they are defined for one count). --range: these cases only; --no-range: the fixed-count grid only.
 * usage: bench-spot-scale [TRACE_DIR] [--quick] [--single] [--range | --no-range] [--set tune|held_out]
 *                         [--csv FILE] [--chart-dir DIR] [--max-cells N] [--oracle] [--synth SEED]
 *                         [--oracle-cells N] [--oracle-gb G] [--oracle-prev] [--deadline X]
 *        bench-spot-scale --scale [TRACE_DIR]
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "oracle.h"
#include "pitstop/sim.h"
#include "pitstop/util.h"

enum { MAXT = 64, NPOL = 7 };
static char paths[MAXT][1024];
static int npaths;

static void walk(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *de;
  while ((de = readdir(d)) && npaths < MAXT) {
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

static int cmps(const void *a, const void *b) { return strcmp(a, b); }

/* the region of a trace: its folder and the kind after the zone ("…/aws-02-15-2023" + "v100_1") */
static void region_of(const char *p, char *out, size_t n) {
  const char *b = strrchr(p, '/');
  const char *k = strchr(b ? b : p, '_');
  snprintf(out, n, "%.*s|%.*s", (int)(b ? b - p : 0), p, k ? (int)strcspn(k + 1, ".") : 0, k ? k + 1 : "");
}

static int held_out(const char *region) {
  static const char *ho[] = {"aws-02-15-2023|v100_1", "aws-04-19-2023|intel_64", "aws-10-26-2022|k80_1",
                             "aws-10-26-2022|v100_8"};
  for (size_t i = 0; i < sizeof ho / sizeof ho[0]; i++)
    if (strstr(region, ho[i]))
      return 1;
  return 0;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double worst10(double *v, int n) {
  if (n == 0)
    return NAN;
  qsort(v, (size_t)n, sizeof *v, cmpd);
  int k = n / 10 > 0 ? n / 10 : 1;
  double s = 0;
  for (int i = n - k; i < n; i++)
    s += v[i];
  return s / k;
}

struct acc {
  const char *name;
  int n, exact, missed[NPOL];
  double *gap[NPOL], cost[NPOL], limit;
};

enum { MAXCASES = 20000 };

static void acc_add(struct acc *a, const double *gap, const int *met, const double *cost, double lim, int exact) {
  if (a->n >= MAXCASES)
    return;
  for (int p = 0; p < NPOL; p++) {
    if (!a->gap[p] && !(a->gap[p] = malloc(MAXCASES * sizeof *a->gap[p]))) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    a->gap[p][a->n] = gap[p];
    a->missed[p] += !met[p];
    a->cost[p] += cost[p];
  }
  a->limit += lim;
  a->exact += exact;
  a->n++;
}

static const char *pname[NPOL] = {"pitstop", "on_demand", "greedy", "uniform_progress", "skynomad", "ross",
                                  "best_fixed"};

static void acc_print(struct acc *a) {
  if (!a->n)
    return;
  printf("%s: %d cases (%d exact limits, the rest lower bounds); limit summed %.1f\n", a->name, a->n, a->exact,
         a->limit);
  printf("  %-17s %9s %9s %7s %12s\n", "policy", "mean_gap", "worst10%", "missed", "cost_sum");
  for (int p = 0; p < NPOL; p++) {
    double s = 0;
    for (int i = 0; i < a->n; i++)
      s += a->gap[p][i];
    printf("  %-17s %8.1f%% %8.1f%% %7d %12.1f\n", pname[p], 100 * s / a->n, 100 * worst10(a->gap[p], a->n),
           a->missed[p], a->cost[p]);
  }
}

/* a copy of t with every count × k / div (capacity scaled to the request; div 2: a zone gives half) */
static int scaled(struct pit_trace *out, const struct pit_trace *t, int k, int div) {
  pit_trace_init(out);
  *out = *t;
  out->spot_price_h = NULL;
  out->count = malloc((size_t)t->n * sizeof *out->count);
  if (!out->count)
    return -1;
  memcpy(out->count, t->count, (size_t)t->n * sizeof *out->count);
  struct pit_err e = {0};
  return pit_trace_scale(out, k, div, &e) ? -1 : 0;
}

static int maxcount(const struct pit_trace *t) {
  int m = pit_trace_max(t);
  return m > 1 ? m : 1;
}

/* a shape of the grid: N nodes, the counts a policy may use, the USL sigma, capacity ÷ cap_div,
 * and the range group it adds to (-1: the fixed-count grid) */
struct shape {
  int n, nmin, nmax;
  double sigma;
  int cap_div, group;
};

static double max_cells = 4e6; /* --max-cells: the exact DP's size (states; its work up to 40× that) */
static double oracle_cells = 1.2e9, oracle_gb = 2; /* --oracle-cells, --oracle-gb */
static int oracle_prev; /* --oracle-prev */

static int run_case(const struct pit_sim_study *s, struct pit_fleet_result *res, double *lim, int *exact) {
  static const enum pit_fleet_policy pol[NPOL - 1] = {PIT_FLEET_PITSTOP, PIT_FLEET_ON_DEMAND, PIT_FLEET_GREEDY,
                                                      PIT_FLEET_UNIFORM, PIT_FLEET_SKYNOMAD, PIT_FLEET_ROSS};
  struct pit_err e = {0};
  for (int p = 0; p < NPOL - 1; p++)
    if (pit_fleet_run(s, pol[p], -1, 0, 0, &res[p], &e)) {
      fprintf(stderr, "bench-spot-scale: %s\n", e.msg);
      return -1;
    }
  int fp, fs;
  if (pit_fleet_best_fixed(s, &res[NPOL - 1], &fp, &fs, &e)) {
    fprintf(stderr, "bench-spot-scale: %s\n", e.msg);
    return -1;
  }
  const char *kind;
  if (pit_fleet_limit(s, max_cells, lim, &kind, &e)) {
    fprintf(stderr, "bench-spot-scale: %s\n", e.msg);
    return -1;
  }
  *exact = strcmp(kind, "exact") == 0;
  return 0;
}

/* --oracle: per half and deadline, the safe optimum over every single-node case, and on
 * the cases whose Bayes oracle fits in memory (oracle.h) its gap beside pitstop's and
 * uniform progress's on the same cases; all gaps to the exact optimum */
struct oracle_acc {
  int n_all, n, missed, checkpointed;
  double safe_all, safe, pitstop, uniform, bayes;
};

static int oracle_case(const struct pit_sim_study *s, const struct pit_trace *t, double lim, const double *cost,
                       struct oracle_acc *a, double *bayes, int *bmet) {
  struct pit_sim_case c = {.trace = t, .offset = s->offset, .job_h = s->job_h, .deadline_h = s->deadline_h,
                           .restart_h = s->restart_h, .price_h = s->pools[0].price_h,
                           .spot_price_h = s->pools[0].spot_price_h, .nodes = 1};
  struct pit_sim_result so;
  struct pit_err e = {0};
  if (pit_sim_optimum_safe(&c, 0, &so, &e)) {
    fprintf(stderr, "bench-spot-scale: safe optimum: %s\n", e.msg);
    return -1;
  }
  double safe = so.cost / lim - 1;
  pit_sim_result_release(&so);
  a->n_all++;
  a->safe_all += safe;
  struct oracle_model m;
  double oc;
  int om, segs = 1, rc = oracle_fit(&m, t, oracle_prev) ? 1 : oracle_run(&c, &m, oracle_cells, oracle_gb * 1e9, &oc, &om, &segs);
  if (rc < 0) {
    fprintf(stderr, "bench-spot-scale: out of memory for the Bayes oracle\n");
    return -1;
  }
  *bayes = rc == 0 ? oc : NAN;
  *bmet = rc == 0 && om;
  if (rc == 0) {
    a->n++;
    a->safe += safe;
    a->pitstop += cost[0] / lim - 1;
    a->uniform += cost[3] / lim - 1;
    a->bayes += oc / lim - 1;
    a->missed += !om;
    a->checkpointed += segs > 1;
  }
  return 0;
}

static void oracle_print(struct oracle_acc a[2][3], int synth) {
  static const char *dl[3] = {"1.1x", "1.5x", "2x"};
  printf("single node, how far an online policy can get%s%s (mean gap to the exact optimum):\n",
         synth ? " (traces redrawn from their own span model)" : "",
         oracle_prev ? " (the oracle knows each span's dependence on the previous one of its kind)" : "");
  printf("  %-9s %-5s %7s %6s | %5s %8s %8s %8s %8s %7s\n", "set", "dl", "cases", "safe", "where", "safe",
         "bayes", "pitstop", "uniform", "missed");
  for (int h = 0; h < 2; h++)
    for (int d = 0; d < 3; d++) {
      const struct oracle_acc *x = &a[h][d];
      if (!x->n_all)
        continue;
      double k = x->n ? x->n : NAN;
      printf("  %-9s %-5s %7d %5.1f%% | %5d %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7d\n", h ? "held_out" : "tune", dl[d],
             x->n_all, 100 * x->safe_all / x->n_all, x->n, 100 * x->safe / k, 100 * x->bayes / k,
             100 * x->pitstop / k, 100 * x->uniform / k, x->missed);
    }
  int ck = 0;
  for (int h = 0; h < 2; h++)
    for (int d = 0; d < 3; d++)
      ck += a[h][d].checkpointed;
  printf("  the oracle's choices were recomputed from checkpoints (--oracle-gb) in %d cases\n", ck);
}

static long rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* --scale: nodes over 10 zones, 14 days */
static int scale(int nodes) {
  struct pit_trace tr[10];
  struct pit_sim_pool pools[10];
  int nz = 0;
  for (int j = 0; j < npaths && nz < 10; j++) {
    struct pit_trace raw;
    struct pit_err e = {0};
    if (pit_trace_load(&raw, paths[j], &e)) {
      fprintf(stderr, "bench-spot-scale: %s\n", e.msg);
      return 1;
    }
    if (raw.gap_s == 600 && scaled(&tr[nz], &raw, (nodes + maxcount(&raw) - 1) / maxcount(&raw), 1) == 0) {
      pools[nz] = (struct pit_sim_pool){.trace = &tr[nz], .price_h = 1, .spot_price_h = 0.3,
                                        .egress_usd_gb = 0.02, .net_gbps = 10};
      snprintf(pools[nz].zone, sizeof pools[nz].zone, "z%d", nz);
      nz++;
    }
    pit_trace_release(&raw); /* one tick for the study: other gaps are left out */
  }
  /* fewer than 10 traces of that tick: the rest are copies shifted by half their length (stated) */
  for (int k = 0; nz < 10 && k < nz; k++) {
    const struct pit_trace *t = &tr[k];
    tr[nz] = *t;
    tr[nz].count = malloc((size_t)t->n * sizeof *t->count);
    if (!tr[nz].count)
      return 1;
    for (int i = 0; i < t->n; i++)
      tr[nz].count[i] = t->count[(i + t->n / 2) % t->n];
    pools[nz] = pools[k];
    pools[nz].trace = &tr[nz];
    snprintf(pools[nz].zone, sizeof pools[nz].zone, "z%d-shifted", k);
    nz++;
  }
  struct pit_sim_study s = {.pools = pools, .npools = nz, .job_h = 240, .deadline_h = 336, .restart_h = 0.2,
                            .nodes = nodes, .nmin = nodes, .nmax = nodes, .ckpt_gb = 10, .seed = 1};
  printf("scale: %d nodes over %d zones, a 240 h job due in 336 h (14 days; traces wrapped)\n", nodes, nz);
  double t0 = pit_now();
  for (int p = 0; p < PIT_FLEET_FIXED; p++) {
    struct pit_fleet_result r;
    struct pit_err e = {0};
    double a = pit_now();
    if (pit_fleet_run(&s, p, -1, 0, 0, &r, &e)) {
      fprintf(stderr, "bench-spot-scale: %s\n", e.msg);
      return 1;
    }
    printf("  %-17s cost %12.1f met %d reclaimed %7d moves %3d changes %5d  %.3f s, held %zu bytes\n",
           pit_fleet_policy_name(p), r.cost, r.deadline_met, r.reclaimed, r.moves, r.nchanges, pit_now() - a,
           r.peak_bytes);
    pit_fleet_result_release(&r);
  }
  double a = pit_now(), lim;
  struct pit_err e = {0};
  if (pit_fleet_bound(&s, &lim, &e)) {
    fprintf(stderr, "bench-spot-scale: %s\n", e.msg);
    return 1;
  }
  printf("  lower bound %.1f (%.3f s)\n", lim, pit_now() - a);
  printf("scale %d nodes: total wall %.3f s, peak RSS %ld KiB\n", nodes, pit_now() - t0, rss_kib());
  for (int i = 0; i < nz; i++)
    free(tr[i].count);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = "../shared/data/skypilot-spot-traces", *csv = NULL, *only = NULL, *chart_dir = NULL;
  int quick = 0, do_scale = 0, single_only = 0, range_only = 0, no_range = 0, oracle = 0, synth = 0;
  uint64_t synth_seed = 0;
  double only_dl = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--scale") == 0)
      do_scale = 1;
    else if (strcmp(argv[i], "--single") == 0)
      single_only = 1;
    else if (strcmp(argv[i], "--range") == 0)
      range_only = 1;
    else if (strcmp(argv[i], "--no-range") == 0)
      no_range = 1;
    else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
      csv = argv[++i];
    else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc)
      only = argv[++i];
    else if (strcmp(argv[i], "--chart-dir") == 0 && i + 1 < argc)
      chart_dir = argv[++i];
    else if (strcmp(argv[i], "--max-cells") == 0 && i + 1 < argc && (max_cells = atof(argv[++i])) > 0)
      ;
    else if (strcmp(argv[i], "--oracle-cells") == 0 && i + 1 < argc && (oracle_cells = atof(argv[++i])) > 0)
      ;
    else if (strcmp(argv[i], "--oracle-gb") == 0 && i + 1 < argc && (oracle_gb = atof(argv[++i])) > 0)
      ;
    else if (strcmp(argv[i], "--deadline") == 0 && i + 1 < argc && (only_dl = atof(argv[++i])) > 0)
      ;
    else if (strcmp(argv[i], "--oracle-prev") == 0)
      oracle_prev = 1;
    else if (strcmp(argv[i], "--oracle") == 0)
      oracle = single_only = 1;
    else if (strcmp(argv[i], "--synth") == 0 && i + 1 < argc)
      synth = 1, synth_seed = strtoull(argv[++i], NULL, 10);
    else if (argv[i][0] != '-')
      dir = argv[i];
    else {
      fprintf(stderr, "usage: bench-spot-scale [TRACE_DIR] [--quick] [--single] [--range | --no-range] "
                      "[--set tune|held_out] [--csv FILE] [--chart-dir DIR] [--max-cells N] [--oracle] [--synth SEED] "
                      "[--oracle-cells N] [--oracle-gb G] [--oracle-prev] [--deadline X] | --scale [TRACE_DIR]\n");
      return 2;
    }
  }
  walk(dir);
  qsort(paths, (size_t)npaths, sizeof paths[0], cmps);
  if (npaths == 0) {
    fprintf(stderr, "bench-spot-scale: no .json trace under '%s'\n", dir);
    return 1;
  }
  if (do_scale)
    return scale(1000) || scale(500);
  /* regions */
  char reg[MAXT][1100];
  for (int i = 0; i < npaths; i++)
    region_of(paths[i], reg[i], sizeof reg[i]);
  struct pit_trace raw[MAXT];
  for (int i = 0; i < npaths; i++) {
    struct pit_err e = {0};
    if (pit_trace_load(&raw[i], paths[i], &e)) {
      fprintf(stderr, "bench-spot-scale: %s\n", e.msg);
      return 1;
    }
    int rs = synth ? oracle_synth(&raw[i], synth_seed * 1000 + (uint64_t)i) : 0;
    if (rs < 0) {
      fprintf(stderr, "bench-spot-scale: out of memory\n");
      return 1;
    }
    if (rs > 0)
      fprintf(stderr, "bench-spot-scale: %s: no completed span of spot there or away: kept as it is\n", paths[i]);
  }
  struct oracle_acc orc[2][3];
  memset(orc, 0, sizeof orc);
  static const double jobs[] = {10, 48}, rs[] = {0.1, 0.5}, dls[] = {1.1, 1.5, 2};
  if (only_dl > 0 && fabs(only_dl - 1.1) > 1e-9 && fabs(only_dl - 1.5) > 1e-9 && fabs(only_dl - 2) > 1e-9) {
    fprintf(stderr, "bench-spot-scale: --deadline %g is not in the grid (1.1, 1.5, 2)\n", only_dl);
    return 2;
  }
  static const int zs[] = {1, 2, 4};
  /* the fixed-count grid (N = 1, 4, 16, 64 on N nodes), then the node ranges: N = 4 and 16 within
   * 1:N and N/2:N, linear (the exact DP applies), a zone giving at most half the nodes the trace
   * scales to (so spot covers part of the job), and USL (sigma 0.05: the bound) */
  static const struct shape sh[] = {
      {1, 1, 1, 0, 1, -1}, {4, 4, 4, 0, 1, -1}, {16, 16, 16, 0, 1, -1}, {64, 64, 64, 0, 1, -1},
      {4, 1, 4, 0, 1, 6},  {4, 2, 4, 0, 1, 6},  {4, 2, 4, 0, 2, 7},     {4, 2, 4, 0.05, 1, 8},
      {16, 1, 16, 0, 1, 6}, {16, 8, 16, 0, 1, 6}, {16, 8, 16, 0, 2, 7}, {16, 8, 16, 0.05, 1, 8}};
  int njobs = quick ? 1 : 2, nsh = (int)(sizeof sh / sizeof sh[0]);
  enum { NG = 9 };
  struct acc acc[2][NG];
  const char *an[NG] = {"single node", "single node, 1.1x deadline", "single node, 2x deadline",
                        "many nodes, one zone", "multi-zone (2-4 zones, any N)",
                        "fleet, node range (--nnodes; baselines hold N)", "  node range, linear",
                        "  node range, linear, a zone gives half", "  node range, USL 0.05 (bound)"};
  memset(acc, 0, sizeof acc);
  char names[2][NG][100];
  for (int h = 0; h < 2; h++)
    for (int g = 0; g < NG; g++) {
      snprintf(names[h][g], sizeof names[h][g], "%s / %s", h ? "held_out" : "tune", an[g]);
      acc[h][g].name = names[h][g];
    }
  FILE *cf = NULL;
  char tmp[1100];
  if (csv) {
    snprintf(tmp, sizeof tmp, "%s.tmp", csv);
    cf = fopen(tmp, "w");
    if (!cf) {
      fprintf(stderr, "bench-spot-scale: cannot write '%s'\n", tmp);
      return 1;
    }
    fprintf(cf, "set,region,zones,nodes,nmin,nmax,usl_sigma,capacity_div,start,job_h,restart_h,deadline_x,limit,"
                "limit_kind");
    for (int p = 0; p < NPOL; p++)
      fprintf(cf, ",%s_cost,%s_gap,%s_met", pname[p], pname[p], pname[p]);
    if (oracle)
      fprintf(cf, ",bayes_cost,bayes_gap,bayes_met");
    fprintf(cf, "\n");
  }
  double t0 = pit_now();
  for (int i = 0; i < npaths; i++) {
    if (i > 0 && strcmp(reg[i], reg[i - 1]) == 0)
      continue; /* the first trace of each region leads it */
    int members[8], nm = 0;
    for (int j = i; j < npaths && nm < 8; j++)
      if (strcmp(reg[j], reg[i]) == 0 && raw[j].gap_s == raw[i].gap_s)
        members[nm++] = j;
    int ho = held_out(reg[i]);
    if (only && strcmp(only, ho ? "held_out" : "tune") != 0)
      continue;
    for (int zi = 0; zi < 3; zi++) {
      int nz = zs[zi];
      if (nz > nm || (single_only && nz > 1))
        continue;
      for (int si = 0; si < nsh; si++) {
        const struct shape *x = &sh[si];
        int N = x->n, range = x->group >= 0;
        if ((single_only && si > 0) || (quick && N == 64) || (range_only && !range) || (no_range && range))
          continue;
        struct pit_trace tr[8];
        struct pit_sim_pool pools[8];
        for (int z = 0; z < nz; z++) {
          const struct pit_trace *t = &raw[members[z]];
          int k = (N + maxcount(t) - 1) / maxcount(t);
          if (scaled(&tr[z], t, k, x->cap_div)) {
            fprintf(stderr, "out of memory\n");
            return 1;
          }
          pools[z] = (struct pit_sim_pool){.trace = &tr[z], .price_h = 1, .spot_price_h = 0.3, .egress_usd_gb = 0.02,
                                           .net_gbps = 10};
          const char *b = strrchr(paths[members[z]], '/');
          snprintf(pools[z].zone, sizeof pools[z].zone, "%.*s", (int)strcspn(b + 1, "_"), b + 1);
        }
        for (int st = 0; st < 2; st++) {
          int offset = st == 0 ? 0 : (int)((uint64_t)(i * 7919 + 104729) % (uint64_t)tr[0].n);
          for (int ji = 0; ji < njobs; ji++)
            for (int ri = 0; ri < 2; ri++)
              for (int di = 0; di < 3; di++) {
                if (only_dl > 0 && fabs(dls[di] - only_dl) > 1e-9)
                  continue;
                double job = jobs[ji], r = rs[ri];
                struct pit_sim_study s = {.pools = pools, .npools = nz, .offset = offset, .job_h = job,
                                          .deadline_h = dls[di] * (job + r), .restart_h = r, .nodes = N,
                                          .nmin = x->nmin, .nmax = x->nmax, .sigma = x->sigma, .ckpt_gb = 10,
                                          .seed = (uint64_t)(i * 131 + st * 17 + si)}; /* si < 4: as before */
                struct pit_fleet_result res[NPOL];
                double lim;
                int exact;
                if (run_case(&s, res, &lim, &exact))
                  return 1;
                double gap[NPOL], cost[NPOL];
                int met[NPOL];
                for (int p = 0; p < NPOL; p++) {
                  cost[p] = res[p].cost;
                  met[p] = res[p].deadline_met;
                  gap[p] = lim > 0 ? res[p].cost / lim - 1 : 0;
                }
                int single = N == 1 && nz == 1;
                double bayes = NAN;
                int bmet = 0;
                if (oracle && single && !range && oracle_case(&s, &tr[0], lim, cost, &orc[ho][di], &bayes, &bmet))
                  return 1;
                if (range) {
                  acc_add(&acc[ho][5], gap, met, cost, lim, exact);
                  acc_add(&acc[ho][x->group], gap, met, cost, lim, exact);
                } else {
                  acc_add(&acc[ho][single ? 0 : nz == 1 ? 3 : 4], gap, met, cost, lim, exact);
                  if (single && di != 1)
                    acc_add(&acc[ho][di == 0 ? 1 : 2], gap, met, cost, lim, exact);
                }
                if (cf) {
                  fprintf(cf, "%s,%s,%d,%d,%d,%d,%g,%d,%d,%g,%g,%g,%.6f,%s", ho ? "held_out" : "tune", reg[i], nz, N,
                          x->nmin, x->nmax, x->sigma, x->cap_div, offset, job, r, dls[di], lim,
                          exact ? "exact" : "bound");
                  for (int p = 0; p < NPOL; p++)
                    fprintf(cf, ",%.6f,%.6f,%d", cost[p], gap[p], met[p]);
                  if (oracle && isfinite(bayes))
                    fprintf(cf, ",%.6f,%.6f,%d", bayes, bayes / lim - 1, bmet);
                  else if (oracle)
                    fprintf(cf, ",,,");
                  fprintf(cf, "\n");
                }
                if (chart_dir && st == 0 && ji == njobs - 1 && ri == 1 && di == 1) {
                  char out[1400];
                  const char *rb = strrchr(reg[i], '/');
                  if (range)
                    snprintf(out, sizeof out, "%.600s/%.300s-z%d-n%d-range%d-%d%s%s.png", chart_dir,
                             rb ? rb + 1 : reg[i], nz, N, x->nmin, x->nmax, x->cap_div > 1 ? "-half" : "",
                             x->sigma > 0 ? "-usl" : "");
                  else
                    snprintf(out, sizeof out, "%.600s/%.300s-z%d-n%d.png", chart_dir, rb ? rb + 1 : reg[i], nz, N);
                  for (char *c = out + strlen(chart_dir) + 1; *c; c++)
                    if (*c == '|')
                      *c = '_';
                  struct pit_fleet_result kept[3];
                  struct pit_err e = {0};
                  static const enum pit_fleet_policy cp[3] = {PIT_FLEET_PITSTOP, PIT_FLEET_SKYNOMAD,
                                                              PIT_FLEET_UNIFORM};
                  int ok = 1;
                  for (int k = 0; k < 3 && ok; k++)
                    ok = pit_fleet_run(&s, cp[k], -1, 0, 1, &kept[k], &e) == 0;
                  const char *cn[3] = {"pitstop", "skynomad", "uniform_progress"};
                  if (!ok || pit_fleet_chart(&s, kept, cn, 3, out, &e))
                    fprintf(stderr, "bench-spot-scale: chart: %s\n", e.msg);
                  for (int k = 0; k < 3; k++)
                    pit_fleet_result_release(&kept[k]);
                }
                for (int p = 0; p < NPOL; p++)
                  pit_fleet_result_release(&res[p]);
              }
        }
        for (int z = 0; z < nz; z++)
          free(tr[z].count);
      }
    }
  }
  double wall = pit_now() - t0;
  for (int h = 0; h < 2; h++)
    for (int g = 0; g < NG; g++)
      acc_print(&acc[h][g]);
  if (oracle)
    oracle_print(orc, synth);
  printf("wall %.1f s, peak RSS %ld KiB\n", wall, rss_kib());
  if (cf) {
    if (fclose(cf) || rename(tmp, csv)) {
      fprintf(stderr, "bench-spot-scale: cannot write '%s'\n", csv);
      return 1;
    }
  }
  for (int i = 0; i < npaths; i++)
    pit_trace_release(&raw[i]);
  for (int h = 0; h < 2; h++)
    for (int g = 0; g < NG; g++)
      for (int p = 0; p < NPOL; p++)
        free(acc[h][g].gap[p]);
  return 0;
}
