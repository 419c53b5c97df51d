/* cmd_predict.c — `pitstop predict`: the whole job's time and cost from a
 * run's records (complete, or in progress) through the predict module
 * (pit_predict_inputs, pit_predict; docs/predict.md): records from events
 * files, raw training logs (parsed on the fly) or the store; the job, the
 * membership priced and its cost set up by the report module
 * (src/report/predict_job.c), which prints it too (table, CSV or JSON).
 * Invariant: prints only on success (stdout) or one error line per problem on
 * stderr (warnings aside); nothing is written to files. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pitstop/parse.h"
#include "pitstop/predict.h"
#include "pitstop/report.h"
#include "pitstop/store.h"

static const struct pit_cli_opt opts[] = {
    {"events", 1, 'e', "FILE", "JSON Lines records only (pitstop train --events); repeatable"},
    {"db", 1, 'd', "PATH", "a store (--run picks the run)"},
    {"run", 1, 'r', "ID", "the run to predict, among several"},
    {"epochs", 1, 'E', "N", "the job: N epochs (default: the job the run planned, its config's\n"
                            "planned_iters or a log's epoch count; else 1 epoch)"},
    {"iters", 1, 'I', "N", "the job: N iterations"},
    {"samples", 1, 'S', "N", "the job: N samples"},
    {"iters-per-epoch", 1, 'p', "N", "iterations in an epoch (default: the run's)"},
    {"catalog", 1, 'c', "FILE", "instance types and prices"},
    {"itype", 1, 't', "T", "the type (or a membership \"c5.xlarge:2+m5.large:1\") to price,\n"
                           "else the run's own"},
    {"nodes", 1, 'n', "N", "nodes of --itype's one type"},
    {"drift-allow", 1, 'a', "A", "how much the untimed iterations' mean may differ (default 0.05)"},
    {"precision", 1, 'P', "P", "the steadiness check's relative half-width (default 0.02)"},
    {"scale-to", 1, 's', "N", "the runs given are one configuration at several rank counts; predict the\n"
                              "job at N ranks from their Universal Scalability Law fit (3 distinct\n"
                              "counts at least)"},
    {"history", 1, 'H', "FILE", "an earlier run of the same training script (a log or events file;\n"
                                "repeatable): its epochs' time no step timed is added to each epoch\n"
                                "of a run whose records have no clock and no epoch time of their own"},
    {"format", 1, 'f', "F", "table (default), json or csv"},
};

static const struct pit_cli_cmd cmd = {
    "usage: pitstop predict [FILE...] [--events FILE]... | --db PATH   [--run ID]\n"
    "                       [--epochs N | --iters N | --samples N] [--iters-per-epoch N]\n"
    "                       [--catalog FILE] [--itype T [--nodes N]] [--drift-allow A] [--precision P]\n"
    "                       [--scale-to N] [--history FILE]... [--format table|json|csv]\n"
    "FILE: JSON Lines records (pitstop train --events) or a raw training log (any format\n"
    "pitstop parse reads, parsed on the fly). A run without an end record is taken as in\n"
    "progress: its remaining time is predicted.\n\n",
    opts, PIT_CLI_NOPTS(opts), NULL};

static int parse_pos(const char *opt, const char *v, double *out) {
  char *end;
  double d = strtod(v, &end);
  if (*v == '\0' || *end != '\0' || !(d > 0) || !isfinite(d))
    return pit_cli_usage("--%s: must be a number > 0, not '%s'", opt, v);
  *out = d;
  return 0;
}


/* --scale-to N: every run of the set, one configuration at several rank
 * counts, through pit_predict_scale; model says which fit. Returns an exit status. */
static int scaled_inputs(const struct pit_runset *rs, double precision, double to, struct pit_predict_in *in,
                         struct pit_predict_basis *basis, char *model, size_t cap) {
  struct pit_predict_in *ins = calloc((size_t)rs->n, sizeof *ins);
  int *ranks = calloc((size_t)rs->n, sizeof *ranks);
  struct pit_err e = {0};
  struct pit_usl fit;
  int rc = !ins || !ranks ? pit_err_set(&e, PIT_ENOMEM, "out of memory") : 0;
  for (int k = 0; k < rs->n && !rc; k++) {
    const struct pit_report_run *r = &rs->runs[k];
    ranks[k] = r->cfg.ranks;
    rc = pit_predict_inputs(&r->series, &r->sum, r->name, precision, &ins[k], basis, &e);
  }
  if (!rc)
    rc = pit_predict_scale(ins, ranks, rs->n, to, in, &fit, &e);
  if (!rc) {
    int n = snprintf(model, cap, "USL over ranks");
    for (int k = 0; k < rs->n && n > 0 && (size_t)n < cap; k++)
      n += snprintf(model + n, cap - (size_t)n, "%s%d", k ? "," : " ", ranks[k]);
    if (n > 0 && (size_t)n < cap)
      snprintf(model + n, cap - (size_t)n, " (lambda %.4g/s, sigma %.3g, kappa %.3g), predicted at %g",
               fit.lambda, fit.sigma, fit.kappa, to);
  }
  free(ins);
  free(ranks);
  return rc ? pit_cli_fail(&e) : 0;
}

static void print_warning(void *arg, const struct pit_err *w) {
  (void)arg;
  pit_cli_warn("%s", w->msg);
}

/* --history: the untimed time per epoch of the earlier runs in files[0..n-1]
 * (pit_predict_untimed_prior) into *prior and a line saying where it came
 * from into from. Returns an exit status. */
static int history_prior(const char *const *files, int n, struct pit_term *prior, char *from, size_t cap) {
  struct pit_err e = {0};
  struct pit_runset hs;
  pit_runset_init(&hs);
  hs.warn = print_warning;
  int rc = 0;
  for (int i = 0; i < n && !rc; i++)
    rc = pit_runset_load_log(&hs, files[i], NULL, NULL, NULL, 0, &e);
  if (!rc)
    rc = pit_runset_check(&hs, NULL, 0, "the --history files", &e);
  if (!rc)
    rc = pit_runset_summarize(&hs, &e);
  const struct pit_series **ss = rc ? NULL : calloc((size_t)hs.n, sizeof *ss);
  if (!rc && !ss)
    rc = pit_err_set(&e, PIT_ENOMEM, "out of memory");
  for (int k = 0; !rc && k < hs.n; k++)
    ss[k] = &hs.runs[k].series;
  int64_t m = 0;
  if (!rc && (rc = pit_predict_untimed_prior(ss, hs.n, prior, &m, &e)) == PIT_ESTATE) {
    char why[sizeof e.msg];
    snprintf(why, sizeof why, "%s", e.msg);
    pit_err_set(&e, PIT_ESTATE, "--history: %.300s", why);
  }
  if (!rc)
    snprintf(from, cap, "%lld epoch%s of %d earlier run%s", (long long)m, m == 1 ? "" : "s", hs.n,
             hs.n == 1 ? "" : "s");
  free(ss);
  pit_runset_release(&hs);
  return rc ? pit_cli_fail(&e) : 0;
}

/* No --catalog: the installed catalog that holds every type to price (--itype's,
 * else the run's membership), its path into out: catalogs/local.tsv first for
 * local-* types, else catalogs/aws.tsv first, then the other
 * (pit_cli_catalog). 0 when none does or nothing names a type: no cost. */
static int default_catalog(const char *itype, const struct pit_report_run *r, char *out, size_t cap) {
  struct pit_membership m;
  struct pit_err e = {0};
  pit_membership_clear(&m);
  const struct pit_series_seg *now = r->series.nruns > 0 ? pit_series_last_seg(&r->series.runs[0]) : NULL;
  if (itype ? pit_membership_parse(&m, itype, &e) != 0 : 0)
    return 0;
  if (!itype)
    m = now && now->cfg.members.n > 0 ? now->cfg.members : r->cfg.members;
  if (m.n == 0)
    return 0;
  int local = strncmp(m.m[0].itype, "local-", 6) == 0;
  const char *names[2] = {local ? "local.tsv" : "aws.tsv", local ? "aws.tsv" : "local.tsv"};
  for (int k = 0; k < 2; k++) {
    const char *path = pit_cli_catalog(names[k], &e);
    struct pit_catalog cat = {0};
    if (!path || pit_catalog_load(&cat, path, &e) < 0)
      continue;
    int all = 1;
    for (int i = 0; i < m.n && all; i++)
      all = pit_catalog_find(&cat, m.m[i].itype) != NULL;
    pit_catalog_release(&cat);
    if (all && (size_t)snprintf(out, cap, "%s", path) < cap)
      return 1;
  }
  return 0;
}

/* pitstop predict's options, as given and parsed; files[i] an events file (events[i]) or a raw log */
struct pred_args {
  const char **files, **hist; /* hist: --history files */
  char *events;
  int nfiles, nhist, nsize;
  const char *run, *catalog, *itype, *db;
  double size, ipe, nodes, allow, precision, scale_to;
  enum pit_job_unit unit;
  enum pit_summary_format fmt;
};

/* The options into a; 0 or the exit status (-1: --help printed). */
static int parse_args(int argc, char **argv, struct pred_args *a) {
  int rc = 0, o;
  struct pit_cli_getopt go;
  pit_cli_getopt_init(&go, argc, argv, &cmd);
  while (!rc && (o = pit_cli_getopt_next(&go)) != -1) {
    const char *n = go.opt ? go.opt->name : "";
    switch (o) {
    case 'e': a->events[a->nfiles] = 1, a->files[a->nfiles++] = optarg; break;
    case 'H': a->hist[a->nhist++] = optarg; break;
    case 'd': a->db = optarg; break;
    case 'r': a->run = optarg; break;
    case 'E': a->unit = PIT_JOB_EPOCHS; a->nsize++; rc = parse_pos(n, optarg, &a->size); break;
    case 'I': a->unit = PIT_JOB_ITERS; a->nsize++; rc = parse_pos(n, optarg, &a->size); break;
    case 'S': a->unit = PIT_JOB_SAMPLES; a->nsize++; rc = parse_pos(n, optarg, &a->size); break;
    case 'p': rc = parse_pos(n, optarg, &a->ipe); break;
    case 'c': a->catalog = optarg; break;
    case 't': a->itype = optarg; break;
    case 'n': rc = parse_pos(n, optarg, &a->nodes); break;
    case 'P': rc = parse_pos(n, optarg, &a->precision); break;
    case 's': rc = parse_pos(n, optarg, &a->scale_to); break;
    case 'a': {
      char *end;
      a->allow = strtod(optarg, &end);
      if (*optarg == '\0' || *end != '\0' || !(a->allow >= 0) || !isfinite(a->allow))
        rc = pit_cli_usage("--drift-allow: must be a number >= 0, not '%s'", optarg);
      break;
    }
    case 'f':
      if (pit_summary_format_parse(optarg, &a->fmt))
        rc = pit_cli_usage("--format: table, csv or json, not '%s'", optarg);
      break;
    case 'h': pit_cli_help(stdout, &cmd); return -1;
    default: rc = pit_cli_bad_option("predict", argv);
    }
  }
  for (int i = optind; i < argc && !rc; i++)
    a->files[a->nfiles++] = argv[i];
  if (!rc && a->nsize > 1)
    rc = pit_cli_usage("give one of --epochs, --iters, --samples");
  if (!rc && a->db && a->nfiles)
    rc = pit_cli_usage("give either --db or files, not both");
  if (!rc && !a->db && a->nfiles == 0)
    rc = pit_cli_usage("no records: give events files, training logs or --db PATH (pitstop predict --help)");
  if (!rc && a->nodes > 0 && !a->itype)
    rc = pit_cli_usage("--nodes goes with --itype");
  if (!rc && a->nhist && isfinite(a->scale_to))
    rc = pit_cli_usage("--history goes with one run, not with --scale-to");
  return rc;
}

/* --catalog into cat, and the runs of the files or the store into rs, summarized; *r the one to predict. */
static int load_runs(const struct pred_args *a, struct pit_runset *rs, struct pit_catalog *cat,
                     const struct pit_report_run **r) {
  struct pit_err e = {0};
  const char **names = NULL; /* the catalog's types, to read one from a log's path */
  char *const only[1] = {(char *)a->run};
  int nonly = a->run ? 1 : 0, rc = 0;
  if (a->catalog && pit_catalog_load(cat, a->catalog, &e))
    rc = pit_cli_fail(&e);
  if (!rc && a->catalog && !(names = calloc((size_t)cat->n, sizeof *names)))
    rc = pit_cli_error("out of memory");
  for (int i = 0; names && i < cat->n; i++)
    names[i] = cat->types[i].name;
  for (int i = 0; i < a->nfiles && !rc; i++) {
    char ty[PIT_NAME_MAX] = "";
    if (names)
      pit_parse_itype_from_path(a->files[i], names, cat->n, ty, sizeof ty);
    if (a->events[i] ? pit_runset_load_events(rs, a->files[i], only, nonly, &e)
                     : pit_runset_load_log(rs, a->files[i], NULL, ty[0] ? ty : NULL, only, nonly, &e))
      rc = pit_cli_fail(&e);
  }
  free(names);
  if (!rc && a->db && pit_runset_load_store(rs, a->db, only, nonly, &e))
    rc = pit_cli_fail(&e);
  if (!rc && pit_runset_check(rs, only, nonly, a->db ? NULL : "the files", &e))
    rc = pit_cli_fail(&e);
  if (!rc && rs->n > 1 && !a->run && !isfinite(a->scale_to))
    rc = pit_cli_error("the %s hold%s %d runs; choose one with --run ID", a->db ? "store" : "files",
                       a->db ? "s" : "", rs->n);
  if (!rc && pit_runset_summarize(rs, &e))
    rc = pit_cli_fail(&e);
  *r = rc ? NULL : a->run ? pit_runset_find(rs, a->run) : &rs->runs[0];
  return rc;
}

/* rep's inputs (measured, or scaled), the job and the prediction; model, prior_from and
 * size_from: the report's lines on the scaling model, the untimed prior and the job. */
static int predict_run(const struct pred_args *a, const struct pit_runset *rs, const struct pit_report_run *r,
                       const struct pit_term *prior, struct pit_predict_report *rep, struct pit_predict_basis *basis,
                       char *model, size_t nmodel, char *prior_from, size_t nprior, char *size_from, size_t nsize) {
  struct pit_err e = {0};
  struct pit_predict_in *in = &rep->in;
  int rc = 0;
  if (isfinite(a->scale_to))
    rc = scaled_inputs(rs, a->precision, a->scale_to, in, basis, model, nmodel);
  else if (pit_predict_inputs(&r->series, &r->sum, r->name, a->precision, in, basis, &e))
    rc = pit_cli_fail(&e);
  else if (r->series.nruns > 0 && pit_series_member_from(&r->series.runs[0]) > 0)
    snprintf(model, nmodel,
             "measured configuration (no scaling): t_p from generation %d on, the run's last configuration "
             "(%s); the generations before ran on another",
             pit_series_member_from(&r->series.runs[0]), pit_series_last_seg(&r->series.runs[0])->key);
  if (rc)
    return rc;
  if (a->nhist && !pit_predict_use_prior(in, basis, prior))
    snprintf(prior_from, nprior, "not used: %s",
             basis->wall ? "the records have a clock (the wall time between iterations holds it)"
                         : "the run's own epochs show it");
  if (isfinite(a->ipe))
    in->iters_per_epoch = a->ipe;
  in->drift_allow = a->allow;
  if (isfinite(a->allow))
    in->elapsed_untimed *= a->allow / PIT_PREDICT_DRIFT_ALLOW;
  enum pit_job_unit unit = a->unit;
  double size = a->size;
  if (!a->nsize && !isfinite(a->scale_to))
    pit_predict_own_job(r, in, &unit, &size, size_from, nsize);
  else
    snprintf(size_from, nsize, "%s", !a->nsize ? "default (1 epoch)" : unit == PIT_JOB_EPOCHS ? "--epochs"
                                      : unit == PIT_JOB_ITERS ? "--iters" : "--samples");
  in->unit = unit;
  in->size = size;
  pit_predict_job_done_in_run(&r->series, size_from, nsize, in);
  if (unit == PIT_JOB_SAMPLES && !(in->batch > 0)) /* a log that does not record it */
    return pit_cli_error("batch size unknown for run '%s': give --batch-size N (per rank) to pitstop parse "
                         "(a job sized in samples needs the global batch)", r->name);
  if (pit_predict(in, &rep->p, &e)) {
    char why[sizeof e.msg];
    snprintf(why, sizeof why, "%s", e.msg);
    pit_err_set(&e, e.code, "run '%s': %.200s", r->name, why);
    return pit_cli_fail(&e);
  }
  return 0;
}

/* rep's cost on the membership priced (--catalog, else the installed one that holds its types; none: no cost). */
static int price(const struct pred_args *a, const struct pit_report_run *r, struct pit_catalog *cat,
                 struct pit_predict_report *rep, char *memtext, size_t cap) {
  struct pit_err e = {0};
  struct pit_membership mem;
  pit_membership_clear(&mem);
  const char *catalog = a->catalog;
  char defcat[4400];
  if (!catalog && default_catalog(a->itype, r, defcat, sizeof defcat)) {
    catalog = defcat; /* the installed one that holds the types */
    if (pit_catalog_load(cat, catalog, &e))
      return pit_cli_fail(&e);
  } else if (!catalog && a->itype) {
    return pit_cli_usage("--itype %s: no installed catalog (catalogs/local.tsv, catalogs/aws.tsv) holds it; give "
                         "--catalog FILE (the prices)", a->itype);
  }
  if (!catalog)
    return 0;
  if (pit_predict_priced_membership(cat, catalog, a->itype, a->nodes, r, &mem, &e) ||
      pit_predict_report_cost(rep, cat, &mem, &e))
    return pit_cli_fail(&e);
  pit_membership_format(&mem, memtext, cap);
  rep->itype = memtext;
  return 0;
}

int pit_cmd_predict(int argc, char **argv) {
  struct pred_args a = {.size = 1, .ipe = NAN, .nodes = -1, .allow = NAN, .precision = 0.02, .scale_to = NAN,
                        .unit = PIT_JOB_EPOCHS, .fmt = PIT_SUMMARY_TABLE};
  a.files = calloc((size_t)argc + 1, sizeof *a.files);
  a.hist = calloc((size_t)argc + 1, sizeof *a.hist);
  a.events = calloc((size_t)argc + 1, 1);
  int rc = !a.files || !a.events || !a.hist ? pit_cli_error("out of memory") : parse_args(argc, argv, &a);
  struct pit_term prior = {NAN, NAN};
  char prior_from[160] = "", size_from[200] = "";
  if (!rc && a.nhist)
    rc = history_prior(a.hist, a.nhist, &prior, prior_from, sizeof prior_from);
  struct pit_err e = {0};
  struct pit_runset rs;
  pit_runset_init(&rs);
  rs.warn = print_warning;
  struct pit_catalog cat = {0};
  const struct pit_report_run *r = NULL;
  struct pit_predict_report rep;
  struct pit_predict_basis basis;
  memset(&rep, 0, sizeof rep);
  char model[400] = "measured configuration (no scaling; its ranks as recorded)";
  if (!rc)
    rc = load_runs(&a, &rs, &cat, &r);
  if (!rc)
    rc = predict_run(&a, &rs, r, &prior, &rep, &basis, model, sizeof model, prior_from, sizeof prior_from, size_from,
                     sizeof size_from);
  char memtext[PIT_MEMBERSHIP_TEXT_MAX] = "", steady[200];
  rep.cost = rep.cost_lo = rep.cost_hi = rep.samples_per_dollar = rep.price_h = NAN;
  rep.rcost = rep.rcost_lo = rep.rcost_hi = NAN;
  if (!rc)
    rc = price(&a, r, &cat, &rep, memtext, sizeof memtext);
  if (!rc) {
    static const char *const units[] = {"epochs", "iters", "samples"};
    rep.run = r->name;
    rep.model = model;
    pit_predict_report_steady(&rep, &basis, a.scale_to, steady, sizeof steady);
    rep.unit = units[rep.in.unit];
    rep.size_from = size_from;
    rep.untimed_from = a.nhist ? prior_from : NULL;
    if (pit_predict_write(stdout, a.fmt, &rep, 1, &e))
      rc = pit_cli_fail(&e);
  }
  pit_catalog_release(&cat);
  pit_runset_release(&rs);
  free(a.files);
  free(a.hist);
  free(a.events);
  return rc < 0 ? 0 : rc;
}
