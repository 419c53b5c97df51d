/* store_impl.h — private to src/store: the store handle, prepared statements,
 * and helpers shared by schema.c (migrations), store.c (writing) and read.c
 * (reading). Invariant: `in_tx` is 1 exactly while a transaction opened by the
 * store is open; `failed` is set once an add rolled back and stays set. */
#ifndef PIT_STORE_IMPL_H
#define PIT_STORE_IMPL_H

#include <sqlite3.h>

#include "pitstop/store.h"

enum pit_stmt_id {
  ST_RUN_FIND,
  ST_RUN_NEW,
  ST_RUN_CONFIG,
  ST_CONF_NEW,
  ST_CONF_FIND,
  ST_MEMBER,
  ST_INIT,
  ST_ITER,
  ST_RUN_RANGE,
  ST_EPOCH,
  ST_VALIDATION,
  ST_CHECKPOINT,
  ST_NODE,
  ST_DECISION,
  ST_END,
  ST_COUNT
};

/* Iteration rows wait in a small buffer and go to SQLite PIT_STORE_ROWS at a
 * time through one multi-row INSERT (measured: fewer statement executions,
 * docs/store.md). The buffer is always flushed before a commit and before a
 * read through the same handle. */
#define PIT_STORE_ROWS 32
struct pit_iter_row {
  int64_t seq, run_id, epoch, iter, step, batch;
  int gen, rank, nranks;
  double t, step_s, data_s, loss;
  int64_t losses_off;   /* offset of NUL-terminated JSON text in rowbytes, -1 if none */
  int64_t blob_off;     /* offset of 2 × nranks big-endian float64s in rowbytes */
};

struct pit_store {
  sqlite3 *db;
  char *path;
  char *source;
  sqlite3_stmt *st[ST_COUNT];
  long batch;           /* records per transaction; 0 = until close */
  long pending;         /* records added in the open transaction */
  int in_tx;
  int failed;
  int version;          /* schema version after open */
  int64_t seq;          /* last sequence number used (records are numbered in add order) */
  char last_run[PIT_NAME_MAX];
  int64_t last_run_id;  /* -1 if last_run is not cached */
  double tx_start;      /* pit_now() when the open transaction began */
  /* runs whose iterations were added in the open transaction, with the seq
   * range added: written to runs.first_seq/last_seq at commit */
  struct pit_touched { int64_t run_id, lo, hi; } *touched;
  int ntouched, captouched;
  struct pit_iter_row rows[PIT_STORE_ROWS];
  int nrows;
  unsigned char *rowbytes;
  size_t nrowbytes, caprowbytes;
  sqlite3_stmt *multi;  /* INSERT of PIT_STORE_ROWS iteration rows */
};

/* Seconds after which an open transaction is committed even if fewer than
 * `batch` records were added (so a slow producer never holds the write lock
 * long and a crash loses at most this much). */
#define PIT_STORE_COMMIT_SECONDS 1.0

/* Fills e from the connection's last error: "'<path>': <context>: <sqlite message>". */
int pit_store_dberr(struct pit_store *s, struct pit_err *e, const char *context);
/* Runs one or more SQL statements without results. */
int pit_store_exec(struct pit_store *s, const char *sql, struct pit_err *e);
/* Reads user_version; refuses a newer schema; applies pending migrations. */
int pit_store_migrate(struct pit_store *s, struct pit_err *e);
/* Queues one iteration row (seq, run id already assigned). */
int pit_store_queue_iter(struct pit_store *s, const struct pit_record *r, int64_t rid, int64_t seq,
                         struct pit_err *e);
/* Writes the queued iteration rows (inside the open transaction). */
int pit_store_flush_iters(struct pit_store *s, struct pit_err *e);
/* Largest sequence number stored (0 for an empty store). */
int pit_store_max_seq(struct pit_store *s, int64_t *out, struct pit_err *e);

#endif
