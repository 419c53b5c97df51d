/* read.c — reading the store back: the list of runs, and a cursor that yields
 * a run's records as struct pit_record in the order they were added.
 *
 * Invariant: the cursor merges one ordered query per record table on `seq`
 * (each table's rows for a run are in seq order through its (run_id, seq)
 * index; iterations through the run's seq range), so records come back in
 * add order whatever their type. Per-rank times are decoded from their
 * big-endian float64 BLOBs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/store_impl.h"

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t n) {
  const unsigned char *t = sqlite3_column_text(st, i);
  snprintf(dst, n, "%s", t ? (const char *)t : "");
}
static char *col_dup(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? strdup((const char *)t) : NULL;
}
static double col_f(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}
static int64_t col_i(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

int pit_store_runs(struct pit_store *s, struct pit_store_run **runs, int *n, struct pit_err *e) {
  *runs = NULL;
  *n = 0;
  int rc = pit_store_commit(s, e); /* what this handle added is readable */
  if (rc)
    return rc;
  static const char *sql =
      "SELECT r.name, r.created, r.source, r.config, r.model, r.itype, r.batch, r.ranks, r.nodes,"
      " r.threads, (SELECT count(*) FROM iterations i WHERE i.seq BETWEEN r.first_seq AND r.last_seq"
      " AND i.run_id = r.id), r.membership FROM runs r ORDER BY r.id";
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
    return pit_store_dberr(s, e, "listing runs");
  size_t cap = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (PIT_GROW(*runs, *n + 1, cap)) {
      sqlite3_finalize(st);
      pit_store_runs_free(*runs, *n);
      *runs = NULL;
      *n = 0;
      return pit_err_set(e, PIT_ENOMEM, "listing runs: out of memory");
    }
    struct pit_store_run *r = &(*runs)[(*n)++];
    memset(r, 0, sizeof *r);
    col_text(st, 0, r->name, sizeof r->name);
    col_text(st, 1, r->created, sizeof r->created);
    r->source = col_dup(st, 2);
    r->config = col_dup(st, 3);
    col_text(st, 4, r->model, sizeof r->model);
    col_text(st, 5, r->itype, sizeof r->itype);
    r->batch = col_i(st, 6);
    r->ranks = (int)col_i(st, 7);
    r->nodes = (int)col_i(st, 8);
    r->threads = (int)col_i(st, 9);
    r->niters = sqlite3_column_int64(st, 10);
    const unsigned char *mt = sqlite3_column_text(st, 11);
    if (mt && pit_membership_parse(&r->members, (const char *)mt, NULL))
      pit_membership_clear(&r->members); /* not written by pitstop: unknown */
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    pit_store_runs_free(*runs, *n);
    *runs = NULL;
    *n = 0;
    return pit_store_dberr(s, e, "listing runs");
  }
  return 0;
}

void pit_store_runs_free(struct pit_store_run *runs, int n) {
  for (int i = 0; i < n; i++) {
    free(runs[i].source);
    free(runs[i].config);
  }
  free(runs);
}

/* ---- cursor ---- */

enum { Q_INIT, Q_ITER, Q_EPOCH, Q_VAL, Q_CKPT, Q_NODE, Q_DEC, Q_END, Q_COUNT };

/* Q_ITER's query; the others' are pit_store_rec_sql's. */
static const char *iter_sql =
    "SELECT seq, gen, t, rank, epoch, iter, step, batch, step_s, data_s, nranks, loss, losses,"
    " compute_s, wait_s FROM iterations WHERE run_id = ?1 AND seq BETWEEN"
    " (SELECT first_seq FROM runs WHERE id = ?1) AND (SELECT last_seq FROM runs WHERE id = ?1)"
    " ORDER BY seq";

/* The record type each query reads. */
static const enum pit_rec_type rec_of[Q_COUNT] = {
    [Q_INIT] = PIT_REC_INIT,   [Q_ITER] = PIT_REC_ITER, [Q_EPOCH] = PIT_REC_EPOCH, [Q_VAL] = PIT_REC_VALIDATION,
    [Q_CKPT] = PIT_REC_CHECKPOINT, [Q_NODE] = PIT_REC_NODE, [Q_DEC] = PIT_REC_DECISION, [Q_END] = PIT_REC_END,
};

struct pit_store_cursor {
  struct pit_store *s;
  char run[PIT_NAME_MAX];
  sqlite3_stmt *q[Q_COUNT];
  int has_row[Q_COUNT];   /* 1: q[i] is positioned on a row not yet consumed */
  int64_t head[Q_COUNT];  /* seq of that row */
};

static int advance(struct pit_store_cursor *c, int i, struct pit_err *e) {
  int rc = sqlite3_step(c->q[i]);
  if (rc == SQLITE_ROW) {
    c->has_row[i] = 1;
    c->head[i] = sqlite3_column_int64(c->q[i], 0);
    return 0;
  }
  c->has_row[i] = 0;
  if (rc != SQLITE_DONE)
    return pit_store_dberr(c->s, e, "reading records");
  return 0;
}

int pit_store_cursor_open(struct pit_store *s, const char *run, struct pit_store_cursor **out,
                          struct pit_err *e) {
  *out = NULL;
  int rc = pit_store_commit(s, e); /* what this handle added is readable */
  if (rc)
    return rc;
  sqlite3_stmt *find = NULL;
  if (sqlite3_prepare_v2(s->db, "SELECT id FROM runs WHERE name = ?", -1, &find, NULL) != SQLITE_OK)
    return pit_store_dberr(s, e, "finding run");
  sqlite3_bind_text(find, 1, run, -1, SQLITE_STATIC);
  rc = sqlite3_step(find);
  int64_t rid = rc == SQLITE_ROW ? sqlite3_column_int64(find, 0) : -1;
  sqlite3_finalize(find);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return pit_store_dberr(s, e, "finding run");
  if (rid < 0)
    return pit_err_set(e, PIT_ENOTFOUND, "'%s': no run named '%s'", s->path, run);
  struct pit_store_cursor *c = calloc(1, sizeof *c);
  if (!c)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  c->s = s;
  snprintf(c->run, sizeof c->run, "%s", run);
  for (int i = 0; i < Q_COUNT; i++) {
    char sql[512];
    if (i != Q_ITER)
      pit_store_rec_sql(rec_of[i], 0, sql, sizeof sql);
    if (sqlite3_prepare_v2(s->db, i == Q_ITER ? iter_sql : sql, -1, &c->q[i], NULL) != SQLITE_OK) {
      rc = pit_store_dberr(s, e, "reading records");
      pit_store_cursor_free(c);
      return rc;
    }
    sqlite3_bind_int64(c->q[i], 1, rid);
    if ((rc = advance(c, i, e))) {
      pit_store_cursor_free(c);
      return rc;
    }
  }
  *out = c;
  return 0;
}

static void head_fields(sqlite3_stmt *st, struct pit_record *r) {
  r->gen = (int)sqlite3_column_int(st, 1);
  r->t = col_f(st, 2);
  r->rank = (int)col_i(st, 3);
}

/* Reads the columns of r's table after the head (columns 4...) into r. */
static void read_body(sqlite3_stmt *st, struct pit_record *r) {
  char *base = (char *)r;
  int i = 4;
  for (const struct pit_store_col *c = pit_store_cols[r->type]; c->kind != PIT_COL_END; c++, i++) {
    void *f = base + c->off;
    switch (c->kind) {
    case PIT_COL_F64:
      *(double *)f = col_f(st, i);
      break;
    case PIT_COL_I64:
      *(int64_t *)f = col_i(st, i);
      break;
    case PIT_COL_INT:
      *(int *)f = (int)col_i(st, i);
      break;
    case PIT_COL_TEXT:
      *(char **)f = col_dup(st, i);
      break;
    case PIT_COL_NAME:
      col_text(st, i, f, c->size);
      break;
    default:
      break;
    }
  }
}

static int losses_from_json(struct pit_record *r, const char *text, struct pit_err *e) {
  cJSON *o = cJSON_Parse(text);
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return pit_err_set(e, PIT_EFORMAT, "run '%s': stored losses are not a JSON object", r->run);
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, o) {
    if (r->nlosses >= PIT_MAX_LOSSES)
      break;
    snprintf(r->loss_name[r->nlosses], sizeof r->loss_name[0], "%s", it->string ? it->string : "");
    r->loss_val[r->nlosses] = cJSON_IsNumber(it) ? it->valuedouble : NAN;
    r->nlosses++;
  }
  cJSON_Delete(o);
  return 0;
}

static int unpack_f64(double *out, int n, sqlite3_stmt *st, int col) {
  if (sqlite3_column_type(st, col) == SQLITE_NULL)
    return 0;
  const unsigned char *b = sqlite3_column_blob(st, col);
  int nb = sqlite3_column_bytes(st, col);
  if (nb != 8 * n || !b)
    return -1;
  for (int i = 0; i < n; i++) {
    uint64_t u = 0;
    for (int k = 0; k < 8; k++)
      u = (u << 8) | b[8 * i + k];
    memcpy(&out[i], &u, 8);
  }
  return 0;
}

/* Reads the iteration at the head of Q_ITER and advances past it. */
static int read_iter(struct pit_store_cursor *c, struct pit_record *r, struct pit_err *e) {
  sqlite3_stmt *st = c->q[Q_ITER];
  r->type = PIT_REC_ITER;
  head_fields(st, r);
  r->epoch = col_i(st, 4);
  r->iter = col_i(st, 5);
  r->step = col_i(st, 6);
  r->batch = col_i(st, 7);
  r->step_s = col_f(st, 8);
  r->data_s = col_f(st, 9);
  int nranks = sqlite3_column_int(st, 10);
  r->loss = col_f(st, 11);
  int rc;
  if (sqlite3_column_type(st, 12) != SQLITE_NULL &&
      (rc = losses_from_json(r, (const char *)sqlite3_column_text(st, 12), e)))
    return rc;
  if (nranks < 0 || nranks > 1000000)
    return pit_err_set(e, PIT_EFORMAT, "'%s': run '%s': stored rank count %d is invalid", c->s->path, c->run,
                       nranks);
  if (nranks > 0 && pit_record_set_ranks(r, nranks))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (unpack_f64(r->compute_s, nranks, st, 13) || unpack_f64(r->wait_s, nranks, st, 14))
    return pit_err_set(e, PIT_EFORMAT, "'%s': run '%s': stored per-rank times do not match %d ranks",
                       c->s->path, c->run, nranks);
  return advance(c, Q_ITER, e);
}

int pit_store_cursor_next(struct pit_store_cursor *c, struct pit_record *r, struct pit_err *e) {
  int best = -1;
  for (int i = 0; i < Q_COUNT; i++)
    if (c->has_row[i] && (best < 0 || c->head[i] < c->head[best]))
      best = i;
  if (best < 0)
    return 0;
  pit_record_release(r);
  snprintf(r->run, sizeof r->run, "%s", c->run);
  sqlite3_stmt *st = c->q[best];
  if (best == Q_ITER) {
    int rc = read_iter(c, r, e);
    return rc ? rc : 1;
  }
  head_fields(st, r);
  r->type = rec_of[best];
  read_body(st, r);
  int rc = advance(c, best, e);
  return rc ? rc : 1;
}

void pit_store_cursor_free(struct pit_store_cursor *c) {
  if (!c)
    return;
  for (int i = 0; i < Q_COUNT; i++)
    sqlite3_finalize(c->q[i]);
  free(c);
}
