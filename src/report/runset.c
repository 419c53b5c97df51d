/* runset.c — the runs a chart or an export is drawn from: read whole from the
 * store or from JSON Lines files, one struct pit_series per run, then
 * summarized by the analysis module. Invariant: a run's series holds only its
 * own records, in the order they were stored or read. */
#include <stdlib.h>
#include <string.h>

#include "pitstop/report.h"
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

static int selected(const char *name, char *const *only, int nonly) {
  for (int i = 0; i < nonly; i++)
    if (strcmp(only[i], name) == 0)
      return 1;
  return nonly == 0;
}

/* The run named name, appended if new; NULL when out of memory. */
static struct pit_report_run *run_of(struct pit_runset *rs, const char *name) {
  for (int i = rs->n - 1; i >= 0; i--)
    if (strcmp(rs->runs[i].name, name) == 0)
      return &rs->runs[i];
  if (rs->n == rs->cap) {
    int cap = rs->cap ? 2 * rs->cap : 8;
    struct pit_report_run *r = realloc(rs->runs, sizeof *r * (size_t)cap);
    if (!r)
      return NULL;
    rs->runs = r;
    rs->cap = cap;
  }
  struct pit_report_run *run = &rs->runs[rs->n++];
  memset(run, 0, sizeof *run);
  snprintf(run->name, sizeof run->name, "%s", name);
  pit_series_init(&run->series);
  pit_config_clear(&run->cfg);
  return run;
}

static int add_record(struct pit_runset *rs, const struct pit_record *r, struct pit_err *e) {
  struct pit_report_run *run = run_of(rs, r->run);
  if (!run)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  return pit_series_add(&run->series, r, e);
}

int pit_runset_load_store(struct pit_runset *rs, const char *path, char *const *only, int nonly,
                          struct pit_err *e) {
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
    if (!selected(runs[k].name, only, nonly))
      continue;
    struct pit_store_cursor *cur = NULL;
    rc = pit_store_cursor_open(s, runs[k].name, &cur, e);
    int got = 0;
    while (!rc && (got = pit_store_cursor_next(cur, &r, e)) == 1)
      rc = add_record(rs, &r, e);
    if (!rc && got < 0)
      rc = got;
    pit_store_cursor_free(cur);
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
  struct pit_record r;
  pit_record_init(&r);
  int got;
  while ((got = pit_record_reader_next(&rd, &r, e)) == 1)
    if (selected(r.run, only, nonly) && (rc = add_record(rs, &r, e)) != 0)
      break;
  if (!rc && got < 0)
    rc = got;
  pit_record_release(&r);
  pit_record_reader_release(&rd);
  return rc;
}

int pit_runset_check(const struct pit_runset *rs, char *const *only, int nonly, const char *what,
                     struct pit_err *e) {
  for (int i = 0; i < nonly; i++) {
    int k = 0;
    while (k < rs->n && strcmp(rs->runs[k].name, only[i]) != 0)
      k++;
    if (k == rs->n)
      return pit_err_set(e, PIT_ENOTFOUND, "%s: no run named '%s'", what, only[i]);
  }
  if (rs->n == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "%s holds no runs", what);
  return 0;
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
