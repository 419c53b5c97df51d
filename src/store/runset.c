/* runset.c — the one road from records to what pitstop reports: runs read
 * whole from the store or from JSON Lines files, one struct pit_series per
 * run, then summarized by the analysis module. `summary`, `plot` and sweep's
 * export and resume all load runs here (it lives in the store module so that
 * sweep, which links no charts, uses it too).
 * Invariants: a run's series holds only its own records, in the order they
 * were stored or read; a malformed JSON Lines line is skipped and counted, the
 * first PIT_RUNSET_WARN_MAX (over all files) named file:line through the warn
 * callback; an I/O error ends the load with an error; nothing is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/parse.h"
#include "pitstop/store.h"

void pit_runset_init(struct pit_runset *rs) { memset(rs, 0, sizeof *rs); }

void pit_runset_release(struct pit_runset *rs) {
  for (int i = 0; i < rs->n; i++) {
    pit_series_release(&rs->runs[i].series);
    pit_summary_release(&rs->runs[i].sum);
  }
  free(rs->runs);
  memset(rs, 0, sizeof *rs);
}

static int selected(const struct pit_runset *rs, const char *name, char *const *only, int nonly) {
  if (rs->prefix && rs->prefix[0]) {
    size_t n = strlen(rs->prefix);
    if (strncmp(name, rs->prefix, n) != 0 || name[n] != '-')
      return 0;
  }
  for (int i = 0; i < nonly; i++)
    if (strcmp(only[i], name) == 0)
      return 1;
  return nonly == 0;
}

const struct pit_report_run *pit_runset_find(const struct pit_runset *rs, const char *name) {
  for (int i = rs->n - 1; i >= 0; i--)
    if (strcmp(rs->runs[i].name, name) == 0)
      return &rs->runs[i];
  return NULL;
}

/* The run named name, appended if new; NULL when out of memory. */
static struct pit_report_run *run_of(struct pit_runset *rs, const char *name) {
  struct pit_report_run *found = (struct pit_report_run *)pit_runset_find(rs, name);
  if (found)
    return found;
  if (PIT_GROW(rs->runs, rs->n + 1, rs->cap))
    return NULL;
  struct pit_report_run *run = &rs->runs[rs->n++];
  memset(run, 0, sizeof *run);
  snprintf(run->name, sizeof run->name, "%s", name);
  pit_series_init(&run->series);
  pit_config_clear(&run->cfg);
  return run;
}

int pit_runset_add(struct pit_runset *rs, const struct pit_record *r, struct pit_err *e) {
  struct pit_report_run *run = run_of(rs, r->run);
  if (!run)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  return pit_series_add(&run->series, r, e);
}

static void warn(const struct pit_runset *rs, const char *msg) {
  struct pit_err w = {0};
  if (!rs->warn)
    return;
  pit_err_set(&w, PIT_EFORMAT, "%s", msg);
  rs->warn(rs->warn_arg, &w);
}

/* The job context of a log with no init line (its parser's, or what the store
 * kept of it) as the config of run's generations that have none. */
static int adopt_context(struct pit_report_run *run, const char *context, struct pit_err *e) {
  struct pit_series *sr = &run->series;
  for (int j = 0; context && context[0] && j < sr->nruns; j++) {
    if (sr->runs[j].config)
      continue;
    if (!(sr->runs[j].config = strdup(context)))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    struct pit_record ini;
    pit_record_init(&ini);
    ini.type = PIT_REC_INIT;
    ini.config = sr->runs[j].config;
    pit_config_from_record(&sr->runs[j].cfg, &ini);
    ini.config = NULL; /* owned by the series */
    pit_record_release(&ini);
  }
  return 0;
}

int pit_runset_load_store(struct pit_runset *rs, const char *path, char *const *only, int nonly,
                          struct pit_err *e) {
  snprintf(rs->store, sizeof rs->store, "%s", path);
  struct pit_store *s;
  int rc = pit_store_open_existing(&s, path, e);
  if (rc)
    return rc;
  struct pit_store_run *runs = NULL;
  int n = 0;
  rc = pit_store_runs(s, &runs, &n, e);
  for (int i = 0; i < nonly && !rc; i++) {
    int k = 0;
    while (k < n && strcmp(runs[k].name, only[i]) != 0)
      k++;
    if (k == n) {
      rc = pit_err_set(e, PIT_ENOTFOUND, "'%s': no run named '%s'", path, only[i]);
      pit_err_hint(e, "'pitstop summary --db %s' lists every run", path);
    }
  }
  struct pit_record r;
  pit_record_init(&r);
  for (int k = 0; k < n && !rc; k++) {
    if (!selected(rs, runs[k].name, only, nonly))
      continue;
    struct pit_store_cursor *cur = NULL;
    rc = pit_store_cursor_open(s, runs[k].name, &cur, e);
    int got = 0;
    while (!rc && (got = pit_store_cursor_next(cur, &r, e)) == 1)
      rc = pit_runset_add(rs, &r, e);
    if (!rc && got < 0)
      rc = got;
    pit_store_cursor_free(cur);
    /* a run parsed from a log with no init line: its config is the context
     * pitstop parse --db kept (pit_store_set_context) */
    struct pit_report_run *run = (struct pit_report_run *)pit_runset_find(rs, runs[k].name);
    if (!rc && run)
      rc = adopt_context(run, runs[k].config, e);
  }
  pit_record_release(&r);
  pit_store_runs_free(runs, n);
  pit_store_close(s, NULL);
  return rc;
}

int pit_runset_load_events(struct pit_runset *rs, const char *path, char *const *only, int nonly,
                           struct pit_err *e) {
  struct pit_record_reader rd;
  int rc = pit_record_reader_open(&rd, path, e);
  if (rc)
    return rc;
  rs->nfiles++;
  struct pit_record r;
  pit_record_init(&r);
  long nrec = 0;
  char msg[sizeof e->msg + 32];
  for (;;) {
    int got = pit_record_reader_next(&rd, &r, e);
    if (got == 0)
      break;
    if (got == PIT_EFORMAT) { /* the rule for a malformed line */
      if (++rs->malformed <= PIT_RUNSET_WARN_MAX) {
        snprintf(msg, sizeof msg, "%s (line skipped)", e->msg);
        warn(rs, msg);
      }
      continue;
    }
    if (got < 0) { /* an I/O error ends the file */
      rc = got;
      break;
    }
    if (!selected(rs, r.run, only, nonly))
      continue;
    if ((rc = pit_runset_add(rs, &r, e)) != 0)
      break;
    nrec++;
  }
  if (!rc && nrec == 0 && rd.skipped > 0) {
    snprintf(msg, sizeof msg, "'%s': no records (%ld lines that are not records)", path, rd.skipped);
    warn(rs, msg);
  }
  pit_record_release(&r);
  pit_record_reader_release(&rd);
  return rc;
}

/* ---- raw training logs, parsed on the fly (the parse module) ---- */

struct log_ctx {
  struct pit_runset *rs;
  char *const *only;
  int nonly;
  long records;
};

static int log_emit(void *ctx, const struct pit_record *r, struct pit_err *e) {
  struct log_ctx *c = ctx;
  if (!selected(c->rs, r->run, c->only, c->nonly))
    return 0;
  c->records++;
  return pit_runset_add(c->rs, r, e);
}

/* malformed lines follow the JSON Lines rule (counted, the first few named);
 * unrecognised timing lines are named as the parser reports them */
static void log_warn(void *ctx, const struct pit_err *w) {
  struct log_ctx *c = ctx;
  if (w->code == PIT_EFORMAT && ++c->rs->malformed > PIT_RUNSET_WARN_MAX)
    return;
  warn(c->rs, w->msg);
}

int pit_runset_load_log(struct pit_runset *rs, const char *path, const char *run, const char *itype,
                        char *const *only, int nonly, struct pit_err *e) {
  char name[PIT_NAME_MAX];
  if (!run || !run[0]) {
    pit_parse_run_name(path, name, sizeof name);
    run = name;
  }
  struct log_ctx c = {rs, only, nonly, 0};
  struct pit_parse_stats st;
  int n_before = rs->n;
  int rc = pit_parse_file_itype(path, PIT_PARSE_AUTO, run, 0, itype, log_emit, log_warn, &c, &st, e);
  if (rc)
    return rc;
  rs->nfiles++;
  /* a log with no init line (SerodioJ's): its job context — batch, ranks, the
   * iterations per epoch of "i/L", what a partial log needs to know how long
   * its epoch is — reached no record; it becomes the config of its runs */
  for (int k = n_before; k < rs->n; k++)
    if ((rc = adopt_context(&rs->runs[k], st.context, e)))
      return rc;
  if (st.known - st.merged == 0) {
    pit_err_set(e, PIT_EFORMAT, "'%s': no line of it is a record or a log line pitstop parse reads (%ld lines)",
                path, st.lines);
    pit_err_hint(e, "docs/parse.md lists the formats pitstop parse reads");
    return PIT_EFORMAT;
  }
  return 0;
}

int pit_runset_check(const struct pit_runset *rs, char *const *only, int nonly, const char *what,
                     struct pit_err *e) {
  const char *files = rs->nfiles > 1 ? "s" : "";
  for (int i = 0; i < nonly; i++)
    if (!pit_runset_find(rs, only[i])) {
      if (what)
        return pit_err_set(e, PIT_ENOTFOUND, "%s: no run named '%s'", what, only[i]);
      if (rs->store[0])
        return pit_err_set(e, PIT_ENOTFOUND, "'%s': no run named '%s'", rs->store, only[i]);
      return pit_err_set(e, PIT_ENOTFOUND, "no run named '%s' in the --events files", only[i]);
    }
  if (rs->n > 0)
    return 0;
  if (what)
    return pit_err_set(e, PIT_ENOTFOUND, "%s holds no runs", what);
  if (!rs->store[0])
    return pit_err_set(e, PIT_ENOTFOUND, "the --events file%s hold%s no runs (no records%s)", files,
                       rs->nfiles > 1 ? "" : "s", rs->malformed ? " that could be read" : "");
  pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no runs", rs->store);
  pit_err_hint(e, "fill it with 'pitstop train --db %s' or 'pitstop parse --db %s'", rs->store, rs->store);
  return PIT_ENOTFOUND;
}

int pit_runset_summarize(struct pit_runset *rs, struct pit_err *e) {
  for (int i = 0; i < rs->n; i++) {
    struct pit_report_run *run = &rs->runs[i];
    if (run->series.nruns > 0) {
      run->cfg = run->series.runs[0].cfg;
      run->config = run->series.runs[0].config;
    }
    pit_summary_release(&run->sum);
    int rc = pit_series_summarize(&run->series, &run->sum, e);
    if (rc)
      return rc;
  }
  return 0;
}
