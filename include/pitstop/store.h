/* pitstop/store.h — the SQLite store of iteration records (docs/store.md).
 *
 * One database file (default ./pitstop.db) holds every record of every run, in
 * typed tables (runs, configurations, inits, iterations, iteration_ranks,
 * epochs, validations, checkpoints, nodes, decisions, ends). The schema is
 * versioned (PRAGMA user_version) and brought up to date by migrations applied
 * in order inside one transaction; a database of a newer schema than this
 * build knows is refused and never modified.
 *
 * Writing: pit_store_add() inserts through prepared statements inside a
 * transaction that is committed every `batch` records (pit_store_set_batch)
 * and at pit_store_close(). Invariant: the store is never half-written — a
 * failing add rolls back the whole open transaction (every record added since
 * the last commit) and puts the handle in a failed state in which further adds
 * return PIT_ESTATE; committed records are untouched.
 *
 * Reading: pit_store_runs() lists runs; a cursor gives a run's records back as
 * struct pit_record in the order they were added.
 */
#ifndef PITSTOP_STORE_H
#define PITSTOP_STORE_H

#include <stdint.h>

#include "pitstop/analysis.h"
#include "pitstop/record.h"
#include "pitstop/util.h"

#define PIT_STORE_DEFAULT_PATH "pitstop.db"
/* Schema version this build writes (PRAGMA user_version). */
#define PIT_STORE_SCHEMA_VERSION 3
/* Records per transaction unless pit_store_set_batch() says otherwise. */
#define PIT_STORE_DEFAULT_BATCH 50000

struct pit_store;

/* Opens (creating if missing) the database at path and migrates it to the
 * current schema. Errors: "cannot open 'path': ...", "'path': schema version N
 * is newer than this pitstop (M)". */
int pit_store_open(struct pit_store **s, const char *path, struct pit_err *e);
/* Like pit_store_open, but a missing file is an error (PIT_ENOTFOUND,
 * "cannot open 'path': No such file or directory", with a hint). For readers. */
int pit_store_open_existing(struct pit_store **s, const char *path, struct pit_err *e);
/* Records per transaction; 0 = one transaction until pit_store_close (all or
 * nothing). */
void pit_store_set_batch(struct pit_store *s, long n);
/* Free text stored in runs.source for runs first seen from now on
 * (e.g. "train", "parse:log.txt"). Copied. */
int pit_store_set_source(struct pit_store *s, const char *source, struct pit_err *e);

/* Inserts one record (any type). Records of a run not yet in the store create
 * the run; an init record sets the run's configuration. */
int pit_store_add(struct pit_store *s, const struct pit_record *r, struct pit_err *e);
/* The job context a log with no init line gave (pit_parse_stats.context, the
 * config JSON an init record would carry) becomes the configuration of run, as
 * an init record's would; nothing if the run is not in the store, already has
 * a configuration, or config is NULL or "". Within the open transaction. */
int pit_store_set_context(struct pit_store *s, const char *run, const char *config, struct pit_err *e);
/* Commits the open transaction now. */
int pit_store_commit(struct pit_store *s, struct pit_err *e);
/* Commits and closes; frees s (also on error). NULL is allowed. After a failed
 * add it returns PIT_ESTATE (the records since the last commit are not stored). */
int pit_store_close(struct pit_store *s, struct pit_err *e);
/* Rolls back the open transaction and closes; frees s. NULL is allowed. */
void pit_store_abort(struct pit_store *s);

/* Schema version of the open database. */
int pit_store_schema_version(struct pit_store *s);

/* ---- reading ---- */
struct pit_store_run {
  char name[PIT_NAME_MAX];  /* the records' "run" */
  char created[32];         /* UTC, ISO 8601, when the store first saw the run */
  char *source;             /* owned; may be NULL */
  char *config;             /* JSON object text from the init record; owned; may be NULL */
  char model[PIT_NAME_MAX]; /* configuration fields ("" / -1 if unknown); see struct pit_config */
  char itype[PIT_MEMBERSHIP_TEXT_MAX];
  struct pit_membership members; /* empty if unknown (a run without instance type) */
  int64_t batch;
  int ranks, nodes, threads;
  int64_t niters;           /* iteration records stored */
};
/* All runs, in the order they were first stored. *runs is malloc'd; free with
 * pit_store_runs_free. */
int pit_store_runs(struct pit_store *s, struct pit_store_run **runs, int *n, struct pit_err *e);
void pit_store_runs_free(struct pit_store_run *runs, int n);

struct pit_store_cursor;
/* A run's records in insertion order. PIT_ENOTFOUND if the run is not stored. */
int pit_store_cursor_open(struct pit_store *s, const char *run, struct pit_store_cursor **c,
                          struct pit_err *e);
/* Returns 1 with a record in r (r initialised by the caller; released and
 * refilled), 0 at the end, negative on error. */
int pit_store_cursor_next(struct pit_store_cursor *c, struct pit_record *r, struct pit_err *e);
void pit_store_cursor_free(struct pit_store_cursor *c);

/* ---- the run set: runs read whole, to summarize, chart or export (runset.c) ---- */

/* The one road from stored or JSON Lines records to summaries, charts and
 * exports (pitstop summary, plot, sweep's export). */

struct pit_report_run {
  char name[PIT_NAME_MAX];
  struct pit_series series;  /* this run's records */
  struct pit_summary sum;    /* filled by pit_runset_summarize */
  struct pit_config cfg;     /* from its first init record ("" / -1 if none) */
  const char *config;        /* JSON text of its init config; borrowed from series; may be NULL */
};

/* How many malformed JSON Lines lines are named one by one; the rest are counted. */
#define PIT_RUNSET_WARN_MAX 10

/* Runs in the order they were first seen. The loaders never print: a warning
 * (a malformed line skipped, a file with no record) goes to warn, when set. */
struct pit_runset {
  struct pit_report_run *runs; /* owned (n used, cap allocated) */
  int n;
  size_t cap;
  long malformed;            /* malformed JSON Lines lines skipped, over every file read */
  int nfiles;                /* JSON Lines files read */
  char store[512];           /* the store read, "" if none (named in messages) */
  const char *prefix;        /* borrowed; when set: only runs named "<prefix>-..." are read (a sweep's) */
  pit_warn_fn warn;          /* e->msg "f.jsonl:7: not valid JSON (line skipped)"; may be NULL */
  void *warn_arg;            /* borrowed, passed to warn */
};
/* pit_runset_release frees the runs and clears every field (warn and prefix too). */
void pit_runset_init(struct pit_runset *rs);
void pit_runset_release(struct pit_runset *rs);
/* Reads runs from the store at path (which must exist). only[0..nonly-1]:
 * just these runs (an unknown name is PIT_ENOTFOUND); nonly == 0: all. */
int pit_runset_load_store(struct pit_runset *rs, const char *path, char *const *only, int nonly,
                          struct pit_err *e);
/* Reads runs from a JSON Lines file; repeatable (runs accumulate). The rule
 * for a malformed line: skipped, counted in rs->malformed, and the first
 * PIT_RUNSET_WARN_MAX of all files named file:line through rs->warn. A file
 * with no record at all but lines that are not records is warned about. */
int pit_runset_load_events(struct pit_runset *rs, const char *path, char *const *only, int nonly,
                           struct pit_err *e);
/* Adds one record to its run (the run made when first seen; only and prefix
 * are not applied): for a caller that reads the records itself, such as the
 * run log's fold (pit_runlog_load_each). */
int pit_runset_add(struct pit_runset *rs, const struct pit_record *r, struct pit_err *e);
/* Reads runs from a raw training log (any format `pitstop parse` reads, JSON
 * Lines records included), parsed on the fly; repeatable. run: the id of
 * records that carry none (NULL: the file's base name, as pitstop parse);
 * itype: the instance type put in the init records' config (NULL: none).
 * Malformed lines follow the JSON Lines rule above; the parser's unrecognised
 * timing lines (file:line) go to rs->warn too. A file with no line the
 * parser knows: PIT_EFORMAT naming it. */
int pit_runset_load_log(struct pit_runset *rs, const char *path, const char *run, const char *itype,
                        char *const *only, int nonly, struct pit_err *e);
/* After loading every source: each of only[] must name a loaded run, and at
 * least one run must be there. what names the source in messages; NULL: the
 * store or the --events files loaded (with a hint for an empty store). */
int pit_runset_check(const struct pit_runset *rs, char *const *only, int nonly, const char *what,
                     struct pit_err *e);
/* Fills every run's cfg and sum. */
int pit_runset_summarize(struct pit_runset *rs, struct pit_err *e);
/* The run named name, or NULL. */
const struct pit_report_run *pit_runset_find(const struct pit_runset *rs, const char *name);

#endif
