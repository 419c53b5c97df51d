/* pitstop/record.h — the one record type that flows through pitstop.
 *
 * A record is one JSON object per line (JSON Lines), as defined in docs/records.md
 * (from DESIGN.md). Every record has "type", "run", "gen", "t". Fields that a
 * record does not carry are NaN (doubles) or -1 (integers) in the struct and are
 * omitted from the JSON. Per-rank arrays have length nranks (1 for one rank).
 *
 * Invariants: writing a record and reading it back yields an equal record
 * (doubles are written with %.17g, or %.9g for times, which round-trip times to
 * the nanosecond). The reader never crashes on any input: a malformed line is
 * reported with its file:line.
 */
#ifndef PITSTOP_RECORD_H
#define PITSTOP_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include "pitstop/util.h"

enum pit_rec_type {
  PIT_REC_NONE = 0,
  PIT_REC_INIT,
  PIT_REC_ITER,
  PIT_REC_VALIDATION,
  PIT_REC_CHECKPOINT,
  PIT_REC_EPOCH,
  PIT_REC_NODE,
  PIT_REC_DECISION,
  PIT_REC_END,       /* end of a run/generation: total_s, status */
  PIT_REC_NTYPES
};

#define PIT_MAX_LOSSES 6
#define PIT_NAME_MAX 64

struct pit_record {
  enum pit_rec_type type;
  char run[PIT_NAME_MAX];   /* run id */
  int gen;                  /* generation, 0-based */
  double t;                 /* seconds since run start (monotonic) */
  int rank;                 /* -1: record covers all ranks; >= 0: one rank's view (foreign logs) */

  /* iter */
  int64_t epoch, iter, step, batch;
  double step_s, data_s;
  int nranks;               /* length of compute_s / wait_s; 0 if absent */
  double *compute_s;        /* (nranks) owned by the record */
  double *wait_s;           /* (nranks) owned by the record */
  double loss;              /* scalar loss, NaN if absent or if named losses are used */
  int nlosses;              /* named losses (GAN: "d", "g") */
  char loss_name[PIT_MAX_LOSSES][16];
  double loss_val[PIT_MAX_LOSSES];

  /* init */
  double init_s, rdzv_s;
  int ranks, nodes;
  char *config;             /* JSON object text (model, batch, threads, itype, ...), owned; NULL if absent */

  /* validation / checkpoint / epoch / end */
  double val_s, ckpt_s, epoch_s, total_s;
  double accuracy;
  char *path;               /* checkpoint path, owned; NULL if absent */
  int64_t bytes;

  /* node */
  char action[16];          /* start|ready|stop|lost */
  char node[PIT_NAME_MAX];
  char itype[PIT_NAME_MAX];
  double price_h;

  /* decision: the whole object is kept as JSON text (controller-defined) */
  char *detail;             /* owned; NULL if absent */
};

/* Sets every field to "absent" (NaN / -1 / NULL), type NONE. */
void pit_record_init(struct pit_record *r);
/* Frees owned arrays/strings and re-initialises. */
void pit_record_release(struct pit_record *r);
/* Allocates compute_s and wait_s of length n (NaN-filled). */
int pit_record_set_ranks(struct pit_record *r, int n);
/* Deep copy. */
int pit_record_copy(struct pit_record *dst, const struct pit_record *src);

const char *pit_rec_type_name(enum pit_rec_type t);
enum pit_rec_type pit_rec_type_parse(const char *name);

/* Formats r as one JSON line (with trailing '\n') into buf; returns bytes written
 * or a negative error. Grows *buf (malloc'd, *cap bytes) as needed. */
int pit_record_format(const struct pit_record *r, char **buf, size_t *cap);
/* Parses one JSON object (no newline needed). Returns 0, or PIT_EFORMAT with a
 * message (without file:line: the caller adds it). r must be initialised. */
int pit_record_parse(struct pit_record *r, const char *line, size_t len, struct pit_err *e);

/* ---- record sinks: a JSON Lines file or stdout ("-") ---- */
struct pit_events {
  FILE *fp;
  int owns_fp;
  char *buf;
  size_t cap;
  char *path;
};
int pit_events_open(struct pit_events *ev, const char *path, struct pit_err *e); /* "-" = stdout */
/* append=1: keep what the file holds and add after it (a resumed run). */
int pit_events_open_mode(struct pit_events *ev, const char *path, int append, struct pit_err *e);
int pit_events_write(struct pit_events *ev, const struct pit_record *r, struct pit_err *e);
int pit_events_flush(struct pit_events *ev, struct pit_err *e);
void pit_events_release(struct pit_events *ev);

/* ---- reading a JSON Lines file record by record ---- */
struct pit_record_reader {
  FILE *fp;
  int owns_fp;
  char *path;
  char *line;
  size_t cap;
  long lineno;
  long skipped;             /* blank or non-record lines skipped */
};
int pit_record_reader_open(struct pit_record_reader *rd, const char *path, struct pit_err *e);
/* Returns 1 with a record, 0 at end, negative on a malformed line ("file:line: ..."). */
int pit_record_reader_next(struct pit_record_reader *rd, struct pit_record *r, struct pit_err *e);
void pit_record_reader_release(struct pit_record_reader *rd);

#endif
