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
  int ntouched;
  size_t captouched;
  struct pit_iter_row rows[PIT_STORE_ROWS];
  int nrows;
  unsigned char *rowbytes;
  size_t nrowbytes, caprowbytes;
  sqlite3_stmt *multi;  /* INSERT of PIT_STORE_ROWS iteration rows */
};

/* The columns each record table holds after its head (seq, run_id, gen, t,
 * rank), in the order store.c binds them (parameters 6, 7, ...) and read.c
 * reads them (columns 4, 5, ...), each with the struct pit_record field it
 * holds: the one place pairing a column with a field (stmt_sql in store.c and
 * cursor_sql in read.c list the columns in this order). Iterations are apart
 * (iterbuf.c, read_iter). A row ends at kind PIT_COL_END. NULL in a column
 * is a NaN double, a -1 integer, a NULL or empty string. */
enum pit_col_kind {
  PIT_COL_END = 0,
  PIT_COL_F64,  /* double */
  PIT_COL_I64,  /* int64_t */
  PIT_COL_INT,  /* int */
  PIT_COL_TEXT, /* char *, owned by the record */
  PIT_COL_NAME, /* char[size] inside the record */
};
struct pit_store_col {
  enum pit_col_kind kind;
  const char *name;  /* the column's name */
  size_t off;  /* offsetof(struct pit_record, field) */
  size_t size; /* PIT_COL_NAME: sizeof the array */
};
#define PIT_STORE_MAX_COLS 5
extern const struct pit_store_col pit_store_cols[PIT_REC_NTYPES][PIT_STORE_MAX_COLS + 1];
/* The table holding each record type ("inits", "iterations", ...). */
extern const char *const pit_store_tables[PIT_REC_NTYPES];
/* The statement that inserts one row of type t's table (insert: parameters in
 * pit_store_cols order after the head), or that selects a run's rows in seq
 * order (!insert: seq, gen, t, rank, then the columns; the run id is parameter
 * 1). Not for iterations. */
void pit_store_rec_sql(enum pit_rec_type t, int insert, char *sql, size_t n);

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
/* Binds parameter i (1-based) to v, or to NULL when v is NaN (_f) or negative (_i). */
void pit_store_bind_f(sqlite3_stmt *st, int i, double v);
void pit_store_bind_i(sqlite3_stmt *st, int i, int64_t v);
/* Binds the columns every record table starts with (seq, run_id, gen, t, rank)
 * to parameters base+1 .. base+5. */
void pit_store_bind_head(sqlite3_stmt *st, int base, int64_t seq, int64_t rid, int gen, double t, int64_t rank);
/* Runs a query that yields one row and reads its first column as an integer
 * (NULL reads 0); context names it in an error. */
int pit_store_query_i64(struct pit_store *s, const char *sql, const char *context, int64_t *out,
                        struct pit_err *e);
/* Largest sequence number stored (0 for an empty store). */
int pit_store_max_seq(struct pit_store *s, int64_t *out, struct pit_err *e);

#endif
