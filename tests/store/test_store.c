/* test_store.c — the SQLite store: every record type survives add → cursor
 * unchanged (compared as formatted JSON, so bit-exact); runs are listed with
 * their configuration; migrations create the schema in a new or empty file and
 * refuse a newer one without touching it; a failing insert rolls back the whole
 * open transaction and nothing half-written remains; the iteration_ranks view
 * decodes per-rank times exactly. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/store.h"

static char *path_in_tmp(const char *name) {
  static char buf[8][600];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 600, "%s/%s", check_tmpdir(), name);
  return p;
}

/* Records of every type for run `run`, in a fixed order. */
static int make_records(struct pit_record *rs, const char *run) {
  int n = 0;
  struct pit_record *r;
#define NEXT(ty)                                   \
  r = &rs[n++];                                    \
  pit_record_init(r);                              \
  r->type = ty;                                    \
  snprintf(r->run, sizeof r->run, "%s", run);      \
  r->t = 0.125 * n
  NEXT(PIT_REC_NODE);
  snprintf(r->action, sizeof r->action, "start");
  snprintf(r->node, sizeof r->node, "n0");
  snprintf(r->itype, sizeof r->itype, "c5.xlarge");
  r->price_h = 0.17;
  NEXT(PIT_REC_INIT);
  r->init_s = 1.0 / 3.0;
  r->rdzv_s = 0.01;
  r->ranks = 2;
  r->nodes = 1;
  r->config = strdup("{\"model\":\"cnn\",\"batch\":64,\"threads\":1,\"itype\":\"local\",\"lr\":0.01}");
  for (int i = 0; i < 3; i++) {
    NEXT(PIT_REC_ITER);
    r->epoch = 0;
    r->iter = i;
    r->step = i;
    r->batch = 64;
    r->step_s = 0.0123456789 + i * 1e-7;
    r->data_s = 1e-4 / 7.0;
    pit_record_set_ranks(r, 2);
    r->compute_s[0] = 0.01 + i * 1e-9;
    r->compute_s[1] = 0.009;
    r->wait_s[0] = 0.0;
    r->wait_s[1] = i == 1 ? NAN : 0.001 / 3.0;
    r->loss = 2.302585093 - i;
  }
  NEXT(PIT_REC_ITER); /* GAN-style named losses, one rank's view, no per-rank arrays */
  r->gen = 1;
  r->rank = 1;
  r->epoch = 0;
  r->iter = 3;
  r->step = 3;
  r->step_s = 0.5;
  r->nlosses = 2;
  strcpy(r->loss_name[0], "d");
  strcpy(r->loss_name[1], "g");
  r->loss_val[0] = 0.1 / 3.0;
  r->loss_val[1] = 4.0;
  NEXT(PIT_REC_VALIDATION);
  r->epoch = 0;
  r->val_s = 0.75;
  r->accuracy = 0.8912;
  NEXT(PIT_REC_EPOCH);
  r->epoch = 0;
  r->epoch_s = 12.5;
  NEXT(PIT_REC_CHECKPOINT);
  r->step = 3;
  r->ckpt_s = 0.2;
  r->path = strdup("/tmp/ck \"1\".bin");
  r->bytes = 248024;
  NEXT(PIT_REC_DECISION);
  r->detail = strdup("{\"choose\":[\"c5.xlarge\",2],\"why\":\"cheapest\"}");
  NEXT(PIT_REC_END);
  r->total_s = 15.0;
#undef NEXT
  return n;
}

static int same_json(const struct pit_record *a, const struct pit_record *b) {
  char *ba = NULL, *bb = NULL;
  size_t ca = 0, cb = 0;
  int na = pit_record_format(a, &ba, &ca), nb = pit_record_format(b, &bb, &cb);
  int same = na > 0 && na == nb && memcmp(ba, bb, (size_t)na) == 0;
  if (!same)
    fprintf(stderr, "  want %.*s  got  %.*s", na, ba, nb, bb);
  free(ba);
  free(bb);
  return same;
}

static void roundtrip(void) {
  const char *db = path_in_tmp("rt.db");
  struct pit_record a[16], b[16];
  int na = make_records(a, "run-a"), nb = make_records(b, "run-b");
  struct pit_err e = {0};
  struct pit_store *s;
  CHECK(pit_store_open(&s, db, &e) == 0, "open: %s", e.msg);
  pit_store_set_source(s, "test", &e);
  for (int i = 0; i < na; i++)
    CHECK(pit_store_add(s, &a[i], &e) == 0, "add a%d: %s", i, e.msg);
  CHECK(pit_store_close(s, &e) == 0, "close: %s", e.msg);
  /* a second handle appends another run: numbering continues */
  CHECK(pit_store_open_existing(&s, db, &e) == 0, "reopen: %s", e.msg);
  for (int i = 0; i < nb; i++)
    CHECK(pit_store_add(s, &b[i], &e) == 0, "add b%d: %s", i, e.msg);
  CHECK(pit_store_schema_version(s) == PIT_STORE_SCHEMA_VERSION, "version");

  struct pit_store_run *runs;
  int nruns;
  CHECK(pit_store_runs(s, &runs, &nruns, &e) == 0 && nruns == 2, "runs: %d %s", nruns, e.msg);
  if (nruns == 2) {
    CHECK(strcmp(runs[0].name, "run-a") == 0 && strcmp(runs[1].name, "run-b") == 0, "run order");
    CHECK(strcmp(runs[0].model, "cnn") == 0 && runs[0].batch == 64 && runs[0].ranks == 2 && runs[0].nodes == 1 &&
              runs[0].threads == 1 && strcmp(runs[0].itype, "local") == 0,
          "configuration columns");
    CHECK(runs[0].niters == 4 && runs[0].source && strcmp(runs[0].source, "test") == 0, "niters/source");
    CHECK(runs[0].config && strstr(runs[0].config, "\"lr\":0.01"), "config JSON kept");
  }
  pit_store_runs_free(runs, nruns);

  for (int which = 0; which < 2; which++) {
    struct pit_record *want = which ? b : a;
    int n = which ? nb : na;
    struct pit_store_cursor *c;
    CHECK(pit_store_cursor_open(s, which ? "run-b" : "run-a", &c, &e) == 0, "cursor: %s", e.msg);
    struct pit_record got;
    pit_record_init(&got);
    int k = 0, rc;
    while ((rc = pit_store_cursor_next(c, &got, &e)) == 1) {
      CHECK(k < n && same_json(&want[k], &got), "record %d of run %d differs", k, which);
      k++;
    }
    CHECK(rc == 0 && k == n, "read %d of %d records (rc %d %s)", k, n, rc, e.msg);
    pit_record_release(&got);
    pit_store_cursor_free(c);
  }
  struct pit_store_cursor *c;
  CHECK(pit_store_cursor_open(s, "nope", &c, &e) == PIT_ENOTFOUND && strstr(e.msg, "nope"), "missing run");
  CHECK(pit_store_close(s, &e) == 0, "close 2");

  /* Plain SQL (no pitstop code): the view decodes the per-rank BLOBs exactly. */
  sqlite3 *q;
  CHECK(sqlite3_open(db, &q) == SQLITE_OK, "sqlite open");
  sqlite3_stmt *st;
  int prc = sqlite3_prepare_v2(q,
                               "SELECT step, rank, compute_s, wait_s FROM iteration_ranks WHERE run = 'run-a'"
                               " ORDER BY step, rank",
                               -1, &st, NULL);
  CHECK(prc == SQLITE_OK, "view: %s", sqlite3_errmsg(q));
  int rows = 0;
  while (prc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    int step = sqlite3_column_int(st, 0), rank = sqlite3_column_int(st, 1);
    const struct pit_record *w = &a[2 + step];
    CHECK(sqlite3_column_double(st, 2) == w->compute_s[rank], "view compute step %d rank %d", step, rank);
    if (isnan(w->wait_s[rank]))
      CHECK(sqlite3_column_type(st, 3) == SQLITE_NULL, "NaN wait reads as NULL");
    else
      CHECK(sqlite3_column_double(st, 3) == w->wait_s[rank], "view wait step %d rank %d", step, rank);
    rows++;
  }
  CHECK(rows == 6, "view rows %d", rows);
  sqlite3_finalize(st);
  sqlite3_close(q);
  for (int i = 0; i < na; i++)
    pit_record_release(&a[i]);
  for (int i = 0; i < nb; i++)
    pit_record_release(&b[i]);
}

static long long count(const char *db, const char *sql) {
  sqlite3 *q;
  sqlite3_stmt *st;
  long long v = -1;
  if (sqlite3_open_v2(db, &q, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(q, sql, -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(q);
  return v;
}

static void exec_sql(const char *db, const char *sql) {
  sqlite3 *q;
  char *msg = NULL;
  CHECK(sqlite3_open(db, &q) == SQLITE_OK && sqlite3_exec(q, sql, NULL, NULL, &msg) == SQLITE_OK, "exec %s: %s",
        sql, msg ? msg : "");
  sqlite3_free(msg);
  sqlite3_close(q);
}

static void migrations(void) {
  struct pit_err e = {0};
  struct pit_store *s;
  /* a new file and an existing empty file both get the whole schema */
  const char *fresh = path_in_tmp("fresh.db");
  CHECK(pit_store_open(&s, fresh, &e) == 0, "open fresh: %s", e.msg);
  CHECK(pit_store_close(s, &e) == 0, "close");
  const char *empty = path_in_tmp("empty.db");
  FILE *f = fopen(empty, "w");
  fclose(f);
  CHECK(pit_store_open_existing(&s, empty, &e) == 0, "open empty: %s", e.msg);
  CHECK(pit_store_close(s, &e) == 0, "close");
  for (int i = 0; i < 2; i++) {
    const char *db = i ? empty : fresh;
    CHECK(count(db, "PRAGMA user_version") == PIT_STORE_SCHEMA_VERSION, "user_version of %s", db);
    CHECK(count(db, "SELECT count(*) FROM migrations") == PIT_STORE_SCHEMA_VERSION, "migrations rows");
    CHECK(count(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('runs','configurations','inits',"
                    "'iterations','epochs','validations','checkpoints','nodes','decisions','ends',"
                    "'iteration_ranks')") == 11,
          "every table");
  }
  /* reopening does not re-apply */
  CHECK(pit_store_open(&s, fresh, &e) == 0 && pit_store_close(s, &e) == 0, "reopen");
  CHECK(count(fresh, "SELECT count(*) FROM migrations") == PIT_STORE_SCHEMA_VERSION, "applied once");

  /* a newer schema is refused and the file is not touched */
  const char *newer = path_in_tmp("newer.db");
  exec_sql(newer, "PRAGMA journal_mode=DELETE; CREATE TABLE future(x); PRAGMA user_version = 99;");
  struct stat before, after;
  stat(newer, &before);
  FILE *fp = fopen(newer, "rb");
  char b1[8192] = {0}, b2[8192] = {0};
  size_t n1 = fread(b1, 1, sizeof b1, fp);
  fclose(fp);
  int rc = pit_store_open(&s, newer, &e);
  char want[700];
  snprintf(want, sizeof want, "'%s': schema version 99 is newer than this pitstop (%d)", newer,
           PIT_STORE_SCHEMA_VERSION);
  CHECK(rc < 0 && strcmp(e.msg, want) == 0, "newer refused: rc %d '%s'", rc, e.msg);
  fp = fopen(newer, "rb");
  size_t n2 = fread(b2, 1, sizeof b2, fp);
  fclose(fp);
  stat(newer, &after);
  char wal[700];
  snprintf(wal, sizeof wal, "%s-wal", newer);
  CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0 && before.st_size == after.st_size && access(wal, F_OK) != 0,
        "newer file untouched");

  /* not a database; missing file for a reader */
  const char *junk = path_in_tmp("junk.db");
  fp = fopen(junk, "w");
  for (int i = 0; i < 200; i++)
    fputs("this is not sqlite at all\n", fp);
  fclose(fp);
  rc = pit_store_open(&s, junk, &e);
  CHECK(rc < 0 && strstr(e.msg, "cannot open") && strstr(e.msg, "not a pitstop database"), "junk: %s", e.msg);
  rc = pit_store_open_existing(&s, path_in_tmp("missing.db"), &e);
  CHECK(rc == PIT_ENOTFOUND && strstr(e.msg, "cannot open") && strstr(e.msg, "No such file") && e.hint[0],
        "missing: %s", e.msg);
  CHECK(access(path_in_tmp("missing.db"), F_OK) != 0, "missing file not created");
}

static void iter_rec(struct pit_record *r, const char *run, int step) {
  pit_record_release(r);
  r->type = PIT_REC_ITER;
  snprintf(r->run, sizeof r->run, "%s", run);
  r->t = step;
  r->epoch = 0;
  r->iter = step;
  r->step = step;
  r->step_s = 0.01;
  pit_record_set_ranks(r, 2);
  r->compute_s[0] = r->compute_s[1] = 0.009;
  r->wait_s[0] = r->wait_s[1] = 0.0;
}

static void failure_rolls_back(void) {
  struct pit_err e = {0};
  struct pit_store *s;
  struct pit_record r;
  pit_record_init(&r);
  /* An insert that fails in the middle (injected: a trigger rejects step 5). */
  for (int batch = 0; batch <= 4; batch += 4) {
    char name[32];
    snprintf(name, sizeof name, "fail%d.db", batch);
    const char *db = path_in_tmp(name);
    CHECK(pit_store_open(&s, db, &e) == 0 && pit_store_close(s, &e) == 0, "create");
    exec_sql(db, "CREATE TRIGGER boom BEFORE INSERT ON iterations WHEN NEW.step = 5"
                 " BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
    CHECK(pit_store_open(&s, db, &e) == 0, "open");
    pit_store_set_batch(s, batch);
    /* init + steps 0..2 (4 records: one batch of 4), then 3..6 */
    pit_record_release(&r);
    r.type = PIT_REC_INIT;
    snprintf(r.run, sizeof r.run, "r");
    r.init_s = 1;
    r.config = strdup("{\"model\":\"cnn\"}");
    int rc = pit_store_add(s, &r, &e), failed_at = -1;
    for (int step = 0; step < 7 && rc == 0; step++) {
      iter_rec(&r, "r", step);
      rc = pit_store_add(s, &r, &e);
      if (rc)
        failed_at = step;
    }
    if (rc == 0)
      rc = pit_store_close(s, &e);
    else {
      struct pit_err e2 = {0};
      iter_rec(&r, "r", 9);
      CHECK(pit_store_add(s, &r, &e2) == PIT_ESTATE, "add after failure refused");
      CHECK(pit_store_close(s, &e2) == PIT_ESTATE && strstr(e2.msg, "rolled back"), "close after failure says so");
    }
    CHECK(rc < 0 && strstr(e.msg, "injected failure"), "batch %d: failure reported: rc %d %s", batch, rc, e.msg);
    /* batch 0: all or nothing; batch 4: the first 4 records were committed
     * before the failing transaction began. */
    long long want_iters = batch ? 3 : 0, want_runs = batch ? 1 : 0;
    CHECK(count(db, "SELECT count(*) FROM iterations") == want_iters, "batch %d: iterations %lld (failed at %d)",
          batch, count(db, "SELECT count(*) FROM iterations"), failed_at);
    CHECK(count(db, "SELECT count(*) FROM runs") == want_runs && count(db, "SELECT count(*) FROM inits") == want_runs,
          "batch %d: runs/inits", batch);
    CHECK(count(db, "SELECT count(*) FROM configurations") == want_runs, "batch %d: configurations", batch);
    CHECK(count(db, "SELECT count(*) FROM iterations WHERE step > 2") == 0, "no row of the failed transaction");
    if (batch)
      CHECK(count(db, "SELECT last_seq - first_seq FROM runs") == 2, "run range of committed rows");
  }
  /* an invalid record is refused with a clear message */
  CHECK(pit_store_open(&s, path_in_tmp("inv.db"), &e) == 0, "open inv");
  pit_record_release(&r);
  r.type = PIT_REC_ITER;
  CHECK(pit_store_add(s, &r, &e) == PIT_EARG && strstr(e.msg, "without a run id"), "no run id: %s", e.msg);
  pit_store_abort(s);
  pit_record_release(&r);
}

/* Two processes write the same store at once (as parallel sweep runs do):
 * BEGIN IMMEDIATE serialises their transactions and every record keeps a
 * unique sequence number; both runs read back complete and in order. */
static void two_writers(void) {
  const char *db = path_in_tmp("two.db");
  struct pit_err e = {0};
  struct pit_store *s;
  CHECK(pit_store_open(&s, db, &e) == 0 && pit_store_close(s, &e) == 0, "create");
  const int n = 300;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    struct pit_record r;
    pit_record_init(&r);
    int bad = pit_store_open(&s, db, &e) != 0;
    pit_store_set_batch(s, 10);
    for (int i = 0; i < n && !bad; i++) {
      iter_rec(&r, "child", i);
      bad = pit_store_add(s, &r, &e) != 0;
      if (i % 10 == 9)
        usleep(20000); /* just committed: let the other writer in */
    }
    bad |= pit_store_close(s, &e) != 0;
    if (bad)
      fprintf(stderr, "child: %s\n", e.msg);
    pit_record_release(&r);
    _exit(bad);
  }
  struct pit_record r;
  pit_record_init(&r);
  CHECK(pit_store_open(&s, db, &e) == 0, "parent open: %s", e.msg);
  pit_store_set_batch(s, 10);
  for (int i = 0; i < n; i++) {
    iter_rec(&r, "parent", i);
    if (pit_store_add(s, &r, &e)) {
      CHECK(0, "parent add %d: %s", i, e.msg);
      break;
    }
    if (i % 10 == 9)
      usleep(20000);
  }
  CHECK(pit_store_close(s, &e) == 0, "parent close: %s", e.msg);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child wrote its run");
  CHECK(count(db, "SELECT count(DISTINCT seq) FROM iterations") == 2 * n, "unique seq");
  /* the writers did interleave (otherwise this test shows nothing) */
  CHECK(count(db, "SELECT max(seq) FROM iterations WHERE run_id = 1") > count(db, "SELECT min(seq) FROM iterations"
                                                                             " WHERE run_id = 2"),
        "transactions interleaved");
  CHECK(pit_store_open_existing(&s, db, &e) == 0, "reopen");
  for (int w = 0; w < 2; w++) {
    struct pit_store_cursor *c;
    CHECK(pit_store_cursor_open(s, w ? "child" : "parent", &c, &e) == 0, "cursor");
    int k = 0, ordered = 1;
    while (pit_store_cursor_next(c, &r, &e) == 1) {
      ordered &= r.step == k && strcmp(r.run, w ? "child" : "parent") == 0;
      k++;
    }
    CHECK(k == n && ordered, "run %d: %d records in order", w, k);
    pit_store_cursor_free(c);
  }
  pit_store_close(s, &e);
  pit_record_release(&r);
}

int main(void) {
  roundtrip();
  two_writers();
  migrations();
  failure_rolls_back();
  return check_done();
}
