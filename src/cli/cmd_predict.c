/* cmd_predict.c — `pitstop predict`: the whole job's time and cost from a
 * run's records (complete, or in progress) through the predict module
 * (pit_predict_inputs, pit_predict; docs/predict.md): records from events
 * files, raw training logs (parsed on the fly) or the store; cost through the
 * catalog; printed by the report module (table, CSV or JSON).
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


/* The membership priced: --itype (with --nodes for one type), else the run's
 * own; every type must be in the catalog. */
static int priced_membership(const struct pit_catalog *cat, const char *catalog, const char *itype, double nodes,
                             const struct pit_report_run *r, struct pit_membership *m, struct pit_err *e) {
  const struct pit_series_seg *now = r->series.nruns > 0 ? pit_series_last_seg(&r->series.runs[0]) : NULL;
  if (itype) {
    if (pit_membership_parse(m, itype, e))
      return pit_err_hint(e, "--itype takes a type or a membership such as c5.xlarge:2+m5.large:1"), PIT_EARG;
    if (m->n == 1 && nodes > 0)
      m->m[0].nodes = (int)nodes;
  } else if (now && now->cfg.members.n > 0) {
    *m = now->cfg.members; /* the membership its last generation runs on */
  } else if (r->cfg.members.n > 0) {
    *m = r->cfg.members;
  } else {
    pit_err_set(e, PIT_EARG, "run '%s' names no instance type to price", r->name);
    pit_err_hint(e, "give --itype T (one of the types in '%s')", catalog);
    return PIT_EARG;
  }
  for (int i = 0; i < m->n; i++)
    if (!pit_catalog_find(cat, m->m[i].itype))
      return pit_err_set(e, PIT_ENOTFOUND, "instance type '%s' is not in '%s'", m->m[i].itype, catalog);
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

/* No --epochs, --iters or --samples: the job the run itself planned, as its
 * config states it (pitstop train's planned_iters: whole epochs when it is a
 * multiple of iters_per_epoch; a course log's N of "[epoch: e/N]"), else the
 * epochs the run has reached (begun), else one epoch. A run in progress is
 * then predicted to its own end, and one past its first epoch is not taken for
 * a new 1-epoch job. */
static void own_job(const struct pit_report_run *r, const struct pit_predict_in *in, enum pit_job_unit *unit,
                    double *size, char *from, size_t cap) {
  double planned = pit_config_num(&r->cfg, r->config, "planned_iters");
  if (planned >= 1) {
    double ipe = in->iters_per_epoch;
    if (isfinite(ipe) && ipe >= 1 && fmod(planned, ipe) == 0) {
      *unit = PIT_JOB_EPOCHS;
      *size = planned / ipe;
    } else {
      *unit = PIT_JOB_ITERS;
      *size = planned;
    }
    snprintf(from, cap, "the run's config (planned_iters %.0f)", planned);
    return;
  }
  double epochs = pit_config_num(&r->cfg, r->config, "epochs"); /* a log's "[epoch: e/N]" */
  if (epochs >= 1) {
    *unit = PIT_JOB_EPOCHS;
    *size = epochs;
    snprintf(from, cap, "the run's config (epochs %.0f)", epochs);
    return;
  }
  double ipe = in->iters_per_epoch;
  if (in->done_iters > 0 && isfinite(ipe) && ipe >= 1 && (double)in->done_iters > ipe) {
    *unit = PIT_JOB_EPOCHS; /* past its first epoch: not taken for a 1-epoch job */
    *size = ceil((double)in->done_iters / ipe - 1e-9);
    snprintf(from, cap, "default (the %.0f epochs the run reached; it states no planned_iters or epochs)", *size);
    return;
  }
  snprintf(from, cap, "default (1 epoch; the run states no planned_iters or epochs)");
}

/* A job no larger than what the run has done (--epochs 1 on a stored 3-epoch
 * run): the run did the whole job, so its first n iterations are what is done
 * (n the job's), the time it took them is the elapsed time — the run time of
 * the last record of step n-1 where the records have a clock (a step redone
 * after a failure counts where it was last done), else the step times of
 * steps 0..n-1 and the init — and nothing remains; from says so. */
static void job_done_in_run(const struct pit_series *s, char *from, size_t cap, struct pit_predict_in *in) {
  double ipe = in->iters_per_epoch;
  double n = in->unit == PIT_JOB_EPOCHS  ? in->size * ipe
             : in->unit == PIT_JOB_ITERS ? in->size
             : in->batch > 0             ? in->size / (double)in->batch
                                         : NAN;
  if (!(in->done_iters > 0) || !isfinite(n) || in->done_iters <= (int64_t)ceil(n - 1e-9))
    return;
  int64_t job = (int64_t)ceil(n - 1e-9);
  double t = NAN, steps = 0;
  int clock = 1;
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if (it->step >= job || (it->flags & PIT_IT_OTHER_RANK))
      continue;
    clock = clock && isfinite(it->t);
    if (it->step == job - 1 && isfinite(it->t) && !(it->t <= t))
      t = it->t;
    if (isfinite(it->step_s))
      steps += it->step_s;
  }
  double init = isfinite(in->init.mean) ? in->init.mean : 0;
  size_t k = strlen(from);
  snprintf(from + k, cap - k, " (the run did %lld iterations, more than the job's %lld: done in it)",
           (long long)in->done_iters, (long long)job);
  in->done_iters = job;
  in->edge_done = 0;
  if (clock && isfinite(t)) {
    in->elapsed_s = t;
    in->elapsed_untimed = 0;
  } else {
    in->elapsed_s = steps + init;
    in->elapsed_untimed = PIT_PREDICT_DRIFT_ALLOW * in->elapsed_s;
  }
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

int pit_cmd_predict(int argc, char **argv) {
  /* files[i]: an events file (events[i]) or a raw log parsed on the fly */
  const char **files = calloc((size_t)argc + 1, sizeof *files);
  const char **hist = calloc((size_t)argc + 1, sizeof *hist); /* --history files */
  char *events = calloc((size_t)argc + 1, 1);
  if (!files || !events || !hist) {
    free(files);
    free(hist);
    free(events);
    return pit_cli_error("out of memory");
  }
  int nfiles = 0, nhist = 0, rc = 0, o, nsize = 0;
  const char *run = NULL, *catalog = NULL, *itype = NULL, *db = NULL;
  double size = 1, ipe = NAN, nodes = -1, allow = NAN, precision = 0.02, scale_to = NAN;
  enum pit_job_unit unit = PIT_JOB_EPOCHS;
  enum pit_summary_format fmt = PIT_SUMMARY_TABLE;
  struct pit_cli_getopt go;
  pit_cli_getopt_init(&go, argc, argv, &cmd);
  while (!rc && (o = pit_cli_getopt_next(&go)) != -1) {
    switch (o) {
    case 'e': events[nfiles] = 1, files[nfiles++] = optarg; break;
    case 'H': hist[nhist++] = optarg; break;
    case 'd': db = optarg; break;
    case 'r': run = optarg; break;
    case 'E': unit = PIT_JOB_EPOCHS; nsize++; rc = parse_pos(go.opt->name, optarg, &size); break;
    case 'I': unit = PIT_JOB_ITERS; nsize++; rc = parse_pos(go.opt->name, optarg, &size); break;
    case 'S': unit = PIT_JOB_SAMPLES; nsize++; rc = parse_pos(go.opt->name, optarg, &size); break;
    case 'p': rc = parse_pos(go.opt->name, optarg, &ipe); break;
    case 'c': catalog = optarg; break;
    case 't': itype = optarg; break;
    case 'n': rc = parse_pos(go.opt->name, optarg, &nodes); break;
    case 'P': rc = parse_pos(go.opt->name, optarg, &precision); break;
    case 's': rc = parse_pos(go.opt->name, optarg, &scale_to); break;
    case 'a': {
      char *end;
      allow = strtod(optarg, &end);
      if (*optarg == '\0' || *end != '\0' || !(allow >= 0) || !isfinite(allow))
        rc = pit_cli_usage("--drift-allow: must be a number >= 0, not '%s'", optarg);
      break;
    }
    case 'f':
      if (pit_summary_format_parse(optarg, &fmt))
        rc = pit_cli_usage("--format: table, csv or json, not '%s'", optarg);
      break;
    case 'h': pit_cli_help(stdout, &cmd); free(files); free(hist); free(events); return 0;
    default: rc = pit_cli_bad_option("predict", argv);
    }
  }
  for (int i = optind; i < argc && !rc; i++)
    files[nfiles++] = argv[i];
  if (!rc && nsize > 1)
    rc = pit_cli_usage("give one of --epochs, --iters, --samples");
  if (!rc && db && nfiles)
    rc = pit_cli_usage("give either --db or files, not both");
  if (!rc && !db && nfiles == 0)
    rc = pit_cli_usage("no records: give events files, training logs or --db PATH (pitstop predict --help)");
  if (!rc && nodes > 0 && !itype)
    rc = pit_cli_usage("--nodes goes with --itype");
  if (!rc && nhist && isfinite(scale_to))
    rc = pit_cli_usage("--history goes with one run, not with --scale-to");
  struct pit_term prior = {NAN, NAN};
  char prior_from[160] = "", size_from[200] = "";
  if (!rc && nhist)
    rc = history_prior(hist, nhist, &prior, prior_from, sizeof prior_from);
  if (rc) {
    free(files);
    free(hist);
    free(events);
    return rc;
  }
  struct pit_err e = {0};
  struct pit_runset rs;
  pit_runset_init(&rs);
  rs.warn = print_warning;
  struct pit_catalog cat = {0};
  const char **names = NULL; /* the catalog's types, to read one from a log's path */
  char *const only[1] = {(char *)run};
  int nonly = run ? 1 : 0;
  if (catalog && pit_catalog_load(&cat, catalog, &e))
    rc = pit_cli_fail(&e);
  if (!rc && catalog && !(names = calloc((size_t)cat.n, sizeof *names)))
    rc = pit_cli_error("out of memory");
  for (int i = 0; names && i < cat.n; i++)
    names[i] = cat.types[i].name;
  for (int i = 0; i < nfiles && !rc; i++) {
    char ty[PIT_NAME_MAX] = "";
    if (names)
      pit_parse_itype_from_path(files[i], names, cat.n, ty, sizeof ty);
    if (events[i] ? pit_runset_load_events(&rs, files[i], only, nonly, &e)
                  : pit_runset_load_log(&rs, files[i], NULL, ty[0] ? ty : NULL, only, nonly, &e))
      rc = pit_cli_fail(&e);
  }
  if (!rc && db && pit_runset_load_store(&rs, db, only, nonly, &e))
    rc = pit_cli_fail(&e);
  if (!rc && pit_runset_check(&rs, only, nonly, db ? NULL : "the files", &e))
    rc = pit_cli_fail(&e);
  if (!rc && rs.n > 1 && !run && !isfinite(scale_to))
    rc = pit_cli_error("the %s hold%s %d runs; choose one with --run ID", db ? "store" : "files", db ? "s" : "",
                       rs.n);
  if (!rc && pit_runset_summarize(&rs, &e))
    rc = pit_cli_fail(&e);
  const struct pit_report_run *r = rc ? NULL : run ? pit_runset_find(&rs, run) : &rs.runs[0];
  struct pit_predict_report rep;
  struct pit_predict_basis basis;
  struct pit_predict_in *in = &rep.in;
  memset(&rep, 0, sizeof rep);
  char model[400] = "measured configuration (no scaling; its ranks as recorded)";
  if (!rc && isfinite(scale_to))
    rc = scaled_inputs(&rs, precision, scale_to, in, &basis, model, sizeof model);
  else if (!rc && pit_predict_inputs(&r->series, &r->sum, r->name, precision, in, &basis, &e))
    rc = pit_cli_fail(&e);
  else if (!rc && r->series.nruns > 0 && pit_series_member_from(&r->series.runs[0]) > 0)
    snprintf(model, sizeof model,
             "measured configuration (no scaling): t_p from generation %d on, the run's last configuration "
             "(%s); the generations before ran on another",
             pit_series_member_from(&r->series.runs[0]), pit_series_last_seg(&r->series.runs[0])->key);
  if (!rc && nhist && !pit_predict_use_prior(in, &basis, &prior))
    snprintf(prior_from, sizeof prior_from, "not used: %s",
             basis.wall ? "the records have a clock (the wall time between iterations holds it)"
                        : "the run's own epochs show it");
  if (!rc) {
    if (isfinite(ipe))
      in->iters_per_epoch = ipe;
    in->drift_allow = allow;
    if (isfinite(allow))
      in->elapsed_untimed *= allow / PIT_PREDICT_DRIFT_ALLOW;
    if (!nsize && !isfinite(scale_to))
      own_job(r, in, &unit, &size, size_from, sizeof size_from);
    else
      snprintf(size_from, sizeof size_from, "%s", !nsize ? "default (1 epoch)" : unit == PIT_JOB_EPOCHS ? "--epochs"
                                                   : unit == PIT_JOB_ITERS ? "--iters" : "--samples");
    in->unit = unit;
    in->size = size;
    job_done_in_run(&r->series, size_from, sizeof size_from, in);
    if (unit == PIT_JOB_SAMPLES && !(in->batch > 0)) /* a log that does not record it */
      rc = pit_cli_error("batch size unknown for run '%s': give --batch-size N (per rank) to pitstop parse "
                         "(a job sized in samples needs the global batch)", r->name);
    else if (pit_predict(in, &rep.p, &e)) {
      char why[sizeof e.msg];
      snprintf(why, sizeof why, "%s", e.msg);
      pit_err_set(&e, e.code, "run '%s': %.200s", r->name, why);
      rc = pit_cli_fail(&e);
    }
  }
  struct pit_membership mem;
  pit_membership_clear(&mem);
  char memtext[PIT_MEMBERSHIP_TEXT_MAX] = "", steady[200];
  rep.cost = rep.cost_lo = rep.cost_hi = rep.samples_per_dollar = rep.price_h = NAN;
  rep.rcost = rep.rcost_lo = rep.rcost_hi = NAN;
  /* US$ still to pay: the bill for the elapsed time plus what remains, less the
   * bill for the elapsed time (billing runs from the start: its granularity and
   * minimum count once); its interval is the remaining time's — the elapsed
   * time's own uncertainty (a log without a clock) is in what was paid, not in
   * what is still to pay, so a finished run has exactly 0 left */
  double el = rep.in.elapsed_s > 0 ? rep.in.elapsed_s : 0, spent = 0, until[3] = {NAN, NAN, NAN};
  char defcat[4400];
  if (!rc && !catalog && default_catalog(itype, r, defcat, sizeof defcat)) {
    catalog = defcat; /* the installed one that holds the types */
    if (pit_catalog_load(&cat, catalog, &e))
      rc = pit_cli_fail(&e);
  } else if (!rc && !catalog && itype) {
    rc = pit_cli_usage("--itype %s: no installed catalog (catalogs/local.tsv, catalogs/aws.tsv) holds it; give "
                       "--catalog FILE (the prices)", itype);
  }
  if (!rc && catalog) {
    if (priced_membership(&cat, catalog, itype, nodes, r, &mem, &e) ||
        pit_catalog_cost(&cat, &mem, rep.p.total_s, &rep.cost, &e) ||
        pit_catalog_cost(&cat, &mem, rep.p.lo, &rep.cost_lo, &e) ||
        pit_catalog_cost(&cat, &mem, rep.p.hi, &rep.cost_hi, &e) ||
        (el > 0 && pit_catalog_cost(&cat, &mem, el, &spent, &e)) || /* not started: nothing paid */
        pit_catalog_cost(&cat, &mem, el + rep.p.remaining_s, &until[0], &e) ||
        pit_catalog_cost(&cat, &mem, el + rep.p.remaining_lo, &until[1], &e) ||
        pit_catalog_cost(&cat, &mem, el + rep.p.remaining_hi, &until[2], &e) ||
        (in->batch > 0 && pit_catalog_samples_per_dollar(&cat, &mem, in->tp, (double)in->batch, rep.p.total_s,
                                                         &rep.samples_per_dollar, &e)))
      rc = pit_cli_fail(&e);
    else
      pit_membership_format(&mem, memtext, sizeof memtext);
    rep.rcost = until[0] - spent;
    rep.rcost_lo = until[1] - spent > 0 ? until[1] - spent : 0;
    rep.rcost_hi = until[2] - spent;
    rep.price_h = 0;
    for (int i = 0; !rc && i < mem.n; i++)
      rep.price_h += mem.m[i].nodes * pit_catalog_find(&cat, mem.m[i].itype)->price_h;
    rep.itype = memtext;
  }
  if (!rc) {
    static const char *const units[] = {"epochs", "iters", "samples"};
    rep.run = r->name;
    rep.model = model;
    snprintf(steady, sizeof steady, "%s: %s", basis.steady.state == PIT_STEADY_OK ? "steady" : "not steady yet",
             basis.steady.why);
    rep.want_iters = basis.steady.state == PIT_STEADY_OK ? 0 : basis.steady.want;
    if (rep.p.drift_want > 0) { /* steady over what was measured, too short for what is predicted */
      if (basis.steady.state == PIT_STEADY_OK)
        snprintf(steady, sizeof steady,
                 "not steady yet: a drift of %.1f%% over the rest cannot be ruled out from %lld iterations "
                 "(the interval allows %.1f%%)",
                 100 * rep.p.drift_bound, (long long)in->measured, 100 * rep.p.drift_rel);
      if (rep.p.drift_want > rep.want_iters)
        rep.want_iters = rep.p.drift_want;
    }
    rep.steady = steady;
    rep.warmup = (int64_t)basis.steady.warmup;
    rep.tp_lo = basis.steady.tp.lo;
    rep.tp_hi = basis.steady.tp.hi;
    if (isfinite(scale_to)) { /* nothing measured at this count: t_p is the fit's */
      snprintf(steady, sizeof steady, "not measured at %g ranks: t_p from the scaling fit", scale_to);
      rep.want_iters = rep.warmup = 0;
      rep.tp_lo = in->tp - in->tp_half;
      rep.tp_hi = in->tp + in->tp_half;
    }
    rep.unit = units[unit];
    rep.size_from = size_from;
    rep.val_samples = basis.val_samples;
    rep.time_basis = basis.wall ? "wall clock between iteration records" : "logged step times";
    rep.untimed_from = nhist ? prior_from : NULL;
    if (pit_predict_write(stdout, fmt, &rep, 1, &e))
      rc = pit_cli_fail(&e);
  }
  free(names);
  pit_catalog_release(&cat);
  pit_runset_release(&rs);
  free(files);
  free(hist);
  free(events);
  return rc;
}
