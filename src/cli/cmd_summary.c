/* cmd_summary.c — `pitstop summary`: statistics per run and per configuration
 * group, from the store (default ./pitstop.db) or straight from JSON Lines
 * files, as a table (terminal), CSV or JSON. Field names: docs/analysis.md.
 * Invariant: reads only; prints results on stdout, diagnostics on stderr;
 * exits non-zero when nothing could be summarized. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pitstop/analysis.h"
#include "pitstop/record.h"
#include "pitstop/store.h"

#define MAX_GROUP_FIELDS 8
#define MAX_EVENT_FILES 256

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct item {             /* one run or one group */
  char name[512];         /* run name, or "field=value ..." for a group */
  struct pit_config cfg;  /* the run's (for a group: its first run's) */
  char *config;           /* borrowed JSON text */
  struct pit_series series;
  struct pit_summary sum;
  int in_group;           /* run: index of its group */
  char gvals[MAX_GROUP_FIELDS][PIT_NAME_MAX];
};

struct ctx {
  struct item *runs;
  int nruns, caprun;
  struct item *groups;
  int ngroups, capgroup;
  const char *gfields[MAX_GROUP_FIELDS];
  int ngfields;
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: pitstop summary [--db PATH] [--events FILE]... [--group-by FIELD[,FIELD...]]\n"
          "                       [--format table|csv|json] [RUN...]\n"
          "\n"
          "Statistics of step, data, epoch, validation and init times per run and per configuration:\n"
          "count, mean, median, sd, min, max, p5/p95; the warm-up (MSER-5); the PIT time t_p with its 95%%\n"
          "interval (batch means); the slowest rank; totals and shares of the run time.\n"
          "\n"
          "  --db PATH          the store to read (default ./%s)\n"
          "  --events FILE      read JSON Lines records instead of the store (repeatable)\n"
          "  --group-by FIELDS  configuration fields that define a group (default:\n"
          "                     model,batch,ranks,nodes,itype,threads); any key of the init config\n"
          "  --format F         table (default), csv or json (field names in docs/analysis.md)\n"
          "  RUN...             only these runs\n",
          PIT_STORE_DEFAULT_PATH);
}

static struct item *run_item(struct ctx *c, const char *name) {
  for (int i = 0; i < c->nruns; i++)
    if (strcmp(c->runs[i].name, name) == 0)
      return &c->runs[i];
  if (c->nruns == c->caprun) {
    int cap = c->caprun ? 2 * c->caprun : 16;
    struct item *n = realloc(c->runs, sizeof *n * (size_t)cap);
    if (!n)
      return NULL;
    c->runs = n;
    c->caprun = cap;
  }
  struct item *it = &c->runs[c->nruns++];
  memset(it, 0, sizeof *it);
  snprintf(it->name, sizeof it->name, "%s", name);
  pit_series_init(&it->series);
  return it;
}

static int wanted(const char *name, char **only, int nonly) {
  if (nonly == 0)
    return 1;
  for (int i = 0; i < nonly; i++)
    if (strcmp(only[i], name) == 0)
      return 1;
  return 0;
}

static int read_events(struct ctx *c, const char *path, char **only, int nonly, long *bad) {
  struct pit_record_reader rd;
  struct pit_err e = {0};
  if (pit_record_reader_open(&rd, path, &e))
    return pit_cli_fail(&e);
  struct pit_record r;
  pit_record_init(&r);
  int rc;
  long n = 0;
  for (;;) {
    rc = pit_record_reader_next(&rd, &r, &e);
    if (rc == 0)
      break;
    if (rc < 0) {
      if (rc != PIT_EFORMAT) { /* an I/O error ends this file */
        pit_record_release(&r);
        pit_record_reader_release(&rd);
        return pit_cli_fail(&e);
      }
      if (++*bad <= 10)
        fprintf(stderr, "pitstop: warning: %s (line skipped)\n", e.msg);
      continue;
    }
    if (!wanted(r.run, only, nonly))
      continue;
    struct item *it = run_item(c, r.run);
    if (!it || pit_series_add(&it->series, &r, &e)) {
      pit_record_release(&r);
      pit_record_reader_release(&rd);
      if (!it)
        pit_err_set(&e, PIT_ENOMEM, "out of memory");
      return pit_cli_fail(&e);
    }
    n++;
  }
  if (n == 0 && rd.skipped > 0)
    fprintf(stderr, "pitstop: warning: '%s': no records (%ld lines that are not records)\n", path, rd.skipped);
  pit_record_release(&r);
  pit_record_reader_release(&rd);
  return 0;
}

static int read_store(struct ctx *c, const char *path, char **only, int nonly) {
  struct pit_store *s;
  struct pit_err e = {0};
  if (pit_store_open_existing(&s, path, &e))
    return pit_cli_fail(&e);
  struct pit_store_run *runs = NULL;
  int n = 0, rc = 0;
  if (pit_store_runs(s, &runs, &n, &e)) {
    pit_store_close(s, NULL);
    return pit_cli_fail(&e);
  }
  for (int i = 0; i < nonly; i++) {
    int found = 0;
    for (int k = 0; k < n && !found; k++)
      found = strcmp(runs[k].name, only[i]) == 0;
    if (!found) {
      pit_err_set(&e, PIT_ENOTFOUND, "'%s': no run named '%s'", path, only[i]);
      pit_err_hint(&e, "'pitstop summary --db %s' lists every run", path);
      rc = pit_cli_fail(&e);
      goto out;
    }
  }
  struct pit_record r;
  pit_record_init(&r);
  for (int k = 0; k < n && !rc; k++) {
    if (!wanted(runs[k].name, only, nonly))
      continue;
    struct item *it = run_item(c, runs[k].name);
    struct pit_store_cursor *cur = NULL;
    if (!it) {
      pit_err_set(&e, PIT_ENOMEM, "out of memory");
      rc = pit_cli_fail(&e);
      break;
    }
    if (pit_store_cursor_open(s, runs[k].name, &cur, &e)) {
      rc = pit_cli_fail(&e);
      break;
    }
    int got;
    while ((got = pit_store_cursor_next(cur, &r, &e)) == 1)
      if (pit_series_add(&it->series, &r, &e)) {
        got = -1;
        break;
      }
    pit_store_cursor_free(cur);
    if (got < 0)
      rc = pit_cli_fail(&e);
  }
  pit_record_release(&r);
out:
  pit_store_runs_free(runs, n);
  pit_store_close(s, NULL);
  return rc;
}

/* Places every run in its group (equal values of the grouping fields) and
 * concatenates the runs' series into the group's. */
static int make_groups(struct ctx *c) {
  struct pit_err e = {0};
  for (int i = 0; i < c->nruns; i++) {
    struct item *ru = &c->runs[i];
    char gname[512] = "";
    size_t off = 0;
    for (int f = 0; f < c->ngfields; f++) {
      pit_config_field(&ru->cfg, ru->config, c->gfields[f], ru->gvals[f], sizeof ru->gvals[f]);
      off += (size_t)snprintf(gname + off, off < sizeof gname ? sizeof gname - off : 0, "%s%s=%s", f ? " " : "",
                              c->gfields[f], ru->gvals[f]);
      if (off >= sizeof gname)
        off = sizeof gname - 1;
    }
    int g;
    for (g = 0; g < c->ngroups; g++)
      if (strcmp(c->groups[g].name, gname) == 0)
        break;
    if (g == c->ngroups) {
      if (c->ngroups == c->capgroup) {
        int cap = c->capgroup ? 2 * c->capgroup : 16;
        struct item *n = realloc(c->groups, sizeof *n * (size_t)cap);
        if (!n)
          return PIT_ENOMEM;
        c->groups = n;
        c->capgroup = cap;
      }
      struct item *gi = &c->groups[c->ngroups++];
      memset(gi, 0, sizeof *gi);
      snprintf(gi->name, sizeof gi->name, "%s", gname);
      gi->cfg = ru->cfg;
      gi->config = ru->config;
      memcpy(gi->gvals, ru->gvals, sizeof gi->gvals);
      pit_series_init(&gi->series);
    }
    ru->in_group = g;
    if (pit_series_append(&c->groups[g].series, &ru->series, &e))
      return PIT_ENOMEM;
  }
  return 0;
}

/* ---- output ---- */

static void jnum(FILE *f, const char *k, double v, int comma) {
  if (isnan(v) || isinf(v))
    fprintf(f, "\"%s\":null", k);
  else
    fprintf(f, "\"%s\":%.17g", k, v);
  if (comma)
    fputc(',', f);
}

static void jstr(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static void jstats(FILE *f, const char *k, const struct pit_stats *s) {
  fprintf(f, "\"%s\":{\"n\":%lld,", k, (long long)s->n);
  jnum(f, "sum", s->sum, 1);
  jnum(f, "mean", s->mean, 1);
  jnum(f, "median", s->median, 1);
  jnum(f, "sd", s->sd, 1);
  jnum(f, "min", s->min, 1);
  jnum(f, "max", s->max, 1);
  jnum(f, "p5", s->p5, 1);
  jnum(f, "p95", s->p95, 0);
  fputs("},", f);
}

static void jint_or_null(FILE *f, const char *k, int64_t v) {
  if (v < 0)
    fprintf(f, "\"%s\":null,", k);
  else
    fprintf(f, "\"%s\":%lld,", k, (long long)v);
}

static void json_item(FILE *f, const struct ctx *c, const struct item *it, int is_group) {
  const struct pit_summary *s = &it->sum;
  fprintf(f, "{\"kind\":\"%s\",\"name\":", is_group ? "group" : "run");
  jstr(f, it->name);
  fprintf(f, ",\"runs\":%d,", s->nruns);
  if (is_group) {
    fputs("\"group\":{", f);
    for (int g = 0; g < c->ngfields; g++) {
      jstr(f, c->gfields[g]);
      fputc(':', f);
      jstr(f, it->gvals[g]);
      if (g + 1 < c->ngfields)
        fputc(',', f);
    }
    fputs("},", f);
  }
  fputs("\"config\":{\"model\":", f);
  if (it->cfg.model[0])
    jstr(f, it->cfg.model);
  else
    fputs("null", f);
  fputs(",\"itype\":", f);
  if (it->cfg.itype[0])
    jstr(f, it->cfg.itype);
  else
    fputs("null", f);
  fputc(',', f);
  jint_or_null(f, "batch", it->cfg.batch);
  jint_or_null(f, "ranks", it->cfg.ranks);
  jint_or_null(f, "nodes", it->cfg.nodes);
  fprintf(f, "\"threads\":");
  if (it->cfg.threads < 0)
    fputs("null},", f);
  else
    fprintf(f, "%d},", it->cfg.threads);
  fprintf(f, "\"iters\":%lld,", (long long)s->iters);
  jstats(f, "step", &s->step);
  jstats(f, "data", &s->data);
  jstats(f, "epoch", &s->epoch);
  jstats(f, "validation", &s->validation);
  jstats(f, "init", &s->init);
  jstats(f, "rdzv", &s->rdzv);
  jstats(f, "checkpoint", &s->checkpoint);
  fprintf(f, "\"non_paramount\":%lld,\"warmup\":%lld,", (long long)s->non_paramount, (long long)s->warmup);
  fputs("\"tp\":{", f);
  jnum(f, "mean", s->tp.mean, 1);
  jnum(f, "lo", s->tp.lo, 1);
  jnum(f, "hi", s->tp.hi, 1);
  jnum(f, "half", s->tp.half, 1);
  fprintf(f, "\"n\":%lld,\"batches\":%d,\"batch_size\":%lld},", (long long)s->tp.n, s->tp.nbatches,
          (long long)s->tp.batch_size);
  jnum(f, "iters_per_epoch", s->iters_per_epoch, 1);
  jnum(f, "epoch_edge_extra_s", s->epoch_edge_extra_s, 1);
  jnum(f, "drift", s->drift, 1);
  fprintf(f, "\"nranks\":%d,", s->nranks);
  if (s->slow_rank < 0)
    fputs("\"slow_rank\":null,", f);
  else
    fprintf(f, "\"slow_rank\":%d,", s->slow_rank);
  jnum(f, "slow_compute_s", s->slow_compute_s, 1);
  jnum(f, "median_rank_compute_s", s->median_rank_compute_s, 1);
  jnum(f, "slow_excess", s->slow_excess, 1);
  jnum(f, "wait_share", s->wait_share, 1);
  fprintf(f, "\"rebalances\":%d,", s->rebalances);
  if (s->shares[0])
    fprintf(f, "\"batch_shares\":\"%s\",", s->shares);
  else
    fputs("\"batch_shares\":null,", f);
  for (int a = 0; a < 2; a++) {
    const double *v = a ? s->rank_wait_s : s->rank_compute_s;
    fprintf(f, "\"%s\":[", a ? "rank_wait_s" : "rank_compute_s");
    for (int k = 0; k < s->nranks && v; k++) {
      if (isnan(v[k]))
        fprintf(f, "%snull", k ? "," : "");
      else
        fprintf(f, "%s%.17g", k ? "," : "", v[k]);
    }
    fputs("],", f);
  }
  jnum(f, "total_s", s->total_s, 1);
  jnum(f, "init_total_s", s->init_total_s, 1);
  jnum(f, "epoch_total_s", s->epoch_total_s, 1);
  jnum(f, "validation_total_s", s->validation_total_s, 1);
  jnum(f, "checkpoint_total_s", s->checkpoint_total_s, 1);
  jnum(f, "init_share", s->init_share, 1);
  jnum(f, "epoch_share", s->epoch_share, 1);
  jnum(f, "validation_share", s->validation_share, 1);
  jnum(f, "checkpoint_share", s->checkpoint_share, 0);
  fputc('}', f);
}

static void cnum(FILE *f, double v) {
  if (isnan(v) || isinf(v))
    fputs(",", f);
  else
    fprintf(f, ",%.9g", v);
}

static void csv_text(FILE *f, const char *s) {
  int quote = strpbrk(s, ",\"\n") != NULL;
  if (!quote) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static const char *stat_names[] = {"step", "data", "epoch", "validation", "init", "rdzv", "checkpoint"};

/* "4 rebalances" */
static const char *rebal(char *b, size_t n, int k) {
  snprintf(b, n, "%d rebalance%s", k, k == 1 ? "" : "s");
  return b;
}

static void csv_header(FILE *f) {
  fputs("kind,name,runs,model,batch,ranks,nodes,itype,threads,iters", f);
  for (int k = 0; k < 7; k++)
    fprintf(f, ",%s_n,%s_mean,%s_median,%s_sd,%s_min,%s_max,%s_p5,%s_p95,%s_sum", stat_names[k], stat_names[k],
            stat_names[k], stat_names[k], stat_names[k], stat_names[k], stat_names[k], stat_names[k],
            stat_names[k]);
  fputs(",non_paramount,warmup,tp_mean,tp_lo,tp_hi,tp_n,tp_batches,iters_per_epoch,epoch_edge_extra_s,nranks,"
        "slow_rank,slow_compute_s,slow_excess,wait_share,total_s,init_share,epoch_share,validation_share,"
        "checkpoint_share,rebalances,batch_shares\n",
        f);
}

static void csv_item(FILE *f, const struct item *it, int is_group) {
  const struct pit_summary *s = &it->sum;
  fprintf(f, "%s,", is_group ? "group" : "run");
  csv_text(f, it->name);
  fprintf(f, ",%d,", s->nruns);
  csv_text(f, it->cfg.model);
  fprintf(f, ",%lld,%d,%d,", (long long)it->cfg.batch, it->cfg.ranks, it->cfg.nodes);
  csv_text(f, it->cfg.itype);
  fprintf(f, ",%d,%lld", it->cfg.threads, (long long)s->iters);
  const struct pit_stats *st[7] = {&s->step, &s->data, &s->epoch, &s->validation, &s->init, &s->rdzv, &s->checkpoint};
  for (int k = 0; k < 7; k++) {
    fprintf(f, ",%lld", (long long)st[k]->n);
    cnum(f, st[k]->mean);
    cnum(f, st[k]->median);
    cnum(f, st[k]->sd);
    cnum(f, st[k]->min);
    cnum(f, st[k]->max);
    cnum(f, st[k]->p5);
    cnum(f, st[k]->p95);
    cnum(f, st[k]->sum);
  }
  fprintf(f, ",%lld,%lld", (long long)s->non_paramount, (long long)s->warmup);
  cnum(f, s->tp.mean);
  cnum(f, s->tp.lo);
  cnum(f, s->tp.hi);
  fprintf(f, ",%lld,%d", (long long)s->tp.n, s->tp.nbatches);
  cnum(f, s->iters_per_epoch);
  cnum(f, s->epoch_edge_extra_s);
  fprintf(f, ",%d,%d", s->nranks, s->slow_rank);
  cnum(f, s->slow_compute_s);
  cnum(f, s->slow_excess);
  cnum(f, s->wait_share);
  cnum(f, s->total_s);
  cnum(f, s->init_share);
  cnum(f, s->epoch_share);
  cnum(f, s->validation_share);
  cnum(f, s->checkpoint_share);
  fprintf(f, ",%d,%s\n", s->rebalances, s->shares); /* shares: digits and '/' only */
}

/* Human-readable seconds with 4 significant digits; "-" when absent. */
static const char *secs(char *buf, size_t n, double v) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else if (v != 0 && fabs(v) < 0.1)
    snprintf(buf, n, "%.4gms", v * 1e3);
  else
    snprintf(buf, n, "%.4gs", v);
  return buf;
}
static const char *pct(char *buf, size_t n, double v) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%.1f%%", 100 * v);
  return buf;
}

static void table(FILE *f, struct item *items, int n, const char *title) {
  int w = 4;
  for (int i = 0; i < n; i++)
    if ((int)strlen(items[i].name) > w)
      w = (int)strlen(items[i].name);
  if (w > 60)
    w = 60;
  char b[9][32];
  fprintf(f, "%s — step time per iteration\n", title);
  fprintf(f, "%-*s %6s %9s %9s %9s %9s %9s %9s %9s %6s  %s\n", w, "", "iters", "mean", "median", "sd", "min", "max",
          "p5", "p95", "warmup", "t_p [95% interval]");
  for (int i = 0; i < n; i++) {
    const struct pit_summary *s = &items[i].sum;
    char tp[160];
    if (isnan(s->tp.mean))
      snprintf(tp, sizeof tp, "-");
    else if (isnan(s->tp.lo))
      snprintf(tp, sizeof tp, "%s (too few iterations for an interval)", secs(b[8], 32, s->tp.mean));
    else {
      char lo[32], hi[32];
      snprintf(tp, sizeof tp, "%s [%s, %s] (n=%lld)", secs(b[8], 32, s->tp.mean), secs(lo, 32, s->tp.lo),
               secs(hi, 32, s->tp.hi), (long long)s->tp.n);
    }
    fprintf(f, "%-*.*s %6lld %9s %9s %9s %9s %9s %9s %9s %6lld  %s\n", w, w, items[i].name, (long long)s->iters,
            secs(b[0], 32, s->step.mean), secs(b[1], 32, s->step.median), secs(b[2], 32, s->step.sd),
            secs(b[3], 32, s->step.min), secs(b[4], 32, s->step.max), secs(b[5], 32, s->step.p5),
            secs(b[6], 32, s->step.p95), (long long)s->warmup, tp);
  }
  fprintf(f, "\n%s — other times: mean (count); run time and its shares\n", title);
  fprintf(f, "%-*s %16s %16s %16s %9s %6s %6s %6s  %s\n", w, "", "epoch", "validation", "init", "total", "init",
          "epochs", "valid.", "slowest rank (compute)");
  for (int i = 0; i < n; i++) {
    const struct pit_summary *s = &items[i].sum;
    char ep[64], va[64], in[64], slow[192];
    snprintf(ep, sizeof ep, "%s (%lld)", secs(b[0], 32, s->epoch.mean), (long long)s->epoch.n);
    snprintf(va, sizeof va, "%s (%lld)", secs(b[1], 32, s->validation.mean), (long long)s->validation.n);
    snprintf(in, sizeof in, "%s (%lld)", secs(b[2], 32, s->init.mean), (long long)s->init.n);
    if (s->slow_rank < 0)
      snprintf(slow, sizeof slow, "-");
    else if (s->nranks == 1)
      snprintf(slow, sizeof slow, "one rank");
    else
      snprintf(slow, sizeof slow, "rank %d: %s, +%.1f%% over the fastest; wait %s%s%s%s%s", s->slow_rank,
               secs(b[3], 32, s->slow_compute_s), 100 * s->slow_excess, pct(b[4], 32, s->wait_share),
               s->shares[0] ? "; shares " : "", s->shares, s->shares[0] ? " after " : "",
               s->shares[0] ? rebal(b[5], 32, s->rebalances) : "");
    fprintf(f, "%-*.*s %16s %16s %16s %9s %6s %6s %6s  %s\n", w, w, items[i].name, ep, va, in,
            secs(b[5], 32, s->total_s), pct(b[6], 32, s->init_share), pct(b[7], 32, s->epoch_share),
            pct(b[8], 32, s->validation_share), slow);
  }
  fputc('\n', f);
}

static void free_ctx(struct ctx *c) {
  for (int i = 0; i < c->nruns; i++) {
    pit_series_release(&c->runs[i].series);
    pit_summary_release(&c->runs[i].sum);
  }
  for (int i = 0; i < c->ngroups; i++) {
    pit_series_release(&c->groups[i].series);
    pit_summary_release(&c->groups[i].sum);
  }
  free(c->runs);
  free(c->groups);
}

int pit_cmd_summary(int argc, char **argv) {
  const char *db = NULL;
  const char *events[MAX_EVENT_FILES];
  int nevents = 0;
  enum fmt fmt = FMT_TABLE;
  char *group_spec = NULL;
  static const struct option opts[] = {{"db", required_argument, 0, 'd'},
                                       {"events", required_argument, 0, 'e'},
                                       {"group-by", required_argument, 0, 'g'},
                                       {"format", required_argument, 0, 'f'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  optind = 1;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (o) {
    case 'd':
      db = optarg;
      break;
    case 'e':
      if (nevents == MAX_EVENT_FILES)
        return pit_cli_usage("summary: at most %d --events files", MAX_EVENT_FILES);
      events[nevents++] = optarg;
      break;
    case 'g':
      group_spec = optarg;
      break;
    case 'f':
      if (strcmp(optarg, "table") == 0)
        fmt = FMT_TABLE;
      else if (strcmp(optarg, "csv") == 0)
        fmt = FMT_CSV;
      else if (strcmp(optarg, "json") == 0)
        fmt = FMT_JSON;
      else
        return pit_cli_usage("summary: --format must be table, csv or json (not '%s')", optarg);
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      return pit_cli_usage("summary: unknown option or missing value: '%s' (see 'pitstop summary --help')",
                           argv[optind - 1]);
    }
  }
  if (db && nevents)
    return pit_cli_usage("summary: give either --db or --events, not both");
  struct ctx c;
  memset(&c, 0, sizeof c);
  char gbuf[512];
  snprintf(gbuf, sizeof gbuf, "%s", group_spec ? group_spec : "model,batch,ranks,nodes,itype,threads");
  for (char *save = NULL, *tok = strtok_r(gbuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!*tok)
      continue;
    if (c.ngfields == MAX_GROUP_FIELDS)
      return pit_cli_usage("summary: at most %d --group-by fields", MAX_GROUP_FIELDS);
    c.gfields[c.ngfields++] = tok;
  }
  if (c.ngfields == 0)
    return pit_cli_usage("summary: --group-by needs at least one field");

  char **only = argv + optind;
  int nonly = argc - optind;
  int rc = 0;
  long bad = 0;
  const char *src = db ? db : PIT_STORE_DEFAULT_PATH;
  if (nevents) {
    for (int i = 0; i < nevents && !rc; i++)
      rc = read_events(&c, events[i], only, nonly, &bad);
    if (bad > 10)
      fprintf(stderr, "pitstop: warning: %ld malformed lines skipped in all\n", bad);
    for (int i = 0; i < nonly && !rc; i++) {
      int found = 0;
      for (int k = 0; k < c.nruns && !found; k++)
        found = strcmp(c.runs[k].name, only[i]) == 0;
      if (!found) {
        fprintf(stderr, "pitstop: no run named '%s' in the --events files\n", only[i]);
        rc = 1;
      }
    }
  } else {
    rc = read_store(&c, src, only, nonly);
  }
  if (!rc && c.nruns == 0) {
    if (nevents)
      fprintf(stderr, "pitstop: no records in the --events file%s%s\n", nevents > 1 ? "s" : "",
              bad ? " that could be read" : "");
    else
      fprintf(stderr, "pitstop: '%s' holds no runs\npitstop: hint: fill it with 'pitstop train --db %s' or "
                      "'pitstop parse --db %s'\n", src, src, src);
    rc = 1;
  }
  for (int i = 0; i < c.nruns && !rc; i++) {
    struct item *it = &c.runs[i];
    it->cfg = it->series.nruns ? it->series.runs[0].cfg : it->cfg;
    it->config = it->series.nruns ? it->series.runs[0].config : NULL;
    struct pit_err e = {0};
    if (pit_series_summarize(&it->series, &it->sum, &e))
      rc = pit_cli_fail(&e);
  }
  if (!rc && make_groups(&c)) {
    fprintf(stderr, "pitstop: out of memory\n");
    rc = 1;
  }
  for (int i = 0; i < c.ngroups && !rc; i++) {
    struct pit_err e = {0};
    if (pit_series_summarize(&c.groups[i].series, &c.groups[i].sum, &e))
      rc = pit_cli_fail(&e);
  }
  if (!rc) {
    if (fmt == FMT_JSON) {
      fputs("[\n", stdout);
      for (int i = 0; i < c.nruns; i++) {
        json_item(stdout, &c, &c.runs[i], 0);
        fputs(",\n", stdout);
      }
      for (int i = 0; i < c.ngroups; i++) {
        json_item(stdout, &c, &c.groups[i], 1);
        fputs(i + 1 < c.ngroups ? ",\n" : "\n", stdout);
      }
      fputs("]\n", stdout);
    } else if (fmt == FMT_CSV) {
      csv_header(stdout);
      for (int i = 0; i < c.nruns; i++)
        csv_item(stdout, &c.runs[i], 0);
      for (int i = 0; i < c.ngroups; i++)
        csv_item(stdout, &c.groups[i], 1);
    } else {
      table(stdout, c.runs, c.nruns, "runs");
      char gtitle[600];
      if (group_spec)
        snprintf(gtitle, sizeof gtitle, "groups by %s", group_spec);
      else
        snprintf(gtitle, sizeof gtitle, "configurations");
      table(stdout, c.groups, c.ngroups, gtitle);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "pitstop: cannot write the summary to standard output\n");
      rc = 1;
    }
  }
  free_ctx(&c);
  return rc;
}
