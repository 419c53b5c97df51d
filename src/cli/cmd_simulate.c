/* cmd_simulate.c — `pitstop simulate`: a job on spot and on-demand nodes over
 * a trace of spot availability, pitstop's policy against the baselines
 * (on_demand, greedy, uniform_progress) and the exact optimum, each with its
 * gap to the optimum (docs/simulate.md; library: include/pitstop/sim.h).
 * Invariant: options + library calls (src/sim/study.c sets a study up and runs
 * it, src/sim/sim_fmt.c and src/policy/replay_fmt.c print it); prints only on
 * success (table or one JSON object on stdout) or one error line on stderr;
 * the only file written is --chart's (atomically).
 */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    {"count-scale", 1, 'K', "K|auto", "read each trace's count c as c x K spot nodes (auto: K = ceil(max nodes / "
                                      "the trace's largest count)); an assumption, default 1"},
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
    "                        [--usl SIGMA,KAPPA] [--count-scale K|auto] [--ckpt-gb G] [--seed N]\n"
    "                        [--format table|json]\n"
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

/* --replay: the run's decisions and cost against the replay's (pit_cli_replay_load);
 * a run across zones: its zone decisions decided again from their inputs first
 * (pit_replay_zones), then the same replay, which follows its moves and markets;
 * a run with the spot market layer: its spot decisions decided again from their
 * inputs (pit_replay_spot), those recorded without inputs followed. */
static int replay(const char *events, const char *catalog, const char *types, const char *nnodes, const char *policy,
                  double deadline, double budget, int json) {
  struct pit_err e = {0};
  int zn = 0, zsame = 0;
  char first[512];
  if (pit_replay_zones(events, &zn, &zsame, first, sizeof first, &e) < 0)
    return pit_cli_fail(&e);
  if (zn > 0 && !json)
    printf("%s: %d zone decisions decided again by the zone policy from their inputs: %d the same%s%s\n", events, zn,
           zsame, first[0] ? "; the first that differs: " : "", first);
  struct pit_cli_replay x;
  int rc = pit_cli_replay_load(events, catalog, types, nnodes, policy, deadline, budget, 1, &x, &e);
  if (rc < 0) {
    pit_cli_replay_release(&x);
    return pit_cli_fail(&e);
  }
  x.r.zone_decisions = zn;
  x.r.zone_same = zsame;
  struct pit_spot_replay sp; /* the spot market layer's decisions decided again from their inputs */
  if (pit_replay_spot(&x.log, events, &sp, &e) < 0) {
    pit_cli_replay_release(&x);
    return pit_cli_fail(&e);
  }
  x.r.spot = &sp;
  if (json) {
    if (pit_replay_write_json(stdout, events, &x.r, &e))
      rc = pit_cli_fail(&e);
  } else {
    pit_replay_write_head(stdout, events, pit_policy_name(&x.o.policy), x.types, &x.r);
    if (x.from_run[0])
      printf("the run's own settings (its decision records; an option given overrides one): %s\n", x.from_run);
    pit_cli_print_fixed(&x.r, x.r.cost_live, x.r.time_live);
    pit_cli_print_decisions(&x.log);
  }
  pit_cli_replay_release(&x);
  return rc;
}

/* The catalog used when none is given: aws.tsv found the one way every command finds
 * its default catalog (pit_catalog_default_path); NULL when none is readable. */
static const char *default_catalog(void) {
  struct pit_err e = {0};
  return pit_cli_catalog("aws.tsv", &e);
}

/* pitstop simulate's options, as given and parsed */
struct sim_args {
  const char *trace, *catalog, *itype, *chart, *study, *usl, *events, *types, *nnodes, *policy, *count_scale;
  double job, deadline, restart, price, spot, offset, nodes, run_deadline, budget, ckpt_gb, seed;
  int json, nzones;
};

static const char *const fleet_names[PIT_FLEET_NCOMPARE] = {"pitstop", "on_demand", "greedy", "uniform_progress",
                                                            "skynomad", "ross", "best_fixed"};

/* --count-scale: every trace's counts × K (auto: enough for the job's most nodes at the
 * trace's largest count), said in the output; without it, a note when no trace ever gives
 * as many spot nodes as the job may hold (a 1-node trace read for 8 nodes gives spot to 1). */
static int count_scale(const struct sim_args *a, int nmax, struct pit_trace *tr, struct pit_sim_pool *pool, int nt) {
  struct pit_err e = {0};
  long k = 0;
  if (a->count_scale && strcmp(a->count_scale, "auto") != 0) {
    char *end;
    k = strtol(a->count_scale, &end, 10);
    if (*end || end == a->count_scale || k < 1 || k > 1000000)
      return pit_cli_usage("--count-scale: '%s' is not auto or a whole number >= 1", a->count_scale);
  }
  int most = 0;
  for (int i = 0; i < nt; i++) {
    int m = pit_trace_max(&tr[i]), ki = (int)k;
    if (a->count_scale && !k)
      ki = m > 0 ? (nmax + m - 1) / m : 1;
    if (a->count_scale && pit_trace_scale(&tr[i], ki, 1, &e))
      return pit_cli_fail(&e);
    pool[i].count_scale = a->count_scale ? ki : 1;
    m = pit_trace_max(&tr[i]);
    most = m > most ? m : most;
  }
  if (!a->count_scale && most < nmax)
    pit_cli_note("the traces give at most %d spot node%s at a time and the job may hold %d: spot covers %d of them at "
                 "most (hint: --count-scale auto reads each count as enough nodes, an assumption)",
                 most, most == 1 ? "" : "s", nmax, most);
  return 0;
}

/* Several traces (zones × types), or many nodes: the fleet model, its policies and its limit. */
static int fleet(const struct pit_study_in *in, const struct pit_sim_study *study, const struct sim_args *a) {
  struct pit_err e = {0};
  struct pit_catalog cat = {0};
  struct pit_trace tr[PIT_STUDY_MAX_TRACES];
  struct pit_sim_pool pool[PIT_STUDY_MAX_TRACES];
  int nt = 0, rc = 0;
  const char *catpath = a->catalog ? a->catalog : default_catalog();
  if (catpath && pit_catalog_load(&cat, catpath, &e))
    return pit_cli_fail(&e);
  struct pit_fleet_prices fp = {&cat, catpath, a->catalog, a->itype, a->price, a->spot};
  if (pit_fleet_pools(in, &fp, tr, pool, &nt, &e))
    rc = pit_cli_fail(&e);
  if (!rc)
    rc = count_scale(a, study->nmax, tr, pool, nt);
  struct pit_sim_study st = *study;
  st.pools = pool;
  st.npools = nt;
  struct pit_fleet_result res[PIT_FLEET_NCOMPARE];
  for (int i = 0; i < PIT_FLEET_NCOMPARE; i++)
    pit_fleet_result_init(&res[i]);
  struct pit_fleet_report r = {.names = fleet_names};
  if (!rc && pit_fleet_compare(&st, &r, res, &e))
    rc = pit_cli_fail(&e);
  if (!rc && pit_fleet_report_write(stdout, &r, a->json, &e))
    rc = pit_cli_fail(&e);
  if (!rc && a->chart) { /* pitstop's nodes over time (by market, the zone held), its work and skynomad's */
    static const enum pit_fleet_policy cp[2] = {PIT_FLEET_PITSTOP, PIT_FLEET_SKYNOMAD};
    static const char *const cn[2] = {"pitstop", "skynomad"};
    struct pit_fleet_result kept[2];
    for (int i = 0; i < 2; i++)
      pit_fleet_result_init(&kept[i]);
    for (int i = 0; i < 2 && !rc; i++)
      if (pit_fleet_run(&st, cp[i], -1, 0, 1, &kept[i], &e))
        rc = pit_cli_fail(&e);
    if (!rc && pit_fleet_chart(&st, kept, cn, 2, a->chart, &e))
      rc = pit_cli_fail(&e);
    else if (!rc)
      pit_cli_note("chart written to '%s'", a->chart);
    for (int i = 0; i < 2; i++)
      pit_fleet_result_release(&kept[i]);
  }
  for (int i = 0; i < PIT_FLEET_NCOMPARE; i++)
    pit_fleet_result_release(&res[i]);
  for (int i = 0; i < nt; i++)
    pit_trace_release(&tr[i]);
  pit_catalog_release(&cat);
  return rc;
}

/* The fleet's options checked into st (pools aside); the study file read into in. */
static int fleet_opts(const struct sim_args *a, struct pit_study_in *in, struct pit_sim_study *st) {
  *st = (struct pit_sim_study){.job_h = a->job, .deadline_h = a->deadline, .restart_h = a->restart,
                               .nodes = (int)a->nodes, .nmin = (int)a->nodes, .nmax = (int)a->nodes,
                               .ckpt_gb = a->ckpt_gb, .seed = (uint64_t)a->seed};
  if (a->nnodes) {
    char *end;
    long lo = strtol(a->nnodes, &end, 10), hi = *end == ':' ? strtol(end + 1, &end, 10) : -1;
    if (*end || lo < 1 || hi < lo || hi > 1000000 || lo > a->nodes || hi < a->nodes)
      return pit_cli_usage("--nnodes: '%s' is not MIN:MAX with 1 <= MIN <= --nodes <= MAX", a->nnodes);
    st->nmin = (int)lo, st->nmax = (int)hi;
  }
  if (a->usl) {
    char *end;
    st->sigma = strtod(a->usl, &end);
    st->kappa = *end == ',' ? strtod(end + 1, &end) : NAN;
    if (*end || !(st->sigma >= 0) || !(st->kappa >= 0) || !isfinite(st->sigma) || !isfinite(st->kappa))
      return pit_cli_usage("--usl: '%s' is not SIGMA,KAPPA (both >= 0)", a->usl);
  }
  if (a->offset > 0)
    pit_cli_note("--offset-hours: not applied to a fleet (it starts at tick 0 of every trace)");
  if (a->study) {
    struct pit_err e = {0};
    if (a->nzones)
      return pit_cli_usage("--zone goes with --trace (a study file names its zones)");
    if (pit_study_read(a->study, in, &e))
      return pit_cli_fail(&e);
  }
  return 0;
}

/* One trace, one node (or --nodes N of one type): the policy, the baselines and the optimum. */
static int one_case(const struct sim_args *a) {
  struct pit_err e = {0};
  struct pit_trace tr;
  if (pit_trace_load(&tr, a->trace, &e))
    return pit_cli_fail(&e);
  double price = a->price, spot = a->spot;
  const char *from, *installed = NULL;
  if (!a->catalog && isnan(price) && isnan(spot) && *tr.itype)
    installed = default_catalog();
  if (pit_sim_case_prices(&tr, a->catalog, installed, a->itype, &price, &spot, &from, &e)) {
    pit_trace_release(&tr);
    return pit_cli_fail(&e);
  }
  struct pit_sim_case c = {.trace = &tr, .job_h = a->job, .deadline_h = a->deadline, .restart_h = a->restart,
                           .price_h = price, .spot_price_h = spot, .nodes = (int)a->nodes};
  c.offset = (int)fmod(floor(a->offset * 3600 / tr.gap_s + 1e-9), tr.n);
  struct pit_sim_result res[PIT_SIM_NCOMPARE];
  for (int i = 0; i < PIT_SIM_NCOMPARE; i++)
    pit_sim_result_init(&res[i]);
  int multi = c.nodes > 1, rc = 0;
  size_t bytes = 0;
  if (multi && a->chart)
    pit_cli_note("--chart: not drawn for --nodes > 1");
  rc = pit_sim_compare(&c, a->chart != NULL, res, &bytes, &e);
  if (multi)
    pit_cli_note("%d nodes: the optimum is not computed; the policy's simulation held %zu bytes", c.nodes, bytes);
  static const char *const names[PIT_SIM_NCOMPARE] = {"pitstop", "on_demand", "greedy", "uniform_progress",
                                                      "optimum"};
  struct pit_sim_grid g = {0};
  if (!rc)
    pit_sim_grid(&c, &g, &e);
  struct pit_sim_report r = {&c, a->trace, tr.itype, tr.gap_s, g.restart, from, res, names, PIT_SIM_NCOMPARE, multi};
  if (rc || pit_sim_report_write(stdout, &r, a->json, &e))
    rc = pit_cli_fail(&e);
  if (!rc && a->chart && !multi) {
    if (pit_sim_chart(&c, res, names, PIT_SIM_NCOMPARE, a->chart, &e))
      rc = pit_cli_fail(&e);
    else
      pit_cli_note("chart written to '%s'", a->chart);
  }
  for (int i = 0; i < PIT_SIM_NCOMPARE; i++)
    pit_sim_result_release(&res[i]);
  pit_trace_release(&tr);
  return rc;
}

/* The numeric options: the code of the row in opts[], > 0 required (pos; else >= 0), the field of struct sim_args. */
static const struct num_opt {
  int code, pos;
  size_t off;
} num_opts[] = {
    {'g', 0, offsetof(struct sim_args, ckpt_gb)},  {'e', 0, offsetof(struct sim_args, seed)},
    {'j', 1, offsetof(struct sim_args, job)},      {'d', 1, offsetof(struct sim_args, deadline)},
    {'r', 0, offsetof(struct sim_args, restart)},  {'p', 1, offsetof(struct sim_args, price)},
    {'s', 0, offsetof(struct sim_args, spot)},     {'o', 0, offsetof(struct sim_args, offset)},
    {'n', 1, offsetof(struct sim_args, nodes)},    {'D', 1, offsetof(struct sim_args, run_deadline)},
    {'B', 1, offsetof(struct sim_args, budget)},
};

static const struct num_opt *num_opt(int code) {
  for (size_t i = 0; i < sizeof num_opts / sizeof num_opts[0]; i++)
    if (num_opts[i].code == code)
      return &num_opts[i];
  return NULL;
}

/* The options into a (and the traces and zones into in); 0 or the exit status (-1: --help printed). */
static int parse_args(int argc, char **argv, struct sim_args *a, struct pit_study_in *in) {
  int rc = 0, o;
  struct pit_cli_getopt go;
  pit_cli_getopt_init(&go, argc, argv, &cmd);
  while ((o = pit_cli_getopt_next(&go)) != -1 && !rc) {
    const char *n = go.opt ? go.opt->name : "";
    switch (o) {
    case 'T':
      if (in->n >= PIT_STUDY_MAX_TRACES)
        return pit_cli_usage("--trace: at most %d traces", PIT_STUDY_MAX_TRACES);
      a->trace = optarg;
      snprintf(in->path[in->n++], sizeof in->path[0], "%s", optarg);
      break;
    case 'S': a->study = optarg; break;
    case 'z':
      if (a->nzones >= PIT_STUDY_MAX_TRACES)
        return pit_cli_usage("--zone: at most %d", PIT_STUDY_MAX_TRACES);
      snprintf(in->zone[a->nzones++], sizeof in->zone[0], "%s", optarg);
      break;
    case 'u': a->usl = optarg; break;
    case 'K': a->count_scale = optarg; break;
    case 'c': a->catalog = optarg; break;
    case 't': a->itype = optarg; break;
    case 'C': a->chart = optarg; break;
    case 'R': a->events = optarg; break;
    case 'y': a->types = optarg; break;
    case 'N': a->nnodes = optarg; break;
    case 'P': a->policy = optarg; break;
    case 'f':
      if (strcmp(optarg, "json") == 0 || strcmp(optarg, "table") == 0)
        a->json = strcmp(optarg, "json") == 0;
      else
        rc = pit_cli_usage("--format: '%s' is not table or json", optarg);
      break;
    case 'h': pit_cli_help(stdout, &cmd); return -1;
    default: {
      const struct num_opt *no = num_opt(o);
      rc = no ? parse_num(n, optarg, no->pos, (double *)((char *)a + no->off)) : pit_cli_bad_option("simulate", argv);
    }
    }
  }
  if (!rc && optind < argc)
    return pit_cli_usage("unexpected argument '%s' (pitstop simulate --help)", argv[optind]);
  return rc;
}

/* One CSV holding several zones: a study by itself. */
static int is_region(const char *path, int *region) {
  struct pit_trace *arr;
  int m;
  struct pit_err pe = {0};
  if (pit_trace_load_all(path, &arr, &m, &pe))
    return pit_cli_fail(&pe);
  *region = m > 1;
  for (int i = 0; i < m; i++)
    pit_trace_release(&arr[i]);
  free(arr);
  return 0;
}

int pit_cmd_simulate(int argc, char **argv) {
  struct sim_args a = {.job = NAN, .deadline = NAN, .restart = NAN, .price = NAN, .spot = NAN, .nodes = 1,
                       .run_deadline = NAN, .budget = NAN, .ckpt_gb = 10, .seed = 1};
  static struct pit_study_in in;
  memset(&in, 0, sizeof in);
  int rc = parse_args(argc, argv, &a, &in);
  if (rc)
    return rc < 0 ? 0 : rc;
  if (a.events) {
    if (a.trace || a.study)
      return pit_cli_usage("--replay and --trace: one or the other");
    return replay(a.events, a.catalog, a.types, a.nnodes, a.policy, a.run_deadline, a.budget, a.json);
  }
  if (a.types || a.policy || !isnan(a.run_deadline) || !isnan(a.budget))
    return pit_cli_usage("--types, --policy, --deadline and --budget go with --replay");
  if (a.study && a.trace)
    return pit_cli_usage("--study and --trace: one or the other");
  if ((!a.trace && !a.study) || isnan(a.job) || isnan(a.deadline) || isnan(a.restart))
    return pit_cli_usage("--trace (or --study), --job-hours, --deadline-hours and --restart-hours are required");
  if (a.nodes != floor(a.nodes) || a.nodes > 1e6)
    return pit_cli_usage("--nodes: a whole number of nodes, at most 10^6");
  if (a.nzones > in.n && !a.study)
    return pit_cli_usage("--zone: %d zones for %d traces", a.nzones, in.n);
  int region = 0;
  if (!a.study && in.n == 1 && !a.nnodes && !a.usl && a.nodes == 1 && (rc = is_region(in.path[0], &region)))
    return rc;
  if (a.study || in.n > 1 || a.nodes > 1 || a.nnodes || a.usl || region) {
    struct pit_sim_study st;
    if ((rc = fleet_opts(&a, &in, &st)))
      return rc;
    return fleet(&in, &st, &a);
  }
  if (a.itype && !a.catalog)
    return pit_cli_usage("--itype needs --catalog");
  return one_case(&a);
}
