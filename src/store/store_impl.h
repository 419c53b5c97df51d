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
  ST_INIT,
  ST_ITER,
  ST_ITER_RANK,
  ST_EPOCH,
  ST_VALIDATION,
  ST_CHECKPOINT,
  ST_NODE,
  ST_DECISION,
  ST_END,
  ST_COUNT
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
};

/* Fills e from the connection's last error: "'<path>': <context>: <sqlite message>". */
int pit_store_dberr(struct pit_store *s, struct pit_err *e, const char *context);
/* Runs one or more SQL statements without results. */
int pit_store_exec(struct pit_store *s, const char *sql, struct pit_err *e);
/* Reads user_version; refuses a newer schema; applies pending migrations. */
int pit_store_migrate(struct pit_store *s, struct pit_err *e);
/* Largest sequence number stored (0 for an empty store). */
int pit_store_max_seq(struct pit_store *s, int64_t *out, struct pit_err *e);

#endif
