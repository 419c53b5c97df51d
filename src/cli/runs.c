/* runs.c — the runs `summary` and `plot` report on, taken the same way by
 * both: --db PATH or --events FILE (repeatable), run names, then the report
 * module's one loader (src/store/runset.c), whose warnings (malformed lines
 * skipped, files without records) are printed here, "pitstop: warning: ...".
 * Invariant: on success every requested run is loaded and summarized. */
#include <stdio.h>

#include "cli/cli.h"
#include "pitstop/report.h"
#include "pitstop/store.h"

int pit_cli_source_opt(struct pit_cli_source *src, const char *cmd, int isdb, const char *arg) {
  if (isdb) {
    src->db = arg;
    return 0;
  }
  if (src->nevents == PIT_CLI_MAX_EVENTS)
    return pit_cli_usage("%s: at most %d --events files", cmd, PIT_CLI_MAX_EVENTS);
  src->events[src->nevents++] = arg;
  return 0;
}

static void print_warning(void *arg, const struct pit_err *w) {
  (void)arg;
  pit_cli_warn("%s", w->msg);
}

int pit_cli_load_runs(struct pit_runset *rs, const struct pit_cli_source *src, const char *cmd, char *const *only,
                      int nonly) {
  if (src->db && src->nevents)
    return pit_cli_usage("%s: give either --db or --events, not both", cmd);
  struct pit_err e = {0};
  int rc = 0;
  rs->warn = print_warning;
  for (int i = 0; i < src->nevents && !rc; i++)
    rc = pit_runset_load_events(rs, src->events[i], only, nonly, &e);
  if (rs->malformed > PIT_RUNSET_WARN_MAX)
    pit_cli_warn("%ld malformed lines skipped in all", rs->malformed);
  if (!rc && !src->nevents)
    rc = pit_runset_load_store(rs, src->db ? src->db : PIT_STORE_DEFAULT_PATH, only, nonly, &e);
  if (!rc)
    rc = pit_runset_check(rs, only, nonly, NULL, &e);
  if (!rc)
    rc = pit_runset_summarize(rs, &e);
  return rc ? pit_cli_fail(&e) : 0;
}
