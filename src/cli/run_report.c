/* run_report.c — what `pitstop run` (cost/time) and `pitstop simulate
 * --replay` say about a run's decisions, from its fold (record.h, the run
 * log; loaded once with the catalog, pit_cli_replay_load): each decision
 * on the run's clock with its reason (consecutive keeps as one line), and the
 * run's cost beside what each membership it ran would have cost as a fixed
 * membership for the whole job, by the run's own records (pit_replay_log);
 * and its timeline chart (pit_cli_timeline) and report.html (pit_cli_report_html:
 * run, status --html).
 * Invariant: the events file is only read, by pit_runlog_load; the replay
 * options are built in one place (pit_cli_replay_load) for both commands. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pitstop/catalog.h"
#include "pitstop/control.h"
#include "pitstop/record.h"
#include "pitstop/report.h"

/* The replay options of a run (events names it in messages); the catalog loaded into x->cat. */
static int replay_opts(const char *events, const char *catalog, const char *types, const char *nnodes,
                       const char *policy, double deadline, double budget, struct pit_cli_replay *x,
                       struct pit_err *e) {
  int given = catalog != NULL;
  struct pit_replay_opts *o = &x->o;
  memset(o, 0, sizeof *o);
  o->nmin = 1;
  o->ranks_per_node = 1;
  /* what is not given is the run's own: its first cost or time decision's settings (runs since
   * 2026-11-29; before, a replay of a run under --deadline 19 without --deadline weighed no deadline and
   * took none of its decisions) */
  const struct pit_decision *run = NULL;
  for (int i = 0; i < x->log.ndec && !run; i++) {
    const struct pit_decision *d = &x->log.dec[i].d;
    if ((!strcmp(d->policy, "cost") || !strcmp(d->policy, "time")) && (d->set_nmin > 0 || d->set_types[0]))
      run = d;
  }
  x->from_run[0] = '\0';
  const char *types_given = types; /* on the command line (the run's own are checked as its generations are) */
  if (run && !policy)
    policy = run->policy;
  if (run && !nnodes && run->set_nmin > 0) {
    o->nmin = run->set_nmin;
    o->nmax = run->set_nmax;
  }
  if (run && isnan(deadline))
    deadline = run->set_deadline_s;
  if (run && isnan(budget))
    budget = run->set_budget;
  if (run && !types && run->set_types[0])
    types = run->set_types;
  if (run) { /* what the run recorded (an option given overrides it) */
    char dl[32] = "none", bd[32] = "none", mx[16] = "any";
    if (!isnan(run->set_deadline_s))
      snprintf(dl, sizeof dl, "%g s", run->set_deadline_s);
    if (!isnan(run->set_budget))
      snprintf(bd, sizeof bd, "$%g", run->set_budget);
    if (run->set_nmax > 0)
      snprintf(mx, sizeof mx, "%d", run->set_nmax);
    snprintf(x->from_run, sizeof x->from_run, "policy %s, nnodes %d:%s, deadline %s, budget %s, types %s", run->policy,
             run->set_nmin, mx, dl, bd, run->set_types[0] ? run->set_types : "(not recorded)");
  }
  int rc = pit_policy_parse(&o->policy, policy ? policy : "cost", e);
  if (rc == 0 && o->policy.kind != PIT_POLICY_COST && o->policy.kind != PIT_POLICY_TIME)
    rc = pit_err_set(e, PIT_EARG, "--policy %s: a replay weighs cost or time", policy);
  if (rc == 0 && nnodes)
    rc = pit_nnodes_parse(nnodes, &o->nmin, &o->nmax, e);
  o->policy.deadline_s = deadline;
  o->policy.budget = budget;
  /* no --catalog: the run's own, from its node records' rows when every node carries one; else the default */
  if (rc == 0 && !catalog && pit_catalog_from_runlog(&x->cat, &x->log, NULL) == 0) {
    x->have_cat = 1;
    catalog = "the run's node records";
    given = 1;
  }
  if (rc == 0 && !catalog && !(catalog = pit_cli_catalog("local.tsv", e)))
    rc = e->code;
  if (rc == 0 && !x->have_cat && (rc = pit_catalog_load(&x->cat, catalog, e)) == 0)
    x->have_cat = 1;
  x->types[0] = '\0';
  if (rc == 0 && types) {
    snprintf(x->types, sizeof x->types, "%s", types);
  } else if (rc == 0 && x->log.ngens > 0) { /* the first generation's types, each once */
    const struct pit_membership *m = &x->log.gens[0].m;
    for (int i = 0; i < m->n; i++) {
      int seen = 0; /* a type on two markets: once */
      for (int k = 0; k < i && !seen; k++)
        seen = strcmp(m->m[k].itype, m->m[i].itype) == 0;
      if (!seen)
        snprintf(x->types + strlen(x->types), sizeof x->types - strlen(x->types), "%s%s", x->types[0] ? "," : "",
                 m->m[i].itype);
    }
  }
  /* a type the run ran that the catalog lacks (a run whose node records hold no catalog rows: files
   * written before them), so the catalog is asked for */
  for (int g = 0; rc == 0 && !types_given && g < x->log.ngens; g++)
    for (int i = 0; rc == 0 && i < x->log.gens[g].m.n; i++)
      if (!pit_catalog_find(&x->cat, x->log.gens[g].m.m[i].itype))
        rc = pit_err_set(e, PIT_ENOTFOUND, "%s: the run ran '%s', which the catalog '%s'%s lacks: give the run's "
                         "--catalog (the run's records hold its nodes' prices, not its catalog's billing)",
                         events, x->log.gens[g].m.m[i].itype, catalog, given ? "" : " (the default)");
  if (rc == 0)
    rc = pit_policy_types(&x->cat, catalog, x->types, o->types, &o->ntypes, e);
  o->catalog = x->have_cat ? &x->cat : NULL;
  return rc;
}

int pit_cli_replay_load(const char *events, const char *catalog, const char *types, const char *nnodes,
                        const char *policy, double deadline, double budget, int ranks_per_node,
                        struct pit_cli_replay *x, struct pit_err *e) {
  memset(x, 0, sizeof *x);
  pit_runlog_init(&x->log);
  int rc = pit_runlog_load(&x->log, events, e);
  x->have_log = rc == 0;
  if (rc == 0)
    rc = replay_opts(events, catalog, types, nnodes, policy, deadline, budget, x, e);
  x->o.ranks_per_node = ranks_per_node > 0 ? ranks_per_node : 1;
  if (rc == 0)
    rc = pit_replay_log(&x->log, events, &x->o, &x->r, e);
  return rc;
}

void pit_cli_replay_release(struct pit_cli_replay *x) {
  pit_replay_release(&x->r);
  pit_runlog_release(&x->log);
  if (x->have_cat)
    pit_catalog_release(&x->cat);
  memset(x, 0, sizeof *x);
}

/* One line for n consecutive keeps (steps a..b), with the last one's reason. */
static void print_keeps(int n, int64_t a, int64_t b, double t, const char *reason) {
  if (n == 1)
    printf("  %7.1fs  step %6lld  keep: %s\n", t, (long long)a, reason);
  else if (n > 1)
    printf("  %7.1fs  steps %lld-%lld  keep (%d decision points; the last: %s)\n", t, (long long)a, (long long)b, n,
           reason);
}

void pit_cli_print_decisions(const struct pit_runlog *log) {
  int nkeep = 0, ndec = 0;
  int64_t k0 = 0, k1 = 0;
  double kt = 0;
  const char *kreason = "";
  printf("\ndecisions (run seconds, the step each applies at, what and why):\n");
  for (int i = 0; i < log->ndec; i++) {
    const struct pit_runlog_decision *x = &log->dec[i];
    const struct pit_decision *d = &x->d;
    if (!d->kind[0] && !d->reason) /* a record without its detail */
      continue;
    const char *why = d->reason ? d->reason : "(no reason recorded)";
    ndec++;
    if (strcmp(d->kind, "keep") == 0) {
      if (nkeep++ == 0)
        k0 = d->step;
      k1 = d->step;
      kt = x->t;
      kreason = why;
    } else {
      print_keeps(nkeep, k0, k1, kt, kreason);
      nkeep = 0;
      char to[PIT_MEMBERSHIP_TEXT_MAX] = "?";
      if (d->nalts > 0)
        pit_membership_format(&d->alts[0].m, to, sizeof to);
      char head[PIT_MEMBERSHIP_TEXT_MAX + 64];
      snprintf(head, sizeof head, "%s → %s", d->kind, to);
      if (strncmp(why, head, strlen(head)) == 0) /* the reason says what already */
        printf("  %7.1fs  step %6lld  %s\n", x->t, (long long)d->step, why);
      else
        printf("  %7.1fs  step %6lld  %s: %s\n", x->t, (long long)d->step, head, why);
    }
  }
  print_keeps(nkeep, k0, k1, kt, kreason);
  if (ndec == 0)
    printf("  none (the job was never steady long enough for a decision point)\n");
}

void pit_cli_print_fixed(const struct pit_replay *r, double run_cost, double run_time) {
  if (r->steps_run < r->steps) /* stopped early: the whole job's replays would compare more work */
    printf("\nthe run against fixed memberships, each replayed over the %lld of %lld steps this run made (it was\n"
           "stopped), over its own records (memberships it never ran have no records and are not priced):\n",
           (long long)(r->steps_run), (long long)r->steps);
  else
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

/* The replay's fixed memberships as report.html's rows (rows: PIT_POLICY_MEAS_MAX). */
static void html_fixed(const struct pit_replay *r, struct pit_html_fixed_row *rows, struct pit_html_fixed *x) {
  for (int i = 0; i < r->nfixed && i < PIT_POLICY_MEAS_MAX; i++)
    rows[i] = (struct pit_html_fixed_row){r->fixed[i].m, r->fixed[i].cost, r->fixed[i].time_s, r->fixed[i].complete};
  *x = (struct pit_html_fixed){r->cost_live, r->time_live, r->nfixed, r->best_fixed, rows, r->steps_run, r->steps};
}

/* The policy the run's decisions name, when it weighs cost or time ("cost", "time"), else NULL. */
static const char *weighing_policy(const struct pit_runlog *log) {
  for (int i = 0; i < log->ndec; i++)
    if (strcmp(log->dec[i].d.policy, "cost") == 0 || strcmp(log->dec[i].d.policy, "time") == 0)
      return log->dec[i].d.policy;
  return NULL;
}

int pit_cli_report_html(const char *arg, const struct pit_catalog *cat, const struct pit_catalog *fallback,
                        const char *catalog, const char *png, const struct pit_cli_replay *x, const char *out,
                        struct pit_err *e) {
  struct pit_status s;
  if (pit_status_load(&s, arg, cat, fallback, e) < 0)
    return e->code;
  char tmp[4200] = "";
  if (!png) { /* drawn beside out for the while, embedded, removed */
    snprintf(tmp, sizeof tmp, "%s.timeline.png", out);
    struct pit_err pe = {0};
    if (pit_cli_timeline(s.events, tmp, &pe) == 0)
      png = tmp;
    else
      pit_cli_warn("report.html without its timeline: %s", pe.msg);
  }
  /* the run against fixed memberships: the caller's replay, or one made here for a cost or time run */
  struct pit_cli_replay own;
  int have_own = 0;
  const char *policy = x ? NULL : weighing_policy(&s.log);
  if (policy) {
    struct pit_err re = {0};
    have_own = pit_cli_replay_load(s.events, catalog, NULL, NULL, policy, NAN, NAN, 1, &own, &re) == 0;
    if (!have_own) {
      pit_cli_warn("report.html without the comparison with fixed memberships: %s", re.msg);
      pit_cli_replay_release(&own);
    }
    x = have_own ? &own : NULL;
  }
  struct pit_html_fixed_row rows[PIT_POLICY_MEAS_MAX];
  struct pit_html_fixed fx;
  if (x)
    html_fixed(&x->r, rows, &fx);
  int rc = pit_status_html(&s, png, x ? &fx : NULL, out, e);
  if (have_own)
    pit_cli_replay_release(&own);
  if (tmp[0] && png == tmp)
    remove(tmp);
  pit_status_release(&s);
  return rc < 0 ? rc : 0;
}
