/* cmd_predict.c — `pitstop predict`: the whole job's time and cost from a
 * run's records (complete, or in progress), through pit_predict
 * (docs/predict.md). Minimal for now: events files in, JSON out; the table
 * and CSV printers come with the report module's printers.
 * Invariant: prints only on success (one JSON object on stdout) or one error
 * line per problem on stderr; nothing is written to files. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pitstop/predict.h"
#include "pitstop/report.h"

static const char usage_text[] =
    "usage: pitstop predict [--events FILE]... [FILE...] [--run ID]\n"
    "                       [--epochs N | --iters N | --samples N] [--iters-per-epoch N]\n"
    "                       [--catalog FILE --itype T [--nodes N]] [--drift-allow A] [--format json]\n"
    "FILE: JSON Lines records (pitstop train --events, pitstop parse). A run without an\n"
    "end record is taken as in progress: its remaining time is predicted.\n";

/* half-width of a 95% t interval of a statistics object (NaN if n < 2) */
static double stats_half(const struct pit_stats *s) {
  return s->n >= 2 ? pit_t_quantile(0.975, (int)s->n - 1) * s->sd / sqrt((double)s->n) : NAN;
}

static void jnum(cJSON *o, const char *k, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static void jpair(cJSON *o, const char *k, double lo, double hi) {
  cJSON *a = cJSON_AddArrayToObject(o, k);
  cJSON_AddItemToArray(a, isfinite(lo) ? cJSON_CreateNumber(lo) : cJSON_CreateNull());
  cJSON_AddItemToArray(a, isfinite(hi) ? cJSON_CreateNumber(hi) : cJSON_CreateNull());
}

static int parse_pos(const char *opt, const char *v, double *out) {
  char *end;
  double d = strtod(v, &end);
  if (*v == '\0' || *end != '\0' || !(d > 0) || !isfinite(d))
    return pit_cli_usage("--%s: '%s' is not a positive number", opt, v);
  *out = d;
  return 0;
}

int pit_cmd_predict(int argc, char **argv) {
  static const struct option opts[] = {{"events", required_argument, 0, 'e'},
                                       {"run", required_argument, 0, 'r'},
                                       {"epochs", required_argument, 0, 'E'},
                                       {"iters", required_argument, 0, 'I'},
                                       {"samples", required_argument, 0, 'S'},
                                       {"iters-per-epoch", required_argument, 0, 'p'},
                                       {"catalog", required_argument, 0, 'c'},
                                       {"itype", required_argument, 0, 't'},
                                       {"nodes", required_argument, 0, 'n'},
                                       {"drift-allow", required_argument, 0, 'a'},
                                       {"format", required_argument, 0, 'f'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  char **files = calloc((size_t)argc + 1, sizeof *files);
  if (!files)
    return pit_cli_usage("out of memory");
  int nfiles = 0, rc = 0, o, nsize = 0;
  const char *run = NULL, *catalog = NULL, *itype = NULL;
  double size = 1, ipe = NAN, nodes = 1, allow = NAN;
  enum pit_job_unit unit = PIT_JOB_EPOCHS;
  optind = 1;
  while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1 && !rc) {
    switch (o) {
    case 'e': files[nfiles++] = optarg; break;
    case 'r': run = optarg; break;
    case 'E': unit = PIT_JOB_EPOCHS; nsize++; rc = parse_pos("epochs", optarg, &size); break;
    case 'I': unit = PIT_JOB_ITERS; nsize++; rc = parse_pos("iters", optarg, &size); break;
    case 'S': unit = PIT_JOB_SAMPLES; nsize++; rc = parse_pos("samples", optarg, &size); break;
    case 'p': rc = parse_pos("iters-per-epoch", optarg, &ipe); break;
    case 'c': catalog = optarg; break;
    case 't': itype = optarg; break;
    case 'n': rc = parse_pos("nodes", optarg, &nodes); break;
    case 'a':
      allow = strtod(optarg, NULL);
      if (!(allow >= 0))
        rc = pit_cli_usage("--drift-allow: '%s' is not a number >= 0", optarg);
      break;
    case 'f':
      if (strcmp(optarg, "json") != 0)
        rc = pit_cli_usage("--format: only json for now (table and csv come with the report printers)");
      break;
    case 'h': fputs(usage_text, stdout); free(files); return 0;
    default: rc = 2;
    }
  }
  for (int i = optind; i < argc && !rc; i++)
    files[nfiles++] = argv[i];
  if (!rc && nsize > 1)
    rc = pit_cli_usage("give one of --epochs, --iters, --samples");
  if (!rc && nfiles == 0)
    rc = pit_cli_usage("no records: give events files (pitstop predict --help)");
  if (!rc && (catalog == NULL) != (itype == NULL))
    rc = pit_cli_usage("--catalog and --itype go together");
  if (rc) {
    free(files);
    return rc;
  }
  struct pit_err e = {0};
  struct pit_runset rs;
  pit_runset_init(&rs);
  struct pit_catalog cat = {0};
  char *const only[1] = {(char *)run};
  int nonly = run ? 1 : 0;
  for (int i = 0; i < nfiles && !rc; i++)
    if (pit_runset_load_events(&rs, files[i], NULL, 0, &e))
      rc = pit_cli_fail(&e);
  if (!rc && pit_runset_check(&rs, only, nonly, "the events files", &e))
    rc = pit_cli_fail(&e);
  int pick = -1;
  for (int i = 0; i < rs.n && !rc; i++)
    if (!run || strcmp(rs.runs[i].name, run) == 0)
      pick = pick < 0 ? i : -2;
  if (!rc && pick == -2) {
    fprintf(stderr, "pitstop: the files hold %d runs; choose one with --run ID\n", rs.n);
    rc = 1;
  }
  if (!rc && pit_runset_summarize(&rs, &e))
    rc = pit_cli_fail(&e);
  if (!rc && catalog && pit_catalog_load(&cat, catalog, &e))
    rc = pit_cli_fail(&e);
  const struct pit_itype *ty = NULL;
  if (!rc && catalog && !(ty = pit_catalog_find(&cat, itype))) {
    fprintf(stderr, "pitstop: instance type '%s' is not in '%s'\n", itype, catalog);
    rc = 1;
  }
  struct pit_prediction p;
  struct pit_predict_in in;
  const struct pit_report_run *r = pick >= 0 ? &rs.runs[pick] : NULL;
  if (!rc) {
    const struct pit_summary *sm = &r->sum;
    pit_predict_in_init(&in);
    in.tp = sm->tp.mean;
    in.tp_half = sm->tp.half;
    in.drift = sm->drift;
    in.drift_se = sm->drift_se;
    in.measured = sm->tp.n;
    in.drift_allow = allow;
    /* iterations per epoch: the option, else the config's samples / batch
     * (a partial run has not seen its epoch's end), else the largest seen */
    char buf[64];
    double samples = NAN;
    pit_config_field(&r->cfg, r->config, "samples", buf, sizeof buf);
    if (strcmp(buf, "-") != 0)
      samples = strtod(buf, NULL);
    in.iters_per_epoch = isfinite(ipe)                         ? ipe
                         : samples > 0 && r->cfg.batch > 0 ? ceil(samples / (double)r->cfg.batch)
                                                              : sm->iters_per_epoch;
    in.batch = r->cfg.batch;
    in.init = (struct pit_term){sm->init.mean, stats_half(&sm->init)};
    in.val = (struct pit_term){sm->validation.mean, stats_half(&sm->validation)};
    in.val_every_epoch = sm->validation.n > 0;
    in.epoch_edge = (struct pit_term){sm->epoch_edge_extra_s, NAN};
    in.unit = unit;
    in.size = size;
    /* in progress: no end record; what is done is timed, not predicted */
    if (isnan(r->series.runs[0].end_total_s) && sm->iters > 0) {
      in.done_iters = sm->iters;
      in.elapsed_s = isfinite(sm->total_s) ? sm->total_s : sm->step.sum + sm->init_total_s;
      if (!(in.elapsed_s > 0))
        in.elapsed_s = sm->step.sum;
      /* without a clock (no t), only step times are known: the time between
       * iterations is allowed up to the drift allowance of what was timed */
      if (!isfinite(sm->total_s))
        in.elapsed_untimed = (isfinite(allow) ? allow : PIT_PREDICT_DRIFT_ALLOW) * in.elapsed_s;
    }
    if (in.done_iters > 0 && unit == PIT_JOB_EPOCHS && isfinite(in.iters_per_epoch) &&
        in.done_iters > (int64_t)ceil(size * in.iters_per_epoch - 1e-9))
      in.done_iters = 0, in.elapsed_s = 0; /* a finished run read without its end record: predict anew */
    if (pit_predict(&in, &p, &e)) {
      fprintf(stderr, "pitstop: run '%s': %s\n", r->name, e.msg);
      rc = 1;
    }
  }
  if (!rc) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "run", r->name);
    jnum(j, "pit_s", in.tp);
    jpair(j, "pit_interval_s", r->sum.tp.lo, r->sum.tp.hi);
    jnum(j, "warmup", (double)r->sum.warmup);
    jnum(j, "drift", in.drift);
    jnum(j, "iters_per_epoch", in.iters_per_epoch);
    jnum(j, "predicted_epoch_s", p.epoch_s);
    jpair(j, "predicted_epoch_interval_s", p.epoch_lo, p.epoch_hi);
    jnum(j, "predicted_s", p.total_s);
    jpair(j, "predicted_interval_s", p.lo, p.hi);
    jnum(j, "remaining_s", p.remaining_s);
    jpair(j, "remaining_interval_s", p.remaining_lo, p.remaining_hi);
    jnum(j, "drift_allowance", p.drift_rel);
    /* cost through the catalog module: itype × nodes for the predicted time */
    double cost = NAN, spd = NAN;
    struct pit_membership mem;
    pit_membership_clear(&mem);
    if (ty && (pit_membership_add(&mem, ty->name, (int)nodes, -1, &e) ||
               pit_catalog_cost(&cat, &mem, p.total_s, &cost, &e) ||
               (in.batch > 0 && pit_catalog_samples_per_dollar(&cat, &mem, in.tp, (double)in.batch, p.total_s, &spd, &e)))) {
      cJSON_Delete(j);
      rc = pit_cli_fail(&e);
      goto done;
    }
    jnum(j, "predicted_cost", cost);
    jnum(j, "samples_per_dollar", spd);
    cJSON_AddStringToObject(j, "model", "measured configuration (no scaling)");
    cJSON *inp = cJSON_AddObjectToObject(j, "inputs");
    cJSON_AddNumberToObject(inp, "iters", (double)p.n_iter);
    cJSON_AddNumberToObject(inp, "epochs", (double)p.n_epoch);
    cJSON_AddNumberToObject(inp, "done_iters", (double)in.done_iters);
    jnum(inp, "elapsed_s", in.elapsed_s);
    jnum(inp, "measured_iters", (double)in.measured);
    jnum(inp, "batch", in.batch > 0 ? (double)in.batch : NAN);
    jnum(inp, "init_s", in.init.mean);
    jnum(inp, "val_s", in.val.mean);
    jnum(inp, "epoch_edge_s", in.epoch_edge.mean);
    if (ty) {
      cJSON_AddStringToObject(inp, "itype", ty->name);
      cJSON_AddNumberToObject(inp, "nodes", nodes);
      cJSON_AddNumberToObject(inp, "price_h", ty->price_h);
    }
    char *s = cJSON_PrintUnformatted(j);
    if (!s || printf("%s\n", s) < 0 || fflush(stdout)) {
      fprintf(stderr, "pitstop: cannot write the prediction to standard output\n");
      rc = 1;
    }
    free(s);
    cJSON_Delete(j);
  }
done:
  pit_catalog_release(&cat);
  pit_runset_release(&rs);
  free(files);
  return rc;
}
