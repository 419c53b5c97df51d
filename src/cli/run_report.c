/* run_report.c — what `pitstop run` (cost/time) and `pitstop simulate
 * --replay` say about a run's decisions, from its events file: each decision
 * on the run's clock with its reason (consecutive keeps as one line), and the
 * run's cost beside what each membership it ran would have cost as a fixed
 * membership for the whole job, by the run's own records (pit_replay_events);
 * and its timeline chart (pit_cli_timeline: run, status --html).
 * Invariant: the events file is only read; the replay options are built in
 * one place (pit_cli_replay_opts) for both commands. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pitstop/catalog.h"
#include "pitstop/control.h"
#include "pitstop/record.h"
#include "pitstop/report.h"

int pit_cli_replay_opts(const char *events, const char *catalog, const char *types, const char *nnodes,
                        const char *policy, double deadline, double budget, struct pit_replay_opts *o,
                        char *typesbuf, size_t ntypesbuf, struct pit_err *e) {
  memset(o, 0, sizeof *o);
  o->nmin = 1;
  o->ranks_per_node = 1;
  struct pit_catalog cat = {0};
  int rc = pit_policy_parse(&o->policy, policy ? policy : "cost", e);
  if (rc == 0 && o->policy.kind != PIT_POLICY_COST && o->policy.kind != PIT_POLICY_TIME)
    rc = pit_err_set(e, PIT_EARG, "--policy %s: a replay weighs cost or time", policy);
  if (rc == 0 && nnodes)
    rc = pit_nnodes_parse(nnodes, &o->nmin, &o->nmax, e);
  o->policy.deadline_s = deadline;
  o->policy.budget = budget;
  if (rc == 0 && !catalog && !(catalog = pit_cli_catalog("local.tsv", e)))
    rc = e->code;
  if (rc == 0)
    rc = pit_catalog_load(&cat, catalog, e);
  typesbuf[0] = '\0';
  if (rc == 0 && !types) { /* the first generation's types: its node records before its first iteration */
    struct pit_record_reader rd;
    struct pit_record rec;
    struct pit_membership first; /* its types, each once */
    pit_membership_clear(&first);
    pit_record_init(&rec);
    if ((rc = pit_record_reader_open(&rd, events, e)) == 0) {
      int more;
      while ((more = pit_record_reader_next(&rd, &rec, e)) == 1 && rec.type != PIT_REC_ITER) {
        if (rec.type == PIT_REC_NODE && rec.gen == 0 && strcmp(rec.action, "start") == 0) {
          int arc = pit_membership_add(&first, rec.itype, 1, -1, e);
          if (arc < 0) {
            char m[sizeof e->msg];
            snprintf(m, sizeof m, "%s", e->msg);
            more = pit_err_set(e, arc, "%s:%ld: node record: %s", events, rd.lineno, m);
          }
        }
        pit_record_release(&rec);
        if (more < 0)
          break;
      }
      for (int i = 0; i < first.n; i++)
        snprintf(typesbuf + strlen(typesbuf), ntypesbuf - strlen(typesbuf), "%s%s", i ? "," : "", first.m[i].itype);
      rc = more < 0 ? more : 0;
      pit_record_reader_release(&rd);
    }
    pit_record_release(&rec);
  } else if (types) {
    snprintf(typesbuf, ntypesbuf, "%s", types);
  }
  if (rc == 0)
    rc = pit_policy_types(&cat, catalog, typesbuf, o->types, &o->ntypes, e);
  pit_catalog_release(&cat);
  return rc;
}

/* One line for n consecutive keeps (steps a..b), with the last one's reason. */
static void print_keeps(int n, int64_t a, int64_t b, double t, const char *reason) {
  if (n == 1)
    printf("  %7.1fs  step %6lld  keep: %s\n", t, (long long)a, reason);
  else if (n > 1)
    printf("  %7.1fs  steps %lld-%lld  keep (%d decision points; the last: %s)\n", t, (long long)a, (long long)b, n,
           reason);
}

/* The decisions seen so far: consecutive keeps are folded into one line. */
struct decisions {
  int nkeep, ndec;
  int64_t k0, k1;
  double kt;
  char kreason[1800];
};

static int print_decision(void *ctx, const struct pit_record *r, long lineno, struct pit_err *e) {
  (void)lineno;
  (void)e;
  struct decisions *x = ctx;
  if (r->type != PIT_REC_DECISION || !r->detail)
    return 0;
  struct pit_decision d;
  pit_decision_init(&d);
  if (pit_decision_decode(&d, r->detail, NULL) == 0) {
    const char *why = d.reason ? d.reason : "(no reason recorded)";
    int64_t step = d.step >= 0 ? d.step : r->step;
    x->ndec++;
    if (strcmp(d.kind, "keep") == 0) {
      if (x->nkeep++ == 0)
        x->k0 = step;
      x->k1 = step;
      x->kt = r->t;
      snprintf(x->kreason, sizeof x->kreason, "%s", why);
    } else {
      print_keeps(x->nkeep, x->k0, x->k1, x->kt, x->kreason);
      x->nkeep = 0;
      printf("  %7.1fs  step %6lld  %s → %s: %s\n", r->t, (long long)step, d.kind,
             d.nalts > 0 && d.alts[0].membership ? d.alts[0].membership : "?", why);
    }
  }
  pit_decision_release(&d);
  return 0;
}

int pit_cli_print_decisions(const char *events, struct pit_err *e) {
  struct decisions x = {0};
  printf("\ndecisions (run seconds, the step each applies at, what and why):\n");
  int rc = pit_record_each(events, print_decision, &x, e);
  print_keeps(x.nkeep, x.k0, x.k1, x.kt, x.kreason);
  if (rc == 0 && x.ndec == 0)
    printf("  none (the job was never steady long enough for a decision point)\n");
  return rc;
}

void pit_cli_print_fixed(const struct pit_replay *r, double run_cost, double run_time) {
  printf("\nthe run against fixed memberships, each replayed for the whole job over this run's own records\n"
         "(memberships it never ran have no records and are not priced):\n");
  printf("  %-36s %12s %10s\n", "membership", "cost $", "time");
  printf("  %-36s %12.6f %9.1fs\n", "this run (node records)", run_cost, run_time);
  for (int i = 0; i < r->nfixed; i++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX + 16];
    pit_membership_format(&r->fixed[i].m, m, sizeof m);
    printf("  fixed %-30s %12.6f %9.1fs%s%s\n", m, r->fixed[i].cost, r->fixed[i].time_s,
           i == r->best_fixed ? "  <- best fixed" : "", r->fixed[i].complete ? "" : "  (replay incomplete)");
  }
  if (r->best_fixed >= 0 && r->fixed[r->best_fixed].cost > 0)
    printf("run / best fixed: cost %.3f, time %.3f\n", run_cost / r->fixed[r->best_fixed].cost,
           run_time / r->fixed[r->best_fixed].time_s);
  else
    printf("run / best fixed: none of them meets the deadline (or budget)\n");
}

int pit_cli_timeline(const char *events, const char *png, struct pit_err *e) {
  struct pit_plot_opts po;
  pit_plot_opts_init(&po);
  po.out = png;
  return pit_plot_timeline(events, &po, e);
}
