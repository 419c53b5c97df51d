/* store.c — opening the store and writing records into it (see store.h).
 *
 * Invariants: every write happens inside a transaction the store opened
 * (BEGIN on the first add after a commit); the transaction is committed every
 * s->batch records and at close; any error while adding rolls the open
 * transaction back, clears the caches that may name rolled-back rows (run id,
 * sequence), and marks the handle failed. Records are numbered (seq) in add
 * order across all tables, so a run reads back in the order it was written.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pitstop/analysis.h"
#include "store/store_impl.h"

static const char *stmt_sql[ST_COUNT] = {
    [ST_RUN_FIND] = "SELECT id FROM runs WHERE name = ?",
    [ST_RUN_NEW] = "INSERT INTO runs(name, created, source) VALUES(?,?,?)",
    [ST_RUN_CONFIG] = "UPDATE runs SET config = ?, configuration_id = ?, model = ?, batch = ?, ranks = ?,"
                      " nodes = ?, itype = ?, threads = ?, membership = ? WHERE id = ?",
    [ST_CONF_NEW] = "INSERT OR IGNORE INTO configurations(key, model, batch, ranks, nodes, itype, threads,"
                    " membership) VALUES(?,?,?,?,?,?,?,?)",
    [ST_CONF_FIND] = "SELECT id FROM configurations WHERE key = ?",
    [ST_MEMBER] = "INSERT OR IGNORE INTO members(configuration_id, itype, nodes, ranks_per_node) VALUES(?,?,?,?)",
    /* ST_INIT, ST_EPOCH, ...: pit_store_rec_sql (from pit_store_cols) */
    [ST_ITER] = "INSERT INTO iterations(seq, run_id, gen, t, rank, epoch, iter, step, batch, step_s,"
                " data_s, nranks, loss, losses, compute_s, wait_s) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_RUN_RANGE] = "UPDATE runs SET first_seq = min(coalesce(first_seq, ?1), ?1),"
                     " last_seq = max(coalesce(last_seq, ?2), ?2) WHERE id = ?3",
};

/* The statement storing each record type; iterations are queued (iterbuf.c). */
static const enum pit_stmt_id stmt_of[PIT_REC_NTYPES] = {
    [PIT_REC_INIT] = ST_INIT,   [PIT_REC_VALIDATION] = ST_VALIDATION, [PIT_REC_CHECKPOINT] = ST_CHECKPOINT,
    [PIT_REC_EPOCH] = ST_EPOCH, [PIT_REC_NODE] = ST_NODE,             [PIT_REC_DECISION] = ST_DECISION,
    [PIT_REC_END] = ST_END,
};

#define COL(kind, field) {PIT_COL_##kind, #field, offsetof(struct pit_record, field), sizeof(((struct pit_record *)0)->field)}
const struct pit_store_col pit_store_cols[PIT_REC_NTYPES][PIT_STORE_MAX_COLS + 1] = {
    [PIT_REC_INIT] = {COL(F64, init_s), COL(F64, rdzv_s), COL(INT, ranks), COL(INT, nodes), COL(TEXT, config)},
    [PIT_REC_EPOCH] = {COL(I64, epoch), COL(F64, epoch_s)},
    [PIT_REC_VALIDATION] = {COL(I64, epoch), COL(I64, step), COL(F64, val_s), COL(F64, accuracy)},
    [PIT_REC_CHECKPOINT] = {COL(I64, epoch), COL(I64, step), COL(F64, ckpt_s), COL(TEXT, path), COL(I64, bytes)},
    [PIT_REC_NODE] = {COL(NAME, action), COL(NAME, node), COL(NAME, itype), COL(F64, price_h)},
    [PIT_REC_DECISION] = {COL(TEXT, detail)},
    [PIT_REC_END] = {COL(F64, total_s), COL(NAME, status), COL(TEXT, detail)},
};
#undef COL

const char *const pit_store_tables[PIT_REC_NTYPES] = {
    [PIT_REC_INIT] = "inits",          [PIT_REC_ITER] = "iterations", [PIT_REC_VALIDATION] = "validations",
    [PIT_REC_CHECKPOINT] = "checkpoints", [PIT_REC_EPOCH] = "epochs",  [PIT_REC_NODE] = "nodes",
    [PIT_REC_DECISION] = "decisions",   [PIT_REC_END] = "ends",
};

void pit_store_rec_sql(enum pit_rec_type t, int insert, char *sql, size_t n) {
  char cols[256] = "", marks[64] = "";
  size_t nc = 0, nm = 0;
  for (const struct pit_store_col *c = pit_store_cols[t]; c->kind != PIT_COL_END; c++) {
    nc += (size_t)snprintf(cols + nc, sizeof cols - nc, ", %s", c->name);
    nm += (size_t)snprintf(marks + nm, sizeof marks - nm, ",?");
  }
  if (insert)
    snprintf(sql, n, "INSERT INTO %s(seq, run_id, gen, t, rank%s) VALUES(?,?,?,?,?%s)", pit_store_tables[t], cols,
             marks);
  else
    snprintf(sql, n, "SELECT seq, gen, t, rank%s FROM %s WHERE run_id = ? ORDER BY seq", cols, pit_store_tables[t]);
}

int pit_store_dberr(struct pit_store *s, struct pit_err *e, const char *context) {
  const char *m = s->db ? sqlite3_errmsg(s->db) : "out of memory";
  return pit_err_set(e, PIT_ELIB, "'%s': %s: %s", s->path, context, m);
}

int pit_store_exec(struct pit_store *s, const char *sql, struct pit_err *e) {
  if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return pit_store_dberr(s, e, sql);
  return 0;
}

static void free_handle(struct pit_store *s) {
  if (!s)
    return;
  for (int i = 0; i < ST_COUNT; i++)
    sqlite3_finalize(s->st[i]);
  sqlite3_finalize(s->multi);
  if (s->db)
    sqlite3_close(s->db);
  PIT_FREE_ALL(s->path, s->source, s->rowbytes, s->touched, s);
}

static int open_common(struct pit_store **out, const char *path, int create, struct pit_err *e) {
  *out = NULL;
  struct stat sb;
  if (!create && stat(path, &sb) != 0) {
    int rc = pit_err_errno(e, PIT_ENOTFOUND, "cannot open '%s'", path);
    pit_err_hint(e, "give the database with --db PATH, or fill one with 'pitstop train --db' or "
                    "'pitstop parse --db'");
    return rc;
  }
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return pit_err_set(e, PIT_EARG, "cannot open '%s': is a directory", path);
  struct pit_store *s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(path))) {
    free(s);
    return pit_err_set(e, PIT_ENOMEM, "cannot open '%s': out of memory", path);
  }
  s->batch = PIT_STORE_DEFAULT_BATCH;
  s->last_run_id = -1;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
    pit_err_set(e, PIT_EIO, "cannot open '%s': %s", path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
    free_handle(s);
    return PIT_EIO;
  }
  sqlite3_extended_result_codes(s->db, 1);
  sqlite3_busy_timeout(s->db, 60000); /* another writer's transaction: wait, do not fail */
  /* Check the schema version before writing anything (a newer database is
   * never touched, not even its journal mode). */
  int rc = pit_store_migrate(s, e);
  if (rc) {
    if (strstr(e ? e->msg : "", "file is not a database"))
      pit_err_set(e, PIT_EFORMAT, "cannot open '%s': not a pitstop database (file is not a database)", path);
    free_handle(s);
    return rc;
  }
  /* WAL: readers never block the writer; NORMAL sync is durable at each
   * checkpoint and never corrupts (a crash loses at most the last commits). */
  if ((rc = pit_store_exec(s, "PRAGMA journal_mode=WAL", e)) ||
      (rc = pit_store_exec(s, "PRAGMA synchronous=NORMAL", e)) ||
      (rc = pit_store_exec(s, "PRAGMA cache_size=-32768", e)) ||
      (rc = pit_store_max_seq(s, &s->seq, e))) {
    free_handle(s);
    return rc;
  }
  const char *sql[ST_COUNT];
  char rec_sql[PIT_REC_NTYPES][512];
  memcpy(sql, stmt_sql, sizeof sql);
  for (int t = PIT_REC_NONE + 1; t < PIT_REC_NTYPES; t++) {
    if (t != PIT_REC_ITER) {
      pit_store_rec_sql((enum pit_rec_type)t, 1, rec_sql[t], sizeof rec_sql[t]);
      sql[stmt_of[t]] = rec_sql[t];
    }
  }
  for (int i = 0; i < ST_COUNT; i++) {
    if (sqlite3_prepare_v3(s->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK) {
      rc = pit_store_dberr(s, e, "preparing statements");
      free_handle(s);
      return rc;
    }
  }
  *out = s;
  return 0;
}

int pit_store_open(struct pit_store **s, const char *path, struct pit_err *e) {
  return open_common(s, path, 1, e);
}

int pit_store_open_existing(struct pit_store **s, const char *path, struct pit_err *e) {
  return open_common(s, path, 0, e);
}

void pit_store_set_batch(struct pit_store *s, long n) { s->batch = n < 0 ? 0 : n; }

int pit_store_set_source(struct pit_store *s, const char *source, struct pit_err *e) {
  char *c = source ? strdup(source) : NULL;
  if (source && !c)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  free(s->source);
  s->source = c;
  return 0;
}

int pit_store_schema_version(struct pit_store *s) { return s->version; }

/* ---- writing ---- */

static void rollback(struct pit_store *s) {
  for (int i = 0; i < ST_COUNT; i++)
    sqlite3_reset(s->st[i]);
  if (s->multi)
    sqlite3_reset(s->multi);
  if (s->in_tx)
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  s->in_tx = 0;
  s->pending = 0;
  s->ntouched = 0;
  s->nrows = 0;
  s->nrowbytes = 0;
  s->last_run_id = -1;
  s->last_run[0] = 0;
  int64_t q;
  if (pit_store_max_seq(s, &q, NULL) == 0)
    s->seq = q;
  s->failed = 1;
}

int pit_store_commit(struct pit_store *s, struct pit_err *e) {
  if (!s->in_tx)
    return 0;
  int frc = pit_store_flush_iters(s, e);
  if (frc) {
    rollback(s);
    return frc;
  }
  for (int i = 0; i < s->ntouched; i++) {
    sqlite3_stmt *st = s->st[ST_RUN_RANGE];
    sqlite3_bind_int64(st, 1, s->touched[i].lo);
    sqlite3_bind_int64(st, 2, s->touched[i].hi);
    sqlite3_bind_int64(st, 3, s->touched[i].run_id);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
      rc = pit_store_dberr(s, e, "commit");
      rollback(s);
      return rc;
    }
  }
  s->ntouched = 0;
  if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    int rc = pit_store_dberr(s, e, "commit");
    rollback(s);
    return rc;
  }
  s->in_tx = 0;
  s->pending = 0;
  return 0;
}

static int touch_run(struct pit_store *s, int64_t rid, int64_t seq, struct pit_err *e) {
  for (int i = s->ntouched - 1; i >= 0; i--) {
    if (s->touched[i].run_id == rid) {
      if (seq < s->touched[i].lo)
        s->touched[i].lo = seq;
      if (seq > s->touched[i].hi)
        s->touched[i].hi = seq;
      return 0;
    }
  }
  if (PIT_GROW(s->touched, s->ntouched + 1, s->captouched))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  s->touched[s->ntouched++] = (struct pit_touched){rid, seq, seq};
  return 0;
}

void pit_store_bind_f(sqlite3_stmt *st, int i, double v) {
  if (isnan(v))
    sqlite3_bind_null(st, i);
  else
    sqlite3_bind_double(st, i, v);
}
void pit_store_bind_i(sqlite3_stmt *st, int i, int64_t v) {
  if (v < 0)
    sqlite3_bind_null(st, i);
  else
    sqlite3_bind_int64(st, i, v);
}
static void bind_s(sqlite3_stmt *st, int i, const char *v) {
  if (!v || !*v)
    sqlite3_bind_null(st, i);
  else
    sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

/* Steps a bound INSERT/UPDATE; 0 or an error naming the record. */
static int run_stmt(struct pit_store *s, sqlite3_stmt *st, const struct pit_record *r, struct pit_err *e) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    char ctx[160];
    snprintf(ctx, sizeof ctx, "storing %s record of run '%s'", pit_rec_type_name(r->type), r->run);
    return pit_store_dberr(s, e, ctx);
  }
  return 0;
}

static int find_id(struct pit_store *s, sqlite3_stmt *st, int64_t *id, struct pit_err *e) {
  int rc = sqlite3_step(st);
  *id = -1;
  if (rc == SQLITE_ROW)
    *id = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return pit_store_dberr(s, e, "lookup");
  return 0;
}

/* The id of the run named run, -1 if the store has none. */
static int run_id_find(struct pit_store *s, const char *run, int64_t *id, struct pit_err *e) {
  sqlite3_bind_text(s->st[ST_RUN_FIND], 1, run, -1, SQLITE_STATIC);
  return find_id(s, s->st[ST_RUN_FIND], id, e);
}

static int run_id(struct pit_store *s, const struct pit_record *r, int64_t *id, struct pit_err *e) {
  if (s->last_run_id >= 0 && strcmp(s->last_run, r->run) == 0) {
    *id = s->last_run_id;
    return 0;
  }
  int rc;
  if ((rc = run_id_find(s, r->run, id, e)))
    return rc;
  if (*id < 0) {
    char now[32];
    time_t tt = time(NULL);
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    sqlite3_stmt *st = s->st[ST_RUN_NEW];
    sqlite3_bind_text(st, 1, r->run, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    bind_s(st, 3, s->source);
    if ((rc = run_stmt(s, st, r, e)))
      return rc;
    *id = sqlite3_last_insert_rowid(s->db);
  }
  snprintf(s->last_run, sizeof s->last_run, "%s", r->run);
  s->last_run_id = *id;
  return 0;
}

/* The configuration's columns model, batch, ranks, nodes, itype, threads and
 * membership, in that order from parameter first on (configurations and runs
 * hold them alike). */
static void bind_config(sqlite3_stmt *st, int first, const struct pit_config *c, const char *members) {
  bind_s(st, first, c->model);
  pit_store_bind_i(st, first + 1, c->batch);
  pit_store_bind_i(st, first + 2, c->ranks);
  pit_store_bind_i(st, first + 3, c->nodes);
  bind_s(st, first + 4, c->itype);
  pit_store_bind_i(st, first + 5, c->threads);
  bind_s(st, first + 6, members);
}

/* An init record fixes the run's configuration (configurations row + runs columns). */
static int set_config(struct pit_store *s, int64_t rid, const struct pit_record *r, struct pit_err *e) {
  struct pit_config c;
  pit_config_from_record(&c, r);
  char key[512];
  pit_config_key(&c, key, sizeof key);
  char members[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&c.members, members, sizeof members);
  sqlite3_stmt *st = s->st[ST_CONF_NEW];
  int rc;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  bind_config(st, 2, &c, members);
  if ((rc = run_stmt(s, st, r, e)))
    return rc;
  int fresh = sqlite3_changes(s->db) > 0;
  int64_t cid;
  sqlite3_bind_text(s->st[ST_CONF_FIND], 1, key, -1, SQLITE_STATIC);
  if ((rc = find_id(s, s->st[ST_CONF_FIND], &cid, e)))
    return rc;
  for (int i = 0; fresh && i < c.members.n; i++) { /* a new configuration: its members rows */
    const struct pit_member *m = &c.members.m[i];
    st = s->st[ST_MEMBER];
    sqlite3_bind_int64(st, 1, cid);
    bind_s(st, 2, m->itype);
    pit_store_bind_i(st, 3, m->nodes);
    pit_store_bind_i(st, 4, m->ranks_per_node);
    if ((rc = run_stmt(s, st, r, e)))
      return rc;
  }
  st = s->st[ST_RUN_CONFIG];
  bind_s(st, 1, r->config);
  sqlite3_bind_int64(st, 2, cid);
  bind_config(st, 3, &c, members);
  sqlite3_bind_int64(st, 10, rid);
  return run_stmt(s, st, r, e);
}

void pit_store_bind_head(sqlite3_stmt *st, int base, int64_t seq, int64_t rid, int gen, double t, int64_t rank) {
  sqlite3_bind_int64(st, base + 1, seq);
  sqlite3_bind_int64(st, base + 2, rid);
  sqlite3_bind_int(st, base + 3, gen);
  pit_store_bind_f(st, base + 4, t);
  pit_store_bind_i(st, base + 5, rank);
}

static int check_record(const struct pit_record *r, struct pit_err *e) {
  if (r->type <= PIT_REC_NONE || r->type >= PIT_REC_NTYPES)
    return pit_err_set(e, PIT_EARG, "store: record of unknown type %d", (int)r->type);
  if (!r->run[0])
    return pit_err_set(e, PIT_EARG, "store: %s record without a run id", pit_rec_type_name(r->type));
  if (r->nranks < 0 || (r->nranks > 0 && (!r->compute_s || !r->wait_s)))
    return pit_err_set(e, PIT_EARG, "store: %s record of run '%s' has inconsistent per-rank arrays",
                       pit_rec_type_name(r->type), r->run);
  return 0;
}

/* Binds the columns of r's table that follow the head (parameters 6...). */
static void bind_body(sqlite3_stmt *st, const struct pit_record *r) {
  const char *base = (const char *)r;
  int i = 6;
  for (const struct pit_store_col *c = pit_store_cols[r->type]; c->kind != PIT_COL_END; c++, i++) {
    const void *f = base + c->off;
    switch (c->kind) {
    case PIT_COL_F64:
      pit_store_bind_f(st, i, *(const double *)f);
      break;
    case PIT_COL_I64:
      pit_store_bind_i(st, i, *(const int64_t *)f);
      break;
    case PIT_COL_INT:
      pit_store_bind_i(st, i, *(const int *)f);
      break;
    case PIT_COL_TEXT:
      bind_s(st, i, *(char *const *)f);
      break;
    case PIT_COL_NAME:
      bind_s(st, i, (const char *)f);
      break;
    default:
      break;
    }
  }
}

static int add_one(struct pit_store *s, const struct pit_record *r, struct pit_err *e) {
  int64_t rid;
  int rc;
  if ((rc = run_id(s, r, &rid, e)))
    return rc;
  int64_t seq = s->seq + 1;
  if (r->type == PIT_REC_ITER) {
    if ((rc = pit_store_queue_iter(s, r, rid, seq, e)) || (rc = touch_run(s, rid, seq, e)))
      return rc;
  } else {
    if (r->type <= PIT_REC_NONE || r->type >= PIT_REC_NTYPES) /* check_record refused it */
      return PIT_BUG(e, "store: record of unknown type %d", (int)r->type);
    sqlite3_stmt *st = s->st[stmt_of[r->type]];
    pit_store_bind_head(st, 0, seq, rid, r->gen, r->t, r->rank);
    bind_body(st, r);
    if ((rc = run_stmt(s, st, r, e)) || (r->type == PIT_REC_INIT && (rc = set_config(s, rid, r, e))))
      return rc;
  }
  s->seq = seq;
  return 0;
}

/* Every write after a failed one is refused: its transaction was rolled back. */
static int refused(const struct pit_store *s, struct pit_err *e) {
  return pit_err_set(e, PIT_ESTATE, "'%s': an earlier error rolled back the open transaction; "
                                    "nothing more is stored through this handle", s->path);
}

int pit_store_add(struct pit_store *s, const struct pit_record *r, struct pit_err *e) {
  if (s->failed)
    return refused(s, e);
  int rc = check_record(r, e);
  if (!rc && !s->in_tx) {
    /* IMMEDIATE: hold the write lock from the start, then number records after
     * the largest seq (another process may have written since). */
    if ((rc = pit_store_exec(s, "BEGIN IMMEDIATE", e)) == 0) {
      s->in_tx = 1;
      s->tx_start = pit_now();
      rc = pit_store_max_seq(s, &s->seq, e);
    }
  }
  if (!rc)
    rc = add_one(s, r, e);
  if (rc) {
    rollback(s);
    return rc;
  }
  s->pending++;
  if ((s->batch > 0 && s->pending >= s->batch) ||
      (s->batch > 0 && pit_now() - s->tx_start >= PIT_STORE_COMMIT_SECONDS))
    return pit_store_commit(s, e);
  return 0;
}

int pit_store_set_context(struct pit_store *s, const char *run, const char *config, struct pit_err *e) {
  if (s->failed)
    return refused(s, e);
  if (!config || !config[0])
    return 0;
  struct pit_record ini;
  pit_record_init(&ini);
  ini.type = PIT_REC_INIT;
  snprintf(ini.run, sizeof ini.run, "%s", run);
  int64_t rid, unset = 0;
  int rc = run_id_find(s, run, &rid, e);
  if (!rc && rid >= 0) {
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT config IS NULL FROM runs WHERE id = %lld", (long long)rid);
    rc = pit_store_query_i64(s, sql, "reading a run's configuration", &unset, e);
  }
  if (!rc && rid >= 0 && unset) {
    ini.config = (char *)config; /* borrowed: set_config only reads it */
    rc = set_config(s, rid, &ini, e);
    ini.config = NULL;
  }
  pit_record_release(&ini);
  if (rc)
    rollback(s);
  return rc;
}

int pit_store_close(struct pit_store *s, struct pit_err *e) {
  if (!s)
    return 0;
  int rc = s->failed ? pit_err_set(e, PIT_ESTATE, "'%s': an earlier error rolled back the last transaction; "
                                                  "records added since the last commit are not stored",
                                    s->path)
                     : pit_store_commit(s, e);
  if (!rc && !s->failed) {
    /* Fold the WAL back into the database so the file alone is complete. */
    sqlite3_exec(s->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  }
  free_handle(s);
  return rc;
}

void pit_store_abort(struct pit_store *s) {
  if (!s)
    return;
  if (s->in_tx)
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  free_handle(s);
}
