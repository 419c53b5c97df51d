/* iterbuf.c — the store's buffer of iteration rows: rows are queued as plain
 * values (per-rank BLOBs and named-loss JSON in one byte buffer) and written
 * PIT_STORE_ROWS at a time by one multi-row INSERT, the remainder one row at a
 * time. Invariant: after pit_store_flush_iters returns 0 the buffer is empty
 * and every queued row is in the open transaction; on error the caller rolls
 * the transaction back (the buffer is emptied either way). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"

#define NCOLS 16

static int reserve(struct pit_store *s, size_t more, struct pit_err *e) {
  if (PIT_GROW(s->rowbytes, s->nrowbytes + more, s->caprowbytes))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  return 0;
}

/* Big-endian IEEE-754 float64s: byte order fixed so the SQL view
 * iteration_ranks (schema.c) can decode them. */
static void pack_f64(unsigned char *out, const double *v, int n) {
  for (int i = 0; i < n; i++) {
    uint64_t u;
    memcpy(&u, &v[i], 8);
    for (int b = 7; b >= 0; b--) {
      out[8 * i + b] = (unsigned char)(u & 0xff);
      u >>= 8;
    }
  }
}

int pit_store_queue_iter(struct pit_store *s, const struct pit_record *r, int64_t rid, int64_t seq,
                         struct pit_err *e) {
  int rc;
  if (s->nrows == PIT_STORE_ROWS && (rc = pit_store_flush_iters(s, e)))
    return rc;
  struct pit_iter_row *w = &s->rows[s->nrows];
  *w = (struct pit_iter_row){.seq = seq, .run_id = rid, .epoch = r->epoch, .iter = r->iter, .step = r->step,
                             .batch = r->batch, .gen = r->gen, .rank = r->rank, .nranks = r->nranks, .t = r->t,
                             .step_s = r->step_s, .data_s = r->data_s, .loss = r->loss, .losses_off = -1};
  size_t nb = 16 * (size_t)r->nranks;
  if ((rc = reserve(s, nb, e)))
    return rc;
  w->blob_off = (int64_t)s->nrowbytes;
  if (r->nranks > 0) {
    pack_f64(s->rowbytes + s->nrowbytes, r->compute_s, r->nranks);
    pack_f64(s->rowbytes + s->nrowbytes + nb / 2, r->wait_s, r->nranks);
    s->nrowbytes += nb;
  }
  if (r->nlosses > 0) {
    char losses[PIT_MAX_LOSSES * 48 + 4];
    size_t n = (size_t)snprintf(losses, sizeof losses, "{");
    for (int i = 0; i < r->nlosses && i < PIT_MAX_LOSSES; i++) {
      /* loss names are short identifiers; characters JSON would need to
       * escape are dropped */
      char name[16];
      size_t k = 0;
      for (const char *p = r->loss_name[i]; *p && k < sizeof name - 1; p++)
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
          name[k++] = *p;
      name[k] = 0;
      if (isnan(r->loss_val[i]) || isinf(r->loss_val[i]))
        n += (size_t)snprintf(losses + n, sizeof losses - n, "%s\"%s\":null", i ? "," : "", name);
      else
        n += (size_t)snprintf(losses + n, sizeof losses - n, "%s\"%s\":%.17g", i ? "," : "", name,
                              r->loss_val[i]);
    }
    n += (size_t)snprintf(losses + n, sizeof losses - n, "}");
    if ((rc = reserve(s, n + 1, e)))
      return rc;
    w->losses_off = (int64_t)s->nrowbytes;
    memcpy(s->rowbytes + s->nrowbytes, losses, n + 1);
    s->nrowbytes += n + 1;
  }
  s->nrows++;
  return 0;
}

static void bind_row(struct pit_store *s, sqlite3_stmt *st, int base, const struct pit_iter_row *w) {
  pit_store_bind_head(st, base, w->seq, w->run_id, w->gen, w->t, w->rank);
  pit_store_bind_i(st, base + 6, w->epoch);
  pit_store_bind_i(st, base + 7, w->iter);
  pit_store_bind_i(st, base + 8, w->step);
  pit_store_bind_i(st, base + 9, w->batch);
  pit_store_bind_f(st, base + 10, w->step_s);
  pit_store_bind_f(st, base + 11, w->data_s);
  sqlite3_bind_int(st, base + 12, w->nranks);
  if (w->losses_off >= 0) {
    sqlite3_bind_null(st, base + 13);
    sqlite3_bind_text(st, base + 14, (const char *)s->rowbytes + w->losses_off, -1, SQLITE_STATIC);
  } else {
    pit_store_bind_f(st, base + 13, w->loss);
    sqlite3_bind_null(st, base + 14);
  }
  if (w->nranks > 0) {
    int nb = 8 * w->nranks;
    sqlite3_bind_blob(st, base + 15, s->rowbytes + w->blob_off, nb, SQLITE_STATIC);
    sqlite3_bind_blob(st, base + 16, s->rowbytes + w->blob_off + nb, nb, SQLITE_STATIC);
  } else {
    sqlite3_bind_null(st, base + 15);
    sqlite3_bind_null(st, base + 16);
  }
}

static int step(struct pit_store *s, sqlite3_stmt *st, struct pit_err *e) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    return pit_store_dberr(s, e, "storing iteration records");
  return 0;
}

int pit_store_flush_iters(struct pit_store *s, struct pit_err *e) {
  int rc = 0;
  if (s->nrows == PIT_STORE_ROWS) {
    if (!s->multi) {
      char sql[256 + PIT_STORE_ROWS * 40];
      size_t n = (size_t)snprintf(sql, sizeof sql,
                                  "INSERT INTO iterations(seq, run_id, gen, t, rank, epoch, iter, step, batch,"
                                  " step_s, data_s, nranks, loss, losses, compute_s, wait_s) VALUES");
      for (int k = 0; k < PIT_STORE_ROWS; k++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, "%s(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", k ? "," : "");
      if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->multi, NULL) != SQLITE_OK) {
        rc = pit_store_dberr(s, e, "preparing statements");
        goto out;
      }
    }
    for (int k = 0; k < PIT_STORE_ROWS; k++)
      bind_row(s, s->multi, NCOLS * k, &s->rows[k]);
    rc = step(s, s->multi, e);
  } else {
    for (int k = 0; k < s->nrows && !rc; k++) {
      bind_row(s, s->st[ST_ITER], 0, &s->rows[k]);
      rc = step(s, s->st[ST_ITER], e);
    }
  }
out:
  s->nrows = 0;
  s->nrowbytes = 0;
  return rc;
}
