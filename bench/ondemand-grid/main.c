/* bench/ondemand-grid — issue 16's on-demand-only must-show: pitstop's cost
 * policy (pit_policy_decide, the code `pitstop run --policy cost` runs),
 * driven on a simulated clock by pit_elastic_run over workload models made of
 * USL fits of real scaling measurements, against every fixed membership of
 * the same job on the same simulator: the best fixed membership in hindsight
 * (the cheapest that meets the deadline, known only after running them all)
 * and all nodes from the start.
 *
 * Workloads (node counts → measured time of one fixed amount of work; the
 * scaling fit is pit_usl_fit of throughput = 1 / time, and t_p(n) =
 * t_p(1) · X(1) / X(n)):
 *  - course-a5: SerodioJ ativ-5-exp-1, proc-{1,2,4,8}_batch-16.csv (first
 *    repeat, rank 0): 2005.8, 1084.3, 656.6, 571.5 s;
 *  - course-a6: SerodioJ ativ-6-exp-1, nnode-{1,2,2,2}_nproc-{1,1,2,4}: 1, 2,
 *    4, 8 ranks: 6409.0, 4105.5, 2663.3, 1233.7 s (t0);
 *  - course-a8: SerodioJ ativ-8-exp-1 tempos.txt, cluster-{1,2,4}: 683.8,
 *    402.0, 217.4 s;
 *  - local-q50: this machine, docs/predict.md "Scaling on emulated nodes"
 *    (cnn b64, ranks each under a 0.5-core cgroup quota, 2026-11-24, load ~16):
 *    t_p 10.32, 28.17, 65.20, 60.85 ms at 1-4 ranks (a retrograde curve: 1 is
 *    best);
 *  - local-q50y: the same with the 10 ms period and mpi_yield_when_idle: 9.62,
 *    16.44, 59.93, 52.32 ms.
 * Every workload's t_p(1) is set to 1 s (the measurements give the curve's
 * shape; a job of 20000 iterations is 5.6 h on one node).
 * The model: t_p(n) from the fit (never below 0.01 × t_p(1)), each step's
 * time × (1 + 2% uniform noise, fixed seed); per-rank compute = t_p(1)/n (the
 * work split evenly at one node's speed), wait = the rest of the step. Nodes
 * of one type priced $1/h (one type: cost ratios do not depend on the price).
 * Switching: a generation stops one step after the decision, pays 10 s
 * (checkpoint, exit) then 60 s (boot, launch, init) before its first step, billed on the new membership (the first generation
 * pays its start too).
 * Grid: each workload × start (1 node, all nodes) × deadline (none; 1.25, 1.5,
 * 2, 3 × the fastest fixed membership's time) on a job of 20000 iterations;
 * the policy's --nnodes is 1:max measured count.
 * Prints one row per case and a summary per start: the policy / best fixed
 * ratio (mean, largest; target <= 1.05), the saving against all nodes (mean,
 * least; target >= 30%) and beside it the best fixed membership's own saving
 * ("best_save"); the "30%" column says per case whether the policy saves
 * >= 30%, or "bound: best fixed saves X%" where the best fixed membership
 * itself saves less (no policy can then save 30%: the target does not apply);
 * deadlines missed (target 0).
 * usage: bench-ondemand-grid [--steps N] [--only WORKLOAD]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/control.h"
#include "pitstop/predict.h"

struct workload {
  const char *name;
  int n;                      /* measured counts */
  double counts[4], secs[4];  /* node counts, time of the fixed work (any unit) */
  double tp1;                 /* t_p at 1 node, s */
  double start_s, stop_s;
};

static const struct workload W[] = {
    {"course-a5", 4, {1, 2, 4, 8}, {2005.8190, 1084.2640, 656.6130, 571.5034}, 1.0, 60, 10},
    {"course-a6", 4, {1, 2, 4, 8}, {6408.9936, 4105.5424, 2663.3238, 1233.6895}, 1.0, 60, 10},
    {"course-a8", 3, {1, 2, 4}, {683.8407, 401.9882, 217.4465}, 1.0, 60, 10},
    {"local-q50", 4, {1, 2, 3, 4}, {10.32, 28.17, 65.20, 60.85}, 1.0, 60, 10},
    {"local-q50y", 4, {1, 2, 3, 4}, {9.62, 16.44, 59.93, 52.32}, 1.0, 60, 10},
};

struct model {
  const struct workload *w;
  struct pit_usl fit;
  double x1;
  uint64_t rng;
};

static double tp_of(const struct model *md, int n) {
  double x, lo, hi;
  pit_usl_predict(&md->fit, n, &x, &lo, &hi);
  double tp = md->w->tp1 * md->x1 / x;
  return isfinite(tp) && tp > 0.01 * md->w->tp1 ? tp : 0.01 * md->w->tp1;
}

static double noise(struct model *md) {
  md->rng = md->rng * 6364136223846793005ull + 1442695040888963407ull;
  return 1 + 0.02 * (2 * ((double)(md->rng >> 11) / 9007199254740992.0) - 1);
}

static int m_iter(void *ctx, const struct pit_membership *m, const char (*nodes)[PIT_NAME_MAX], int nnodes, int64_t step,
                  struct pit_elastic_iter *it, struct pit_err *e) {
  (void)nodes, (void)step, (void)e;
  struct model *md = ctx;
  int n = pit_membership_nodes(m);
  if (n < 1 || n != nnodes || n > PIT_POLICY_NODES_MAX)
    return 0;
  double tp = tp_of(md, n) * noise(md);
  it->step_s = it->dt = tp;
  it->batch = 64;
  it->nranks = n;
  for (int r = 0; r < n; r++) {
    it->compute_s[r] = md->w->tp1 / n * noise(md);
    if (it->compute_s[r] > tp)
      it->compute_s[r] = tp;
    it->wait_s[r] = tp - it->compute_s[r];
  }
  return 1;
}
static int64_t m_stop_step(void *ctx, int64_t decided, const struct pit_membership *to) {
  (void)ctx, (void)to;
  return decided + 1;
}
static double m_start_s(void *ctx, int gen, int64_t step, const struct pit_membership *m) {
  (void)gen, (void)step, (void)m;
  return ((const struct model *)ctx)->w->start_s;
}
static double m_stop_s(void *ctx, int gen, int64_t step, const struct pit_membership *m, int last) {
  (void)gen, (void)step, (void)m, (void)last;
  return ((const struct model *)ctx)->w->stop_s;
}

/* One simulated run of the job from n0 nodes under policy kind. */
static int run(struct model *md, const struct pit_replay_opts *o, int n0, int64_t steps,
               struct pit_elastic_result *r, struct pit_err *e) {
  static struct pit_elastic_job job;
  memset(&job, 0, sizeof job);
  if (pit_membership_add(&job.initial, "node", n0, 1, e) < 0)
    return PIT_EARG;
  job.total = steps;
  md->rng = 0x2545f4914f6cdd1dull; /* every run of a case sees the same noise sequence */
  struct pit_elastic_model mdl = {md, m_iter, m_stop_step, m_start_s, m_stop_s, NULL, NULL};
  return pit_elastic_run(&mdl, o, &job, r, e);
}

int main(int argc, char **argv) {
  int64_t steps = 20000;
  const char *only = NULL;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
      steps = atoll(argv[++i]);
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else {
      fprintf(stderr, "usage: bench-ondemand-grid [--steps N] [--only WORKLOAD]\n");
      return 2;
    }
  static const double factors[] = {0, 1.25, 1.5, 2, 3}; /* 0: no deadline */
  printf("%-11s %5s %8s %12s %12s %6s %12s %7s %7s %9s %4s %-31s %s\n", "workload", "start", "deadline", "policy_$",
         "best_fixed_$", "best_n", "all_nodes_$", "ratio", "saving", "best_save", "met", "30%", "path");
  struct { /* per start: [0] 1 node, [1] all nodes */
    int n, missed, bound_n, bound_met, over;  /* bound_n: cases where the best fixed saves >= 30% */
    double worst_ratio, sum_ratio, sum_saving, sum_best_saving, least_saving, least_bound_saving;
  } sum[2] = {{0, 0, 0, 0, 0, 0, 0, 0, 0, INFINITY, INFINITY}, {0, 0, 0, 0, 0, 0, 0, 0, 0, INFINITY, INFINITY}};
  int rc = 0;
  for (size_t w = 0; w < sizeof W / sizeof W[0]; w++) {
    if (only && strcmp(only, W[w].name) != 0)
      continue;
    struct model md = {.w = &W[w]};
    struct pit_err e = {0};
    struct pit_usl_point pt[4];
    for (int k = 0; k < W[w].n; k++)
      pt[k] = (struct pit_usl_point){W[w].counts[k], 1 / W[w].secs[k], NAN};
    if (pit_usl_fit(pt, W[w].n, &md.fit, &e) < 0) {
      fprintf(stderr, "bench-ondemand-grid: %s: %s\n", W[w].name, e.msg);
      return 1;
    }
    double lo, hi;
    pit_usl_predict(&md.fit, 1, &md.x1, &lo, &hi);
    int nmax = (int)W[w].counts[W[w].n - 1];
    printf("# %s: USL lambda %.4g sigma %.4g kappa %.4g; t_p(n) s:", W[w].name, md.fit.lambda, md.fit.sigma,
           md.fit.kappa);
    for (int n = 1; n <= nmax; n++)
      printf(" %d:%.4g", n, tp_of(&md, n));
    printf("\n");
    static struct pit_replay_opts o;
    memset(&o, 0, sizeof o);
    o.nmin = 1;
    o.nmax = nmax;
    o.ranks_per_node = 1;
    o.ntypes = 1;
    o.types[0] = (struct pit_policy_type){.itype = "node", .price_h = 1.0, .speed = 1.0};
    /* every fixed membership, on the same simulator (policy fixed) */
    double fcost[PIT_POLICY_NODES_MAX + 1], ftime[PIT_POLICY_NODES_MAX + 1], tmin = INFINITY;
    pit_policy_parse(&o.policy, "fixed", &e);
    for (int n = 1; n <= nmax; n++) {
      struct pit_elastic_result r;
      if (run(&md, &o, n, steps, &r, &e) < 0) {
        fprintf(stderr, "bench-ondemand-grid: %s: %s\n", W[w].name, e.msg);
        return 1;
      }
      fcost[n] = r.cost;
      ftime[n] = r.time_s;
      tmin = fmin(tmin, r.time_s);
      pit_elastic_result_release(&r);
    }
    for (size_t f = 0; f < sizeof factors / sizeof factors[0]; f++) {
      double deadline = factors[f] > 0 ? factors[f] * tmin : NAN;
      int best = 0;
      for (int n = 1; n <= nmax; n++)
        if ((isnan(deadline) || ftime[n] <= deadline) && (!best || fcost[n] < fcost[best]))
          best = n;
      for (int start = 1; start <= nmax; start += nmax - 1) {
        pit_policy_parse(&o.policy, "cost", &e);
        o.policy.deadline_s = deadline;
        struct pit_elastic_result r;
        if (run(&md, &o, start, steps, &r, &e) < 0) {
          fprintf(stderr, "bench-ondemand-grid: %s: %s\n", W[w].name, e.msg);
          return 1;
        }
        int met = isnan(deadline) || r.time_s <= deadline;
        double ratio = r.cost / fcost[best], saving = 1 - r.cost / fcost[nmax];
        char path[512] = "";
        snprintf(path, sizeof path, "%d", start);
        for (int i = 0; i < r.ndec && strlen(path) < sizeof path - 40; i++)
          snprintf(path + strlen(path), sizeof path - strlen(path), " >%lld:%d", (long long)r.dec[i].step,
                   pit_membership_nodes(&r.dec[i].to));
        char dl[16];
        snprintf(dl, sizeof dl, factors[f] > 0 ? "%.3gx" : "none", factors[f]);
        /* >= 30% below all nodes is possible only where the best fixed membership saves that much */
        double best_saving = 1 - fcost[best] / fcost[nmax];
        char bound[64];
        if (best_saving < 0.30)
          snprintf(bound, sizeof bound, "bound: best fixed saves %.1f%%", 100 * best_saving);
        else
          snprintf(bound, sizeof bound, "%s", saving >= 0.30 ? "yes" : "NO");
        printf("%-11s %5d %8s %12.6g %12.6g %6d %12.6g %7.3f %6.1f%% %8.1f%% %4s %-31s %s\n", W[w].name, start, dl,
               r.cost, fcost[best], best, fcost[nmax], ratio, 100 * saving, 100 * best_saving, met ? "yes" : "NO",
               bound, path);
        int k = start != 1;
        sum[k].over += ratio > 1.05;
        if (best_saving >= 0.30) {
          sum[k].bound_n++;
          sum[k].bound_met += saving >= 0.30;
          sum[k].least_bound_saving = fmin(sum[k].least_bound_saving, saving);
        }
        sum[k].n++;
        sum[k].missed += !met || r.diverged;
        sum[k].worst_ratio = fmax(sum[k].worst_ratio, ratio);
        sum[k].sum_ratio += ratio;
        sum[k].sum_saving += saving;
        sum[k].sum_best_saving += 1 - fcost[best] / fcost[nmax];
        sum[k].least_saving = fmin(sum[k].least_saving, saving);
        pit_elastic_result_release(&r);
      }
    }
  }
  for (int k = 0; k < 2; k++)
    printf("summary[start %s]: %d cases of %d steps: policy / best fixed in hindsight mean %.3f, at most %.3f (target "
           "<= 1.05; above it: %d); saving against all nodes mean %.1f%%, least %.1f%% (the best fixed's own: mean "
           "%.1f%%); >= 30%% below all nodes in %d of the %d cases where the best fixed saves >= 30%% (least %.1f%%; "
           "in the other %d the best fixed saves < 30%%: no policy can); deadlines missed %d (target 0)\n",
           k ? "all nodes" : "1 node", sum[k].n, (int)steps, sum[k].sum_ratio / sum[k].n, sum[k].worst_ratio,
           sum[k].over, 100 * sum[k].sum_saving / sum[k].n, 100 * sum[k].least_saving,
           100 * sum[k].sum_best_saving / sum[k].n, sum[k].bound_met, sum[k].bound_n, 100 * sum[k].least_bound_saving,
           sum[k].n - sum[k].bound_n, sum[k].missed);
  return rc;
}
