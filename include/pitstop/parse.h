/* pitstop/parse.h — translating training logs into pitstop records (docs/parse.md).
 *
 * A parser reads a log line by line and turns every line it knows into a
 * struct pit_record (or folds it into the record it repeats), in the order of
 * the log. Line kinds are recognised per line (format AUTO) or restricted to one
 * family: pitstop's own JSON Lines and `PITSTOP {json}` lines, seed 004's
 * SageMaker log lines, seed 002's CSV, the DCGAN course-run variants, and the
 * `[PI-INFO]` lines of the Paramount Iterations C library. A file (not a
 * stream) may also be a YAML timing file: per instance type, per rank, lists
 * of iteration and epoch times (andrefz's times.yaml); it gives one run per type.
 * Lines no named format reads go (format AUTO) to a key/value reader for any
 * other dialect ("step=12/500 step_time=45ms", "| epoch 3 | 45.1 ms/batch |",
 * progress-only lines such as "[e/N][i/L] Loss_D: ..."), and a user's template
 * (pit_parser_set_pattern) is tried first. A line holding several lines' text
 * (two ranks' lines glued, tqdm's '\r' updates) is split into parts, each read
 * on its own; a part that is not whole is counted and reported (stats.cut).
 *
 * Invariants: the parser never crashes and never allocates per line for log
 * lines (JSON lines go through pit_record_parse); a line it does not know is
 * skipped and counted; a known line that is malformed (e.g. "It. time: abc") is
 * reported as "file:line: reason" and counted, and parsing goes on. Records are
 * handed to the caller's emit callback; the parser owns them (copy what you keep).
 */
#ifndef PITSTOP_PARSE_H
#define PITSTOP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "pitstop/record.h"
#include "pitstop/util.h"

enum pit_parse_format {
  PIT_PARSE_AUTO = 0,  /* every family, decided per line */
  PIT_PARSE_JSONL,     /* {json} records and PITSTOP {json} lines */
  PIT_PARSE_SAGEMAKER, /* seed 004 */
  PIT_PARSE_CSV,       /* seed 002: header total,t0,...,tN then rows */
  PIT_PARSE_DCGAN,     /* the DCGAN course-run variants */
  PIT_PARSE_PI,        /* [PI-INFO] lines */
  PIT_PARSE_YAML,      /* a YAML timing file, read whole (files only; AUTO detects it by content) */
  PIT_PARSE_NFORMATS
};

/* "auto", "jsonl", "sagemaker", "csv", "dcgan", "pi", "yaml" -> 0 and *f; else PIT_EARG. */
int pit_parse_format_from_name(const char *name, enum pit_parse_format *f);
const char *pit_parse_format_name(enum pit_parse_format f);

/* What happened to the lines of one input. Every line is exactly one of
 * records+merged+info (known), skipped or malformed. */
struct pit_parse_stats {
  long lines;      /* lines read (a last line without '\n' counts) */
  long known;      /* lines understood */
  long skipped;    /* blank or unknown lines */
  long malformed;  /* known lines that could not be read */
  long merged;     /* known lines folded into the record of the line before (same iteration) */
  long records;    /* records emitted (one CSV row gives several) */
  long nul_lines;  /* lines holding a NUL byte (a binary file has many) */
  long unrecognised; /* skipped lines that look like timing lines (a number next to
                        "time" or "took") but match no format; the first three go to warn */
  long generic;    /* parts of lines read by the key/value reader (docs/parse.md) */
  long pattern;    /* parts of lines read by --pattern */
  long progress;   /* records with progress (epoch, iteration) but no time: the reader of
                      a live run times them by their arrival */
  long glued;      /* lines that held more than one line's text (two ranks' lines glued
                      together) and were split: each part read on its own */
  long cut;        /* parts of glued lines that are not whole (a line cut by another
                      glued into it): counted and reported (warn), never read */
  char context[320]; /* the job context the log gave — batch, ranks, iterations per epoch
                        ("i/L"), instance type — as the config JSON object an init record gets;
                        "" if none. Filled by pit_parse_file*: for runs of a log with no init
                        line (the records carry no config then; pit_runset_load_log uses it) */
};

/* Called for each record, in log order. A non-zero return stops parsing and is
 * returned by the parser (set e). */
typedef int (*pit_parse_emit_fn)(void *ctx, const struct pit_record *r, struct pit_err *e);
/* Called for each malformed line with "file:line: reason" in e->msg (code
 * PIT_EFORMAT), and for the first three unrecognised timing lines (code
 * PIT_ENOTFOUND, "file:line: looks like a timing line but matches no format"). */
typedef void (*pit_parse_warn_fn)(void *ctx, const struct pit_err *e);

struct pit_parser;

/* ---- one line at a time, explained (`pitstop parse --explain`, the controller) ----
 * A line may hold several parts: lines of two ranks glued together, tqdm's '\r'
 * updates. Each part is read on its own and explained by one call. */
enum pit_parse_use {
  PIT_USE_RECORD = 0, /* gave a record (rec) */
  PIT_USE_MERGED,     /* folded into the record of the line before (rec: that record) */
  PIT_USE_CONTEXT,    /* taught the job's context, no record (info says what) */
  PIT_USE_SKIPPED,    /* not used (why says why) */
  PIT_USE_MALFORMED,  /* claimed by a reader, but a value could not be read (why) */
  PIT_USE_CUT         /* part of a line another line was glued into: not whole, not read */
};
struct pit_parse_part {
  long line;          /* 1-based line number */
  int part;           /* 0: the line's first part; 1, 2, ...: parts split off it */
  const char *text;   /* the part, not NUL-terminated */
  size_t len;
  enum pit_parse_use use;
  const char *reader; /* "jsonl", "dcgan", "sagemaker", "csv", "pi", "kv" (the key/value
                         reader), "pattern"; NULL when no reader took it */
  const char *why;    /* SKIPPED, MALFORMED, CUT: the reason ("no number", "no known key",
                         "duplicate of the line before", ...); "" otherwise */
  const char *info;   /* CONTEXT: what the line taught ("64 iterations per epoch"); "" otherwise */
  const struct pit_record *rec; /* RECORD, MERGED: the record as it stands; NULL otherwise */
  int epoch_start;    /* the line says that epoch `epoch_started` begins (no iteration of it done) */
  int64_t epoch_started;
};
typedef void (*pit_parse_explain_fn)(void *ctx, const struct pit_parse_part *part);

/* run: run id given to records that carry none (JSON records keep their own
 * unless force_run); file: name used in messages. */
int pit_parser_new(struct pit_parser **p, enum pit_parse_format f, const char *run, int force_run,
                   const char *file, pit_parse_emit_fn emit, pit_parse_warn_fn warn, void *ctx,
                   struct pit_err *e);
/* One line, without its '\n' (a trailing '\r' is ignored). Returns 0, or the
 * emit callback's error. Malformed lines are not errors (they go to warn). */
int pit_parser_line(struct pit_parser *p, const char *line, size_t len, struct pit_err *e);
/* Emits the record still held for merging. Call once at the end. */
int pit_parser_finish(struct pit_parser *p, struct pit_err *e);
const struct pit_parse_stats *pit_parser_stats(const struct pit_parser *p);
void pit_parser_free(struct pit_parser *p);
/* The job's length as the log has told it so far (a live reader asks after each
 * line): *epochs the N of "e/N" (or "epochs: N"), *iters the L of "i/L" (or
 * "Steps: L"): iterations per epoch, or the job's iterations when the log names no
 * epoch (then *epochs is -1); -1 each when unknown. *samples (may be NULL): 1 when
 * the counts are samples ("[n/N (p%)]" with no batch size known), else 0. */
void pit_parser_job_length(const struct pit_parser *p, int64_t *epochs, int64_t *iters, int *samples);
/* fn is called for every part of every later line, after its records were handed
 * to emit (a record still held for merging is in part->rec already). NULL: off. */
void pit_parser_set_explain(struct pit_parser *p, pit_parse_explain_fn fn, void *ctx);
/* A template for lines no named format reads, tried before every other reader
 * (docs/parse.md): literal text (a run of blanks matches any run, or none) and
 * the fields {rank} {epoch} {epochs} {iter} {iters} {step} {step_s} {step_ms}
 * {epoch_s} {batch} {loss} {elapsed} and {*} (any text). It matches anywhere in
 * a line. PIT_EARG with a message for a bad template (unknown field, '{' not
 * closed, two fields with nothing between them). Before the first line. */
int pit_parser_set_pattern(struct pit_parser *p, const char *tmpl, struct pit_err *e);

/* Parses a whole file ("-" = stdin) in big reads, any line length. Fills
 * *stats. Errors: cannot open/read (PIT_EIO), or the emit callback's error.
 * A file with nothing usable is NOT an error here; the caller decides (see
 * stats.known - stats.merged). */
int pit_parse_file(const char *path, enum pit_parse_format f, const char *run, int force_run,
                   pit_parse_emit_fn emit, pit_parse_warn_fn warn, void *ctx,
                   struct pit_parse_stats *stats, struct pit_err *e);

/* Default run id of a log file: its base name without the extension, cut to
 * PIT_NAME_MAX-1 bytes ("-" gives "stdin"). */
void pit_parse_run_name(const char *path, char *out, size_t cap);

/* pit_parse_file, and the instance type itype (NULL or "": unknown; letters,
 * digits and "._-" only) goes into the config of the init records, with the
 * job context the log gives: {"batch": global batch, "batch_per_rank",
 * "ranks", "iters_per_epoch" (L of "iteration: i/L"), "itype"}. */
int pit_parse_file_itype(const char *path, enum pit_parse_format f, const char *run, int force_run,
                         const char *itype, pit_parse_emit_fn emit, pit_parse_warn_fn warn, void *ctx,
                         struct pit_parse_stats *stats, struct pit_err *e);
/* Same for a stream parser (before its first line). PIT_EARG for a bad name. */
int pit_parser_set_itype(struct pit_parser *p, const char *itype, struct pit_err *e);
/* The batch size per rank the user says the job used (-1: none), for logs that
 * do not record it: it is what the records get unless the log gives its own
 * (Namespace(batch_size=B)); init configs then say "batch_from":"--batch-size".
 * Before the first line. PIT_EARG unless -1 or 1..1e12. */
int pit_parser_set_batch(struct pit_parser *p, int64_t per_rank, struct pit_err *e);
/* The ranks per node the user says the job ran (-1: none), as no log records
 * it: the init configs get "nodes" = ceil(ranks / rpn) (and
 * "nodes_from":"--ranks-per-node"), so the run is priced on that many nodes;
 * without it a run's ranks count as one node. Before the first line.
 * PIT_EARG unless -1 or 1..1e6. */
int pit_parser_set_ranks_per_node(struct pit_parser *p, int rpn, struct pit_err *e);

/* A whole YAML timing document buf[0..len) through a new parser p (instead of
 * lines): counts its lines, checks all of it, then emits one run
 * "<run>.<type>" per instance type. A bad document is one "file:line: reason"
 * error (PIT_EFORMAT), no record, and all its lines counted malformed. */
int pit_parser_yaml(struct pit_parser *p, const char *buf, size_t len, struct pit_err *e);

/* Everything pit_parse_file_opts takes besides the callbacks. */
struct pit_parse_opts {
  enum pit_parse_format format;
  const char *run;         /* NULL: pit_parse_run_name(path); not owned */
  int force_run;
  const char *itype;       /* NULL or "": unknown; not owned */
  int64_t batch_per_rank;  /* pit_parser_set_batch's; -1 none */
  int ranks_per_node;      /* pit_parser_set_ranks_per_node's; -1 none */
  const char *pattern;     /* pit_parser_set_pattern's; NULL none */
  pit_parse_explain_fn explain; /* pit_parser_set_explain's; NULL none */
  void *explain_ctx;
};
/* pit_parse_file_itype with a given batch too. A file whose start is a YAML
 * timing file (format AUTO or YAML) is read whole: one run "<run>.<type>" per
 * instance type, and any fault in it is the error ("file:line: reason",
 * PIT_EFORMAT) with no record emitted. */
int pit_parse_file_opts(const char *path, const struct pit_parse_opts *o, pit_parse_emit_fn emit,
                        pit_parse_warn_fn warn, void *ctx, struct pit_parse_stats *stats, struct pit_err *e);

/* The instance type a log's path names, one of names[0..n) (a catalog's
 * types): a path component that is one ("…/m4.xlarge/rank0.out"), a token of
 * one between '-' or '_' ("cluster-t2.small-2x"), two tokens "a" "b" as "a.b"
 * ("t2_small_1x"), or seed 004's "a-N" for "a.Nxlarge" ("result-p2-8-256-e0.txt":
 * p2.8xlarge; "p2-1": p2.xlarge). Searched from the file name upwards. Returns
 * 1 with the name in out, 0 (out "") when no component names a given type. */
int pit_parse_itype_from_path(const char *path, const char *const *names, int n, char *out, size_t cap);
/* Run id of a per-rank file under --job-per-dir: its directory's name
 * ("a/m5.large/rank0.out" -> "m5.large"); a file without a directory gets
 * pit_parse_run_name's id. */
void pit_parse_dir_run_name(const char *path, char *out, size_t cap);

/* Parses one JSON record with the same result as pit_record_parse (record or
 * error), by a hand-written fast path for the common shape and cJSON otherwise. */
int pit_parse_json_record(struct pit_record *r, const char *line, size_t len, struct pit_err *e);

/* ---- fast JSON Lines output (same bytes as pit_record_format) ---- */

/* Upper bound of the bytes pit_parse_json() writes for r. */
size_t pit_parse_json_bound(const struct pit_record *r);
/* Writes r as one JSON line (with '\n') into out, which has room for
 * pit_parse_json_bound(r) bytes; returns the bytes written. */
size_t pit_parse_json(const struct pit_record *r, char *out);
/* "%.9g" of v into out (>= 32 bytes), without printf in the common range;
 * returns the length. Identical to snprintf("%.9g"). */
int pit_parse_g9(double v, char *out);

#endif
