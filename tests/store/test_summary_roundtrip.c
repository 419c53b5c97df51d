/* test_summary_roundtrip.c — the round trip of issue 4: a JSON Lines fixture
 * with known numbers (written here) → the store (pit_store_add, as
 * `pitstop train --db` does) → `pitstop summary --format json`, checked against
 * the same statistics computed independently from the fixture by
 * tests/store/summary_check.py (Python standard library only). Also: summary
 * straight from the --events file prints exactly the same JSON (the store
 * loses nothing), --group-by works, and bad input gives clear errors. */
#include <math.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/record.h"
#include "pitstop/store.h"

static const char *pitstop, *srcdir;
static char dir[512];

/* deterministic noise in [-1, 1) */
static uint64_t lcg = 12345;
static double noise(void) {
  lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((double)(lcg >> 11) / 9007199254740992.0) * 2 - 1;
}

static void put(struct pit_events *ev, struct pit_record *r) {
  struct pit_err e = {0};
  CHECK(pit_events_write(ev, r, &e) == 0, "write: %s", e.msg);
  pit_record_release(r);
}

/* Three runs: r1 and r2 (cnn, batch 64, 2 ranks; r2 resumes as generation 1),
 * r3 (batch 128, one rank). 4 epochs × 30 iterations; the first 12 slow;
 * validation after every epoch; a checkpoint after step 45; rank 1 slower. */
static void write_fixture(const char *path) {
  struct pit_events ev;
  struct pit_err e = {0};
  CHECK(pit_events_open(&ev, path, &e) == 0, "open fixture: %s", e.msg);
  const char *names[3] = {"r1", "r2", "r3"};
  for (int ri = 0; ri < 3; ri++) {
    int batch = ri == 2 ? 128 : 64, ranks = ri == 2 ? 1 : 2;
    struct pit_record r;
    double t = 0;
    int64_t step = 0;
    for (int ep = 0; ep < 4; ep++) {
      int gen = (ri == 1 && ep >= 2) ? 1 : 0;
      if (ep == 0 || (ri == 1 && ep == 2)) {
        pit_record_init(&r);
        r.type = PIT_REC_INIT;
        snprintf(r.run, sizeof r.run, "%s", names[ri]);
        r.gen = gen;
        r.t = t;
        r.init_s = 1.25 + 0.5 * ri + 0.1 * gen;
        r.rdzv_s = 0.05 * (ri + 1);
        r.ranks = ranks;
        r.nodes = 1;
        char cfg[160];
        snprintf(cfg, sizeof cfg, "{\"model\":\"cnn\",\"batch\":%d,\"threads\":1,\"data\":\"synthetic\"}", batch);
        r.config = strdup(cfg);
        t += r.init_s;
        put(&ev, &r);
      }
      for (int i = 0; i < 30; i++) {
        pit_record_init(&r);
        r.type = PIT_REC_ITER;
        snprintf(r.run, sizeof r.run, "%s", names[ri]);
        r.gen = gen;
        r.epoch = ep;
        r.iter = i;
        r.step = step;
        r.batch = batch;
        double base = 0.01 * (1 + ri * 0.5);
        r.step_s = (step < 12 ? 3 * base : base) * (1 + 0.02 * noise());
        r.data_s = 0.0004 * (1 + 0.1 * noise());
        pit_record_set_ranks(&r, ranks);
        for (int k = 0; k < ranks; k++) {
          r.compute_s[k] = r.step_s * (k ? 0.9 : 0.7) * (1 + 0.01 * noise());
          r.wait_s[k] = r.step_s * (k ? 0.02 : 0.2);
        }
        r.loss = 2.3 - 0.01 * (double)step;
        t += r.step_s;
        r.t = t;
        put(&ev, &r);
        if (step == 45) {
          pit_record_init(&r);
          r.type = PIT_REC_CHECKPOINT;
          snprintf(r.run, sizeof r.run, "%s", names[ri]);
          r.gen = gen;
          r.step = step;
          r.ckpt_s = 0.3 + 0.01 * ri;
          r.path = strdup("ck.bin");
          r.bytes = 1000;
          t += r.ckpt_s;
          r.t = t;
          put(&ev, &r);
        }
        step++;
      }
      pit_record_init(&r);
      r.type = PIT_REC_VALIDATION;
      snprintf(r.run, sizeof r.run, "%s", names[ri]);
      r.gen = gen;
      r.epoch = ep;
      r.val_s = 0.4 + 0.05 * noise();
      r.accuracy = 0.5 + 0.1 * ep;
      t += r.val_s;
      r.t = t;
      put(&ev, &r);
      pit_record_init(&r);
      r.type = PIT_REC_EPOCH;
      snprintf(r.run, sizeof r.run, "%s", names[ri]);
      r.gen = gen;
      r.epoch = ep;
      r.epoch_s = 0.35 * (1 + ri * 0.5) + 0.4;
      r.t = t;
      put(&ev, &r);
    }
    if (ri == 0) { /* only r1 says its total; the others use their last t */
      pit_record_init(&r);
      r.type = PIT_REC_END;
      snprintf(r.run, sizeof r.run, "%s", names[ri]);
      r.total_s = t + 0.1;
      r.t = t + 0.1;
      put(&ev, &r);
    }
  }
  CHECK(pit_events_flush(&ev, &e) == 0, "flush");
  pit_events_release(&ev);
}

static void load_store(const char *jsonl, const char *db) {
  struct pit_record_reader rd;
  struct pit_err e = {0};
  struct pit_store *s;
  CHECK(pit_record_reader_open(&rd, jsonl, &e) == 0, "reader: %s", e.msg);
  CHECK(pit_store_open(&s, db, &e) == 0, "store: %s", e.msg);
  struct pit_record r;
  pit_record_init(&r);
  int rc, n = 0;
  while ((rc = pit_record_reader_next(&rd, &r, &e)) == 1) {
    CHECK(pit_store_add(s, &r, &e) == 0, "add: %s", e.msg);
    n++;
  }
  CHECK(rc == 0 && n > 300, "read %d records (%s)", n, e.msg);
  CHECK(pit_store_close(s, &e) == 0, "close: %s", e.msg);
  pit_record_release(&r);
  pit_record_reader_release(&rd);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
  char cmd[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  if (b)
    b[n] = 0;
  fclose(f);
  return b;
}

int main(void) {
  pitstop = getenv("PITSTOP");
  srcdir = getenv("PIT_SOURCE_DIR");
  if (!pitstop || !srcdir) {
    fprintf(stderr, "PITSTOP and PIT_SOURCE_DIR must be set (ctest sets them)\n");
    return 1;
  }
  snprintf(dir, sizeof dir, "%s", check_tmpdir());
  char fx[600], db[600];
  snprintf(fx, sizeof fx, "%s/fixture.jsonl", dir);
  snprintf(db, sizeof db, "%s/rt.db", dir);
  write_fixture(fx);
  load_store(fx, db);

  /* store → summary json → independent check */
  CHECK(sh("'%s' summary --db '%s' --format json > '%s/db.json' 2> '%s/err.txt'", pitstop, db, dir, dir) == 0,
        "summary --db");
  CHECK(sh("/usr/bin/python3 '%s/tests/store/summary_check.py' '%s' '%s/db.json'", srcdir, fx, dir) == 0,
        "independent statistics agree (store)");
  /* the same from the records file: byte-identical */
  CHECK(sh("'%s' summary --events '%s' --format json > '%s/ev.json'", pitstop, fx, dir) == 0, "summary --events");
  char p1[700], p2[700];
  snprintf(p1, sizeof p1, "%s/db.json", dir);
  snprintf(p2, sizeof p2, "%s/ev.json", dir);
  char *a = slurp(p1), *b = slurp(p2);
  CHECK(a && b && strcmp(a, b) == 0, "store and file give the same summary");
  free(a);
  free(b);
  /* grouping by another field, a subset of runs */
  CHECK(sh("'%s' summary --db '%s' --group-by data --format json r1 r2 > '%s/g.json'", pitstop, db, dir) == 0,
        "group-by data");
  char fx12[600];
  snprintf(fx12, sizeof fx12, "%s/fixture12.jsonl", dir);
  CHECK(sh("grep -v '\"run\":\"r3\"' '%s' > '%s'", fx, fx12) == 0, "subset fixture");
  CHECK(sh("/usr/bin/python3 '%s/tests/store/summary_check.py' --group-by data '%s' '%s/g.json'", srcdir, fx12,
           dir) == 0,
        "independent statistics agree (group-by data, runs r1 r2)");
  CHECK(sh("'%s' summary --db '%s' --format csv > '%s/s.csv'", pitstop, db, dir) == 0, "csv");
  CHECK(sh("test $(wc -l < '%s/s.csv') -eq 6", dir) == 0, "csv: header + 3 runs + 2 groups");
  CHECK(sh("'%s' summary --db '%s' > '%s/s.txt' && grep -q 't_p' '%s/s.txt'", pitstop, db, dir, dir) == 0, "table");

  /* bad input */
  CHECK(sh("'%s' summary --db '%s/missing.db' 2> '%s/e1.txt'", pitstop, dir, dir) == 1, "missing db exits 1");
  CHECK(sh("grep -q \"pitstop: cannot open '%s/missing.db': No such file\" '%s/e1.txt' && grep -q hint '%s/e1.txt'",
           dir, dir, dir) == 0,
        "missing db message");
  CHECK(sh("test ! -e '%s/missing.db'", dir) == 0, "missing db not created");
  char empty[600];
  snprintf(empty, sizeof empty, "%s/empty.db", dir);
  struct pit_store *s;
  struct pit_err e = {0};
  CHECK(pit_store_open(&s, empty, &e) == 0 && pit_store_close(s, &e) == 0, "empty store");
  CHECK(sh("'%s' summary --db '%s' 2> '%s/e2.txt'", pitstop, empty, dir) == 1, "empty store exits 1");
  CHECK(sh("grep -q 'holds no runs' '%s/e2.txt'", dir) == 0, "empty store message");
  CHECK(sh("sqlite3 '%s' 'PRAGMA user_version = 7' 2>/dev/null || /usr/bin/python3 -c \"import sqlite3; "
           "c = sqlite3.connect('%s'); c.execute('PRAGMA user_version = 7'); c.commit()\"",
           empty, empty) == 0,
        "set a newer version");
  CHECK(sh("'%s' summary --db '%s' 2> '%s/e3.txt'", pitstop, empty, dir) == 1, "newer schema exits 1");
  CHECK(sh("grep -q 'schema version 7 is newer than this pitstop (%d)' '%s/e3.txt'", PIT_STORE_SCHEMA_VERSION, dir) ==
            0,
        "newer schema message");
  CHECK(sh("'%s' summary --db '%s' nosuchrun 2> '%s/e4.txt'", pitstop, db, dir) == 1, "unknown run exits 1");
  CHECK(sh("grep -q \"no run named 'nosuchrun'\" '%s/e4.txt'", dir) == 0, "unknown run message");
  CHECK(sh("head -c 100000 /dev/urandom > '%s/bin.dat'; '%s' summary --events '%s/bin.dat' 2> '%s/e5.txt'", dir,
           pitstop, dir, dir) == 1,
        "binary file exits 1");
  CHECK(sh("grep -q 'no records' '%s/e5.txt'", dir) == 0, "binary file message");
  CHECK(sh("head -c 3000 '%s' > '%s/trunc.jsonl'; '%s' summary --events '%s/trunc.jsonl' > /dev/null 2> '%s/e6.txt'",
           fx, dir, pitstop, dir, dir) == 0,
        "truncated last line: the rest is summarized");
  CHECK(sh("grep -q 'trunc.jsonl:[0-9]*: ' '%s/e6.txt'", dir) == 0, "truncated line named file:line");
  CHECK(sh("'%s' summary --format xml --db '%s' 2>/dev/null", pitstop, db) == 2, "bad --format is a usage error");
  return check_done();
}
