/* cmd_simulate.c — `pitstop simulate`: a job on spot and on-demand nodes over
 * a trace of spot availability, pitstop's policy against the baselines
 * (on_demand, greedy, uniform_progress) and the exact optimum, each with its
 * gap to the optimum (docs/simulate.md; library: include/pitstop/sim.h).
 * Invariant: prints only on success (table or one JSON object on stdout) or
 * one error line on stderr; the only file written is --chart's (atomically).
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/control.h"
#include "pitstop/sim.h"

static const struct pit_cli_opt opts[] = {
    {"trace", 1, 'T', "FILE", "a Can't Be Late JSON trace, or CSV time_s,itype,zone,available[,spot_price_h]; "
                              "repeat it for several zones or types"},
    {"study", 1, 'S', "FILE", "the traces of a study, one a line: PATH [ZONE [ITYPE]] (paths relative to FILE)"},
    {"zone", 1, 'z', "Z", "the zone of the --trace of the same rank (default: from the path)"},
    {"usl", 1, 'u', "SIGMA,KAPPA", "throughput of n nodes n/(1+sigma(n-1)+kappa n(n-1)) (default linear)"},
    {"ckpt-gb", 1, 'g', "G", "checkpoint moved on a change of zone, GB (default 10)"},
    {"seed", 1, 'e', "N", "seed of the randomized baseline (ROSS; default 1)"},
    {"job-hours", 1, 'j', "H", "hours of compute the job needs"},
    {"deadline-hours", 1, 'd', "D", "the job must finish within D hours"},
    {"restart-hours", 1, 'r', "R", "hours paid without progress at every start of an instance"},
    {"catalog", 1, 'c', "FILE", "prices of the trace's instance type (or --itype's)"},
    {"itype", 1, 't', "T", "the catalog's type to price (default: the trace's)"},
    {"price-h", 1, 'p', "P", "on-demand price per hour without --catalog (default 1)"},
    {"spot-price-h", 1, 's', "S", "spot price per hour (default 0.3 x on-demand)"},
    {"offset-hours", 1, 'o', "X", "start the job X hours into the trace (default 0)"},
    {"nodes", 1, 'n', "N", "the job is --job-hours on N nodes (default 1)"},
    {"chart", 1, 'C', "FILE", "draw the runs to FILE.png or FILE.svg"},
    {"format", 1, 'f', "F", "table (default) or json"},
    {"replay", 1, 'R', "EVENTS", "drive a `pitstop run` events file again on a simulated clock"},
    {"types", 1, 'y', "T1,T2", "--replay: the types the policy may choose"},
    {"nnodes", 1, 'N', "MIN:MAX", "node counts the policy may choose (default N:N)"},
    {"policy", 1, 'P', "cost|time", "--replay: the policy (default cost)"},
    {"deadline", 1, 'D', "S", "--replay: the run's deadline in seconds"},
    {"budget", 1, 'B', "USD", "--replay: the run's budget"},
};

static const struct pit_cli_cmd cmd = {
    "usage: pitstop simulate --trace FILE --job-hours H --deadline-hours D --restart-hours R\n"
    "                        [--catalog FILE [--itype T]] [--price-h P] [--spot-price-h S]\n"
    "                        [--offset-hours X] [--nodes N] [--chart FILE.png|.svg] [--format table|json]\n"
    "       pitstop simulate (--trace Z1 --trace Z2 ... | --study FILE) [--zone Z ...] --nodes N [--nnodes MIN:MAX]\n"
    "                        --job-hours H --deadline-hours D --restart-hours R [--catalog FILE] [--itype T]\n"
    "                        [--usl SIGMA,KAPPA] [--ckpt-gb G] [--seed N] [--format table|json]\n"
    "       pitstop simulate --replay EVENTS [--catalog FILE] [--types T,...] [--nnodes MIN:MAX]\n"
    "                        [--policy cost|time] [--deadline S] [--budget USD] [--format table|json]\n\n",
    opts, PIT_CLI_NOPTS(opts),
    "\nPrices: --catalog (the trace's type, or --itype), else --price-h and --spot-price-h, else the\n"
    "installed catalog's row for the trace's type (spot 0.3 x on-demand where it has none);\n"
    "the CSV's spot prices (their mean) win over all.\n"
    "Several traces, --nodes > 1, --nnodes or --usl: a fleet over zones × types (docs/simulate.md),\n"
    "with its limit: the exact optimum when small, else a proven lower bound.\n"
    "EVENTS: a `pitstop run` events file; the run is driven again by the same policy on a\n"
    "simulated clock from its own records; give the options the run had (catalog default:\n"
    "the local one; types default: the first generation's).\n"};

/* pos: the value must be > 0 (else >= 0) */
static int parse_num(const char *opt, const char *v, int pos, double *out) {
  double d;
  if (pit_parse_f64(v, &d) || !isfinite(d) || d < 0 || (pos && d == 0))
    return pit_cli_usage("--%s: '%s' is not a number %s 0", opt, v, pos ? ">" : ">=");
  *out = d;
  return 0;
}

static void jnum(cJSON *o, const char *k, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static double gap_to(double cost, double opt) { return isfinite(cost) && opt > 0 ? cost / opt - 1 : NAN; }

static cJSON *result_json(const struct pit_sim_result *r, double opt) {
  cJSON *o = cJSON_CreateObject();
  jnum(o, "cost", r->cost);
  jnum(o, "finish_h", r->finish_h);
  cJSON_AddBoolToObject(o, "deadline_met", r->deadline_met);
  jnum(o, "gap_to_optimum", gap_to(r->cost, opt));
  jnum(o, "spot_h", r->spot_h);
  jnum(o, "on_demand_h", r->od_h);
  cJSON_AddNumberToObject(o, "preemptions", r->preemptions);
  cJSON *d = cJSON_AddArrayToObject(o, "decisions");
  for (int i = 0; i < r->nchanges; i++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "t_h", r->changes[i].t_h);
    cJSON_AddStringToObject(x, "to", pit_spot_mode_name(r->changes[i].to));
    cJSON_AddItemToArray(d, x);
  }
  return o;
}

/* --replay: the run's decisions and cost against the replay's (pit_replay_events). */
static int replay(const char *events, const char *catalog, const char *types, const char *nnodes, const char *policy,
                  double deadline, double budget, int json) {
  struct pit_err e = {0};
  struct pit_replay_opts o;
  struct pit_replay r = {0};
  char buf[1024];
  int rc = pit_cli_replay_opts(events, catalog, types, nnodes, policy, deadline, budget, &o, buf, sizeof buf, &e);
  types = buf;
  if (rc == 0)
    rc = pit_replay_events(events, &o, &r, &e);
  if (rc < 0)
    return pit_cli_fail(&e);
  double ratio = r.cost_live > 0 ? r.cost_sim / r.cost_live : NAN;
  if (json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "events", events);
    cJSON_AddNumberToObject(j, "steps", (double)r.steps);
    cJSON_AddBoolToObject(j, "same_decisions", r.same);
    cJSON_AddBoolToObject(j, "diverged", r.diverged);
    for (int k = 0; k < 2; k++) {
      cJSON *x = cJSON_AddObjectToObject(j, k ? "replay" : "live");
      jnum(x, "cost", k ? r.cost_sim : r.cost_live);
      jnum(x, "time_s", k ? r.time_sim : r.time_live);
      cJSON *d = cJSON_AddArrayToObject(x, "decisions");
      for (int i = 0; i < (k ? r.nsim : r.nlive); i++) {
        const struct pit_replay_decision *q = k ? &r.sim[i] : &r.live[i];
        char f[PIT_MEMBERSHIP_TEXT_MAX], t[PIT_MEMBERSHIP_TEXT_MAX];
        pit_membership_format(&q->from, f, sizeof f);
        pit_membership_format(&q->to, t, sizeof t);
        cJSON *o2 = cJSON_CreateObject();
        cJSON_AddNumberToObject(o2, "step", (double)q->step);
        cJSON_AddStringToObject(o2, "from", f);
        cJSON_AddStringToObject(o2, "to", t);
        cJSON_AddItemToArray(d, o2);
      }
    }
    jnum(j, "cost_ratio", ratio);
    cJSON *fx = cJSON_AddArrayToObject(j, "fixed"); /* each membership the run ran, alone for the whole job */
    for (int i = 0; i < r.nfixed; i++) {
      char m[PIT_MEMBERSHIP_TEXT_MAX];
      pit_membership_format(&r.fixed[i].m, m, sizeof m);
      cJSON *o2 = cJSON_CreateObject();
      cJSON_AddStringToObject(o2, "membership", m);
      jnum(o2, "cost", r.fixed[i].cost);
      jnum(o2, "time_s", r.fixed[i].time_s);
      cJSON_AddBoolToObject(o2, "complete", r.fixed[i].complete);
      cJSON_AddBoolToObject(o2, "best", i == r.best_fixed);
      cJSON_AddItemToArray(fx, o2);
    }
    char *txt = cJSON_PrintUnformatted(j);
    if (!txt || printf("%s\n", txt) < 0)
      rc = pit_cli_error("cannot write to standard output");
    free(txt);
    cJSON_Delete(j);
  } else {
    printf("replay of %s: %lld steps, policy %s, types %s\n", events, (long long)r.steps,
           pit_policy_name(&o.policy), types);
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < (k ? r.nsim : r.nlive); i++) {
        const struct pit_replay_decision *q = k ? &r.sim[i] : &r.live[i];
        char f[PIT_MEMBERSHIP_TEXT_MAX], t[PIT_MEMBERSHIP_TEXT_MAX];
        pit_membership_format(&q->from, f, sizeof f);
        pit_membership_format(&q->to, t, sizeof t);
        printf("%-7s step %6lld  %s -> %s\n", k ? "replay" : "live", (long long)q->step, f, t);
      }
    printf("same decisions at the same steps: %s%s\n", r.same ? "yes" : "NO",
           r.diverged ? " (the replay chose a membership the run never ran: stopped there)" : "");
    printf("cost: live $%.6f (node records), replay $%.6f (simulated clock), ratio %.4f; time %.1f s vs %.1f s\n",
           r.cost_live, r.cost_sim, ratio, r.time_live, r.time_sim);
    pit_cli_print_fixed(&r, r.cost_live, r.time_live);
    if (pit_cli_print_decisions(events, &e) < 0)
      rc = pit_cli_fail(&e);
  }
  pit_replay_release(&r);
  return rc;
}

/* The catalog used when none is given: aws.tsv found the one way every command finds
 * its default catalog (pit_catalog_default_path); NULL when none is readable. */
static const char *default_catalog(void) {
  struct pit_err e = {0};
  return pit_cli_catalog("aws.tsv", &e);
}

enum { MAX_TRACES = 64 };

struct study_in {
  int n;
  char path[MAX_TRACES][1024], zone[MAX_TRACES][PIT_NAME_MAX], itype[MAX_TRACES][PIT_NAME_MAX];
};

/* a zone from a Can't Be Late path: the file name up to its first '_' ("us-west-2a_v100_1.json") */
static void zone_of_path(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t l = strcspn(b, "_.");
  snprintf(out, n, "%.*s", (int)l, b);
}

/* --study FILE: one trace a line, PATH [ZONE [ITYPE]], '#' comments; paths relative to FILE */
static int read_study(const char *file, struct study_in *in) {
  FILE *f = fopen(file, "r");
  if (!f)
    return pit_cli_error("cannot open study '%s'", file);
  char line[2048], dir[1024];
  snprintf(dir, sizeof dir, "%s", file);
  char *sl = strrchr(dir, '/');
  if (sl)
    sl[1] = 0;
  else
    dir[0] = 0;
  int ln = 0, rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    ln++;
    char *tok[4], *save = NULL;
    int nt = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < 4; t = strtok_r(NULL, " \t\r\n", &save))
      tok[nt++] = t;
    if (nt == 0 || tok[0][0] == '#')
      continue;
    if (nt > 3) {
      rc = pit_cli_error("study '%s':%d: expected PATH [ZONE [ITYPE]]", file, ln);
      break;
    }
    if (in->n >= MAX_TRACES) {
      rc = pit_cli_error("study '%s':%d: more than %d traces", file, ln, MAX_TRACES);
      break;
    }
    int k = in->n++;
    snprintf(in->path[k], sizeof in->path[k], "%s%s", tok[0][0] == '/' ? "" : dir, tok[0]);
    if (access(in->path[k], R_OK) != 0) {
      rc = pit_cli_error("study '%s':%d: trace '%s' is missing (cannot read it)", file, ln, in->path[k]);
      break;
    }
    snprintf(in->zone[k], sizeof in->zone[k], "%s", nt > 1 ? tok[1] : "");
    snprintf(in->itype[k], sizeof in->itype[k], "%s", nt > 2 ? tok[2] : "");
  }
  fclose(f);
  if (!rc && in->n == 0)
    rc = pit_cli_error("study '%s': no trace", file);
  return rc;
}

static cJSON *fleet_json(const struct pit_fleet_result *r, double lim) {
  cJSON *o = cJSON_CreateObject();
  jnum(o, "cost", r->cost);
  jnum(o, "finish_h", r->finish_h);
  cJSON_AddBoolToObject(o, "deadline_met", r->deadline_met);
  jnum(o, "gap_to_limit", gap_to(r->cost, lim));
  jnum(o, "spot_node_h", r->spot_h);
  jnum(o, "on_demand_node_h", r->od_h);
  cJSON_AddNumberToObject(o, "nodes_reclaimed", r->reclaimed);
  cJSON_AddNumberToObject(o, "moves", r->moves);
  jnum(o, "egress_usd", r->egress_usd);
  cJSON_AddNumberToObject(o, "changes", r->nchanges);
  return o;
}

struct fleet_opts {
  double job, deadline, restart, price, spot, ckpt_gb, sigma, kappa;
  int nodes, nmin, nmax, json;
  uint64_t seed;
  const char *catalog, *itype;
};

/* Several traces (zones × types), or many nodes: the fleet model, its policies and its limit. */
static int fleet(const struct study_in *in, const struct fleet_opts *fo) {
  struct pit_err e = {0};
  struct pit_catalog cat = {0};
  struct pit_trace tr[MAX_TRACES];
  struct pit_sim_pool pool[MAX_TRACES];
  int nt = 0, rc = 0;
  memset(pool, 0, sizeof pool);
  const char *catpath = fo->catalog ? fo->catalog : default_catalog();
  if (catpath && pit_catalog_load(&cat, catpath, &e))
    return pit_cli_fail(&e);
  /* every file's traces (a CSV may hold a region: one trace per zone) */
  int from[MAX_TRACES], nfrom[MAX_TRACES];
  for (int i = 0; i < in->n && !rc; i++) {
    struct pit_trace *arr;
    int m;
    if (pit_trace_load_all(in->path[i], &arr, &m, &e)) {
      rc = pit_cli_fail(&e);
      break;
    }
    for (int j = 0; j < m; j++) {
      if (nt < MAX_TRACES && !rc) {
        from[nt] = i, nfrom[nt] = m;
        tr[nt++] = arr[j];
      } else {
        if (!rc)
          rc = pit_cli_error("trace '%s': more than %d zones in the study", in->path[i], MAX_TRACES);
        pit_trace_release(&arr[j]);
      }
    }
    free(arr);
  }
  for (int k = 0; k < nt && !rc; k++) {
    int i = from[k];
    struct pit_sim_pool *p = &pool[k];
    p->trace = &tr[k];
    if (*in->zone[i] && nfrom[k] == 1)
      snprintf(p->zone, sizeof p->zone, "%s", in->zone[i]);
    else if (*tr[k].zone)
      snprintf(p->zone, sizeof p->zone, "%s", tr[k].zone);
    else
      zone_of_path(in->path[i], p->zone, sizeof p->zone);
    const char *want = *in->itype[i] ? in->itype[i] : fo->itype ? fo->itype : tr[k].itype;
    const struct pit_itype *ty = catpath && *want ? pit_catalog_find(&cat, want) : NULL;
    p->price_h = fo->price;
    p->spot_price_h = fo->spot;
    if (ty) {
      p->itype = ty;
      if (isnan(p->price_h))
        p->price_h = ty->price_h;
      if (isnan(p->spot_price_h))
        p->spot_price_h = ty->spot_price_h;
      p->egress_usd_gb = isfinite(ty->egress_usd_gb) ? ty->egress_usd_gb : 0;
      p->net_gbps = isfinite(ty->net_gbps) ? ty->net_gbps : 0;
    } else if (fo->catalog && *want) {
      rc = pit_cli_error("trace '%s' (zone %s): instance type '%s' is not in catalog '%s'", in->path[i], p->zone,
                         want, fo->catalog);
      break;
    }
    if (tr[k].spot_price_h) { /* the CSV's own spot prices, their mean */
      double sum = 0;
      int cnt = 0;
      for (int j = 0; j < tr[k].n; j++)
        if (isfinite(tr[k].spot_price_h[j]))
          sum += tr[k].spot_price_h[j], cnt++;
      if (cnt)
        p->spot_price_h = sum / cnt;
    }
    if (isnan(p->price_h) || isnan(p->spot_price_h)) {
      rc = pit_cli_error("trace '%s' (zone %s): no %s price for type '%s'%s%s%s: give --price-h/--spot-price-h",
                         in->path[i], p->zone, isnan(p->price_h) ? "on-demand" : "spot", *want ? want : "?",
                         catpath ? " in catalog '" : "", catpath ? catpath : "", catpath ? "'" : "");
      break;
    }
  }
  struct pit_sim_study st = {.pools = pool, .npools = nt, .job_h = fo->job, .deadline_h = fo->deadline,
                             .restart_h = fo->restart, .nodes = fo->nodes, .nmin = fo->nmin, .nmax = fo->nmax,
                             .sigma = fo->sigma, .kappa = fo->kappa, .ckpt_gb = fo->ckpt_gb, .seed = fo->seed};
  if (!rc && pit_fleet_check(&st, &e))
    rc = pit_cli_fail(&e);
  enum { NP = 6 };
  static const enum pit_fleet_policy pols[NP] = {PIT_FLEET_PITSTOP, PIT_FLEET_ON_DEMAND, PIT_FLEET_GREEDY,
                                                 PIT_FLEET_UNIFORM, PIT_FLEET_SKYNOMAD, PIT_FLEET_ROSS};
  struct pit_fleet_result res[NP + 1];
  for (int i = 0; i <= NP; i++)
    pit_fleet_result_init(&res[i]);
  int fpool = -1, fspot = 0;
  for (int i = 0; i < NP && !rc; i++)
    if (pit_fleet_run(&st, pols[i], -1, 0, 0, &res[i], &e))
      rc = pit_cli_fail(&e);
  if (!rc && pit_fleet_best_fixed(&st, &res[NP], &fpool, &fspot, &e))
    rc = pit_cli_fail(&e);
  double lim = NAN;
  const char *kind = "bound";
  if (!rc && pit_fleet_limit(&st, 4e6, &lim, &kind, &e))
    rc = pit_cli_fail(&e);
  if (!rc) {
    const char *names[NP + 1] = {"pitstop", "on_demand", "greedy", "uniform_progress", "skynomad", "ross",
                                 "best_fixed"};
    if (fo->json) {
      cJSON *j = cJSON_CreateObject();
      cJSON *ta = cJSON_AddArrayToObject(j, "traces");
      for (int i = 0; i < nt; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "path", tr[i].path);
        cJSON_AddStringToObject(x, "zone", pool[i].zone);
        cJSON_AddStringToObject(x, "itype", pool[i].itype ? pool[i].itype->name : tr[i].itype);
        jnum(x, "price_h", pool[i].price_h);
        jnum(x, "spot_price_h", pool[i].spot_price_h);
        cJSON_AddItemToArray(ta, x);
      }
      cJSON_AddNumberToObject(j, "tick_s", tr[0].gap_s);
      cJSON_AddNumberToObject(j, "job_h", fo->job);
      cJSON_AddNumberToObject(j, "deadline_h", fo->deadline);
      cJSON_AddNumberToObject(j, "restart_h", fo->restart);
      cJSON_AddNumberToObject(j, "nodes", fo->nodes);
      cJSON_AddNumberToObject(j, "nnodes_min", fo->nmin);
      cJSON_AddNumberToObject(j, "nnodes_max", fo->nmax);
      cJSON_AddNumberToObject(j, "usl_sigma", fo->sigma);
      cJSON_AddNumberToObject(j, "usl_kappa", fo->kappa);
      cJSON_AddNumberToObject(j, "ckpt_gb", fo->ckpt_gb);
      cJSON *l = cJSON_AddObjectToObject(j, "limit");
      jnum(l, "cost", lim);
      cJSON_AddStringToObject(l, "kind", kind);
      cJSON_AddItemToObject(j, "policy", fleet_json(&res[0], lim));
      cJSON *b = cJSON_AddObjectToObject(j, "baselines");
      for (int i = 1; i <= NP; i++)
        cJSON_AddItemToObject(b, names[i], fleet_json(&res[i], lim));
      cJSON *bf = cJSON_GetObjectItem(b, "best_fixed");
      cJSON_AddStringToObject(bf, "zone", fpool >= 0 ? pool[fpool].zone : "");
      cJSON_AddNumberToObject(bf, "spot_nodes", fspot);
      char *txt = cJSON_PrintUnformatted(j);
      if (!txt || printf("%s\n", txt) < 0)
        rc = pit_cli_error("cannot write to standard output");
      free(txt);
      cJSON_Delete(j);
    } else {
      printf("%d trace(s), %g s ticks; job %g h on %d nodes (%d:%d, USL %g,%g), deadline %g h, restart %g h, "
             "checkpoint %g GB\n",
             nt, tr[0].gap_s, fo->job, fo->nodes, fo->nmin, fo->nmax, fo->sigma, fo->kappa, fo->deadline,
             fo->restart, fo->ckpt_gb);
      for (int i = 0; i < nt; i++)
        printf("  %-14s %-14s on-demand %g $/h, spot %g $/h  (%s)\n", pool[i].zone,
               pool[i].itype ? pool[i].itype->name : tr[i].itype, pool[i].price_h, pool[i].spot_price_h,
               tr[i].path);
      printf("limit: %.4f (%s)\n", lim, kind);
      printf("%-17s %10s %9s %7s %11s %11s %8s %6s %12s\n", "policy", "cost", "finish_h", "met", "spot_nh", "od_nh",
             "reclaims", "moves", "gap_to_limit");
      for (int i = 0; i <= NP; i++)
        printf("%-17s %10.4f %9.2f %7s %11.2f %11.2f %8d %6d %11.1f%%\n", names[i], res[i].cost, res[i].finish_h,
               res[i].deadline_met ? "yes" : "MISSED", res[i].spot_h, res[i].od_h, res[i].reclaimed, res[i].moves,
               100 * gap_to(res[i].cost, lim));
    }
  }
  for (int i = 0; i <= NP; i++)
    pit_fleet_result_release(&res[i]);
  for (int i = 0; i < nt; i++)
    pit_trace_release(&tr[i]);
  pit_catalog_release(&cat);
  return rc;
}

int pit_cmd_simulate(int argc, char **argv) {
  const char *trace = NULL, *catalog = NULL, *itype = NULL, *chart = NULL, *study = NULL, *usl = NULL;
  const char *events = NULL, *types = NULL, *nnodes = NULL, *policy = NULL;
  double job = NAN, deadline = NAN, restart = NAN, price = NAN, spot = NAN, offset = 0, nodes = 1;
  double run_deadline = NAN, budget = NAN, ckpt_gb = 10, seed = 1;
  int json = 0, rc = 0, o, nzones = 0;
  static struct study_in in;
  memset(&in, 0, sizeof in);
  struct pit_cli_getopt go;
  pit_cli_getopt_init(&go, argc, argv, &cmd);
  while ((o = pit_cli_getopt_next(&go)) != -1 && !rc) {
    switch (o) {
    case 'T':
      if (in.n >= MAX_TRACES)
        return pit_cli_usage("--trace: at most %d traces", MAX_TRACES);
      trace = optarg;
      snprintf(in.path[in.n++], sizeof in.path[0], "%s", optarg);
      break;
    case 'S': study = optarg; break;
    case 'z':
      if (nzones >= MAX_TRACES)
        return pit_cli_usage("--zone: at most %d", MAX_TRACES);
      snprintf(in.zone[nzones++], sizeof in.zone[0], "%s", optarg);
      break;
    case 'u': usl = optarg; break;
    case 'g': rc = parse_num(go.opt->name, optarg, 0, &ckpt_gb); break;
    case 'e': rc = parse_num(go.opt->name, optarg, 0, &seed); break;
    case 'j': rc = parse_num(go.opt->name, optarg, 1, &job); break;
    case 'd': rc = parse_num(go.opt->name, optarg, 1, &deadline); break;
    case 'r': rc = parse_num(go.opt->name, optarg, 0, &restart); break;
    case 'c': catalog = optarg; break;
    case 't': itype = optarg; break;
    case 'p': rc = parse_num(go.opt->name, optarg, 1, &price); break;
    case 's': rc = parse_num(go.opt->name, optarg, 0, &spot); break;
    case 'o': rc = parse_num(go.opt->name, optarg, 0, &offset); break;
    case 'n': rc = parse_num(go.opt->name, optarg, 1, &nodes); break;
    case 'C': chart = optarg; break;
    case 'R': events = optarg; break;
    case 'y': types = optarg; break;
    case 'N': nnodes = optarg; break;
    case 'P': policy = optarg; break;
    case 'D': rc = parse_num(go.opt->name, optarg, 1, &run_deadline); break;
    case 'B': rc = parse_num(go.opt->name, optarg, 1, &budget); break;
    case 'f':
      if (strcmp(optarg, "json") == 0)
        json = 1;
      else if (strcmp(optarg, "table") == 0)
        json = 0;
      else
        rc = pit_cli_usage("--format: '%s' is not table or json", optarg);
      break;
    case 'h': pit_cli_help(stdout, &cmd); return 0;
    default: rc = pit_cli_bad_option("simulate", argv);
    }
  }
  if (rc)
    return rc;
  if (optind < argc)
    return pit_cli_usage("unexpected argument '%s' (pitstop simulate --help)", argv[optind]);
  if (events) {
    if (trace || study)
      return pit_cli_usage("--replay and --trace: one or the other");
    return replay(events, catalog, types, nnodes, policy, run_deadline, budget, json);
  }
  if (types || policy || !isnan(run_deadline) || !isnan(budget))
    return pit_cli_usage("--types, --policy, --deadline and --budget go with --replay");
  if (study && trace)
    return pit_cli_usage("--study and --trace: one or the other");
  if ((!trace && !study) || isnan(job) || isnan(deadline) || isnan(restart))
    return pit_cli_usage("--trace (or --study), --job-hours, --deadline-hours and --restart-hours are required");
  if (nodes != floor(nodes) || nodes > 1e6)
    return pit_cli_usage("--nodes: a whole number of nodes, at most 10^6");
  if (nzones > in.n && !study)
    return pit_cli_usage("--zone: %d zones for %d traces", nzones, in.n);
  int region = 0; /* one CSV holding several zones: a study by itself */
  if (!study && in.n == 1 && !nnodes && !usl && nodes == 1) {
    struct pit_trace *arr;
    int m;
    struct pit_err pe = {0};
    if (pit_trace_load_all(in.path[0], &arr, &m, &pe))
      return pit_cli_fail(&pe);
    region = m > 1;
    for (int i = 0; i < m; i++)
      pit_trace_release(&arr[i]);
    free(arr);
  }
  if (study || in.n > 1 || nodes > 1 || nnodes || usl || region) {
    struct fleet_opts fo = {.job = job, .deadline = deadline, .restart = restart, .price = price, .spot = spot,
                            .ckpt_gb = ckpt_gb, .nodes = (int)nodes, .nmin = (int)nodes, .nmax = (int)nodes,
                            .json = json, .seed = (uint64_t)seed, .catalog = catalog, .itype = itype};
    if (nnodes) {
      char *end;
      long a = strtol(nnodes, &end, 10), b = *end == ':' ? strtol(end + 1, &end, 10) : -1;
      if (*end || a < 1 || b < a || b > 1000000 || a > nodes || b < nodes)
        return pit_cli_usage("--nnodes: '%s' is not MIN:MAX with 1 <= MIN <= --nodes <= MAX", nnodes);
      fo.nmin = (int)a, fo.nmax = (int)b;
    }
    if (usl) {
      char *end;
      fo.sigma = strtod(usl, &end);
      fo.kappa = *end == ',' ? strtod(end + 1, &end) : NAN;
      if (*end || !(fo.sigma >= 0) || !(fo.kappa >= 0) || !isfinite(fo.sigma) || !isfinite(fo.kappa))
        return pit_cli_usage("--usl: '%s' is not SIGMA,KAPPA (both >= 0)", usl);
    }
    if (chart)
      pit_cli_note("--chart: drawn for one trace and one node only (bench/spot-scale draws fleets)");
    if (offset > 0)
      pit_cli_note("--offset-hours: not applied to a fleet (it starts at tick 0 of every trace)");
    if (study) {
      if (nzones)
        return pit_cli_usage("--zone goes with --trace (a study file names its zones)");
      if ((rc = read_study(study, &in)))
        return rc;
    }
    return fleet(&in, &fo);
  }
  if (itype && !catalog)
    return pit_cli_usage("--itype needs --catalog");

  struct pit_err e = {0};
  struct pit_trace tr;
  struct pit_catalog cat = {0};
  if (pit_trace_load(&tr, trace, &e))
    return pit_cli_fail(&e);
  const char *src = "--price-h/--spot-price-h";
  int installed = 0;
  if (!catalog && isnan(price) && isnan(spot) && *tr.itype && (catalog = default_catalog())) {
    struct pit_catalog probe = {0};
    struct pit_err pe = {0};
    installed = 1; /* the installed catalog's row for the trace's type, if it has one */
    if (pit_catalog_load(&probe, catalog, &pe) || !pit_catalog_find(&probe, tr.itype))
      catalog = NULL;
    pit_catalog_release(&probe);
  }
  if (catalog) {
    if (pit_catalog_load(&cat, catalog, &e)) {
      pit_trace_release(&tr);
      return pit_cli_fail(&e);
    }
    const char *want = itype ? itype : tr.itype;
    const struct pit_itype *ty = *want ? pit_catalog_find(&cat, want) : NULL;
    if (!ty) {
      if (*want)
        rc = pit_cli_error("trace '%s': instance type '%s' is not in catalog '%s'", trace, want, catalog);
      else
        rc = pit_cli_error("trace '%s' names no instance type: give --itype", trace);
    } else {
      if (isnan(price))
        price = ty->price_h;
      if (isnan(spot))
        spot = ty->spot_price_h;
      src = installed ? "installed catalog" : "catalog";
      if (installed && isnan(spot))
        spot = 0.3 * price, src = "installed catalog (on-demand; spot 0.3 x on-demand: the catalog has none)";
    }
  }
  if (!rc && tr.spot_price_h) { /* the CSV's own spot prices, their mean */
    double s = 0;
    int k = 0;
    for (int i = 0; i < tr.n; i++)
      if (isfinite(tr.spot_price_h[i]))
        s += tr.spot_price_h[i], k++;
    if (k) {
      spot = s / k;
      src = "trace (mean spot price)";
    }
  }
  if (!rc && isnan(price))
    price = 1, src = "default (on-demand 1, spot 0.3)";
  if (!rc && isnan(spot)) {
    if (catalog)
      rc = pit_cli_error("catalog '%s' has no spot price for '%s': give --spot-price-h", catalog,
                         itype ? itype : tr.itype);
    spot = 0.3 * price;
  }
  if (rc) {
    pit_catalog_release(&cat);
    pit_trace_release(&tr);
    return rc;
  }
  struct pit_sim_case c = {.trace = &tr, .job_h = job, .deadline_h = deadline, .restart_h = restart,
                           .price_h = price, .spot_price_h = spot, .nodes = (int)nodes};
  c.offset = (int)fmod(floor(offset * 3600 / tr.gap_s + 1e-9), tr.n);
  enum { NB = 4 };
  static const enum pit_spot_policy base[NB - 1] = {PIT_SPOT_ON_DEMAND, PIT_SPOT_GREEDY, PIT_SPOT_UNIFORM};
  struct pit_sim_result pol, bl[NB];
  pit_sim_result_init(&pol);
  for (int i = 0; i < NB; i++)
    pit_sim_result_init(&bl[i]);
  int keep = chart != NULL, multi = c.nodes > 1;
  size_t bytes = 0;
  if (multi && chart)
    pit_cli_note("--chart: not drawn for --nodes > 1");
  /* with several nodes the optimum (a single-node DP) is not computed: its cost is null */
  rc = multi ? pit_sim_multi(&c, PIT_SPOT_PITSTOP, &pol, &bytes, &e) : pit_sim_run(&c, PIT_SPOT_PITSTOP, keep, &pol, &e);
  for (int i = 0; i < NB - 1 && !rc; i++)
    rc = multi ? pit_sim_multi(&c, base[i], &bl[i], NULL, &e) : pit_sim_run(&c, base[i], keep, &bl[i], &e);
  if (!rc && !multi)
    rc = pit_sim_optimum(&c, keep, &bl[NB - 1], &e);
  if (multi) {
    bl[NB - 1].cost = bl[NB - 1].finish_h = NAN;
    pit_cli_note("%d nodes: the optimum is not computed; the policy's simulation held %zu bytes", c.nodes, bytes);
  }
  if (rc) {
    rc = pit_cli_fail(&e);
    goto done;
  }
  struct pit_sim_grid g;
  pit_sim_grid(&c, &g, &e);
  double opt = bl[NB - 1].cost;
  const char *names[NB + 1] = {"pitstop", "on_demand", "greedy", "uniform_progress", "optimum"};
  if (json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "trace", trace);
    cJSON_AddStringToObject(j, "itype", tr.itype);
    cJSON_AddNumberToObject(j, "tick_s", tr.gap_s);
    cJSON_AddNumberToObject(j, "job_h", job);
    cJSON_AddNumberToObject(j, "deadline_h", deadline);
    cJSON_AddNumberToObject(j, "restart_h", restart);
    cJSON_AddNumberToObject(j, "restart_ticks", (double)g.restart);
    cJSON_AddNumberToObject(j, "offset_ticks", c.offset);
    cJSON_AddNumberToObject(j, "nodes", c.nodes);
    cJSON_AddNumberToObject(j, "price_h", price);
    cJSON_AddNumberToObject(j, "spot_price_h", spot);
    cJSON_AddStringToObject(j, "prices_from", src);
    cJSON_AddItemToObject(j, "policy", result_json(&pol, opt));
    cJSON *b = cJSON_AddObjectToObject(j, "baselines");
    for (int i = 0; i < NB - multi; i++)
      cJSON_AddItemToObject(b, names[i + 1], result_json(&bl[i], opt));
    cJSON *lim = cJSON_AddObjectToObject(j, "limit"); /* one node: the DP optimum is exact */
    jnum(lim, "cost", opt);
    cJSON_AddStringToObject(lim, "kind", multi ? "none" : "exact");
    char *s = cJSON_PrintUnformatted(j);
    if (!s || printf("%s\n", s) < 0)
      rc = pit_cli_error("cannot write to standard output");
    free(s);
    cJSON_Delete(j);
  } else {
    printf("trace %s (%s, %g s ticks), job %g h, deadline %g h, restart %g h; on-demand %g $/h, spot %g $/h (%s)\n",
           trace, *tr.itype ? tr.itype : "type unknown", tr.gap_s, job, deadline, restart, price, spot, src);
    printf("%-17s %10s %9s %8s %9s %9s %7s %10s\n", "policy", "cost", "finish_h", "met", "spot_h", "od_h",
           "reclaims", "gap_to_opt");
    for (int i = 0; i <= NB - multi; i++) {
      const struct pit_sim_result *r = i == 0 ? &pol : &bl[i - 1];
      printf("%-17s %10.4f %9.2f %8s %9.2f %9.2f %7d %9.1f%%\n", names[i], r->cost, r->finish_h,
             r->deadline_met ? "yes" : "MISSED", r->spot_h, r->od_h, r->preemptions, 100 * gap_to(r->cost, opt));
    }
  }
  if (!rc && chart && !multi) {
    struct pit_sim_result res[NB + 1];
    res[0] = pol;
    for (int i = 0; i < NB; i++)
      res[i + 1] = bl[i];
    if (pit_sim_chart(&c, res, names, NB + 1, chart, &e))
      rc = pit_cli_fail(&e);
    else
      pit_cli_note("chart written to '%s'", chart);
  }
done:
  pit_sim_result_release(&pol);
  for (int i = 0; i < NB; i++)
    pit_sim_result_release(&bl[i]);
  pit_catalog_release(&cat);
  pit_trace_release(&tr);
  return rc;
}
