/* test_membership_store.c — a heterogeneous membership (two instance types)
 * round-trips through the store: runs list it, the members table holds one row
 * per type, and the init record read back gives the same configuration; a store
 * of schema version 1 (tests/store/fixtures/schema-v1.sql, written by the build
 * before the membership migration) still opens, is migrated, reads back its
 * runs with the membership their single type implies, and takes new runs. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sql_fixture.h"
#include "pitstop/analysis.h"
#include "pitstop/store.h"

static long long query_i(const char *db, const char *sql) {
  sqlite3 *h = NULL;
  sqlite3_stmt *st = NULL;
  long long v = -1;
  if (sqlite3_open(db, &h) == SQLITE_OK && sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static void add_init(struct pit_store *s, const char *run, const char *config, int ranks, int nodes) {
  struct pit_record r;
  struct pit_err e = {0};
  pit_record_init(&r);
  r.type = PIT_REC_INIT;
  snprintf(r.run, sizeof r.run, "%s", run);
  r.init_s = 0.5;
  r.ranks = ranks;
  r.nodes = nodes;
  r.config = strdup(config);
  CHECK(pit_store_add(s, &r, &e) == 0, "add init: %s", e.msg);
  pit_record_release(&r);
}

static const struct pit_store_run *find_run(const struct pit_store_run *runs, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(runs[i].name, name) == 0)
      return &runs[i];
  return NULL;
}

static void heterogeneous(void) {
  char db[600];
  snprintf(db, sizeof db, "%s/het.db", check_tmpdir());
  struct pit_store *s = NULL;
  struct pit_err e = {0};
  CHECK(pit_store_open(&s, db, &e) == 0, "open: %s", e.msg);
  add_init(s, "het",
           "{\"model\":\"cnn\",\"batch\":64,\"threads\":1,\"membership\":[{\"itype\":\"m5.large\",\"nodes\":2,"
           "\"ranks_per_node\":1},{\"itype\":\"c5.xlarge\",\"nodes\":1,\"ranks_per_node\":4}]}",
           -1, -1);
  add_init(s, "one", "{\"model\":\"cnn\",\"batch\":64,\"threads\":1,\"itype\":\"c5.xlarge\"}", 4, 2);
  struct pit_store_run *runs = NULL;
  int n = 0;
  CHECK(pit_store_runs(s, &runs, &n, &e) == 0 && n == 2, "runs: %d %s", n, e.msg);
  struct pit_membership want;
  CHECK(pit_membership_parse(&want, "c5.xlarge:1x4+m5.large:2x1", &e) == 0, "parse: %s", e.msg);
  const struct pit_store_run *h = find_run(runs, n, "het");
  CHECK(h && pit_membership_equal(&h->members, &want), "stored membership equals the written one");
  CHECK(h && strcmp(h->itype, "c5.xlarge:1x4+m5.large:2x1") == 0 && h->nodes == 3 && h->ranks == 6,
        "itype text and totals: '%s' %d nodes %d ranks", h ? h->itype : "", h ? h->nodes : 0, h ? h->ranks : 0);
  const struct pit_store_run *o = find_run(runs, n, "one");
  CHECK(o && o->members.n == 1 && strcmp(o->members.m[0].itype, "c5.xlarge") == 0 && o->members.m[0].nodes == 2 &&
            o->members.m[0].ranks_per_node == 2 && strcmp(o->itype, "c5.xlarge") == 0,
        "a single-type run keeps itype and gets {c5.xlarge, 2 nodes, 2 ranks per node}");
  pit_store_runs_free(runs, n);

  struct pit_store_cursor *c = NULL;
  struct pit_record r;
  pit_record_init(&r);
  CHECK(pit_store_cursor_open(s, "het", &c, &e) == 0 && pit_store_cursor_next(c, &r, &e) == 1, "cursor: %s", e.msg);
  struct pit_config cfg;
  pit_config_from_record(&cfg, &r);
  CHECK(pit_membership_equal(&cfg.members, &want), "the init record read back gives the membership");
  char key[512];
  pit_config_key(&cfg, key, sizeof key);
  CHECK(strcmp(key, "model=cnn batch=64 ranks=6 nodes=3 itype=c5.xlarge:1x4+m5.large:2x1 threads=1") == 0,
        "key '%s'", key);
  pit_record_release(&r);
  pit_store_cursor_free(c);
  CHECK(pit_store_close(s, &e) == 0, "close: %s", e.msg);
  CHECK(query_i(db, "SELECT count(*) FROM members m JOIN runs r ON r.configuration_id = m.configuration_id"
                    " WHERE r.name = 'het'") == 2,
        "two members rows");
  CHECK(query_i(db, "SELECT sum(m.nodes * m.ranks_per_node) FROM members m JOIN runs r"
                    " ON r.configuration_id = m.configuration_id WHERE r.name = 'het'") == 6,
        "members rows carry nodes and ranks per node");
}

static void old_store_opens(void) {
  char db[600];
  snprintf(db, sizeof db, "%s/v1.db", check_tmpdir());
  if (!sql_fixture_load("schema-v1.sql", db))
    return;
  CHECK(query_i(db, "PRAGMA user_version") == 1, "the fixture is a version-1 store");

  struct pit_store *s = NULL;
  struct pit_err e = {0};
  CHECK(pit_store_open_existing(&s, db, &e) == 0, "old store opens: %s", e.msg);
  if (!s)
    return;
  CHECK(pit_store_schema_version(s) == PIT_STORE_SCHEMA_VERSION, "migrated");
  struct pit_store_run *runs = NULL;
  int n = 0;
  CHECK(pit_store_runs(s, &runs, &n, &e) == 0 && n == 2, "old runs listed: %d %s", n, e.msg);
  const struct pit_store_run *a = find_run(runs, n, "r-c5.xlarge-r2-b16-0"), *b = find_run(runs, n, "r---r2-b16-0");
  CHECK(a && a->members.n == 1 && strcmp(a->members.m[0].itype, "c5.xlarge") == 0 && a->members.m[0].nodes == 1 &&
            a->members.m[0].ranks_per_node == 2 && strcmp(a->itype, "c5.xlarge") == 0 && a->niters == 6,
        "old single-type run: membership c5.xlarge:1x2, 6 iterations");
  CHECK(b && b->members.n == 0 && b->itype[0] == '\0', "old run without type: no membership");
  pit_store_runs_free(runs, n);
  struct pit_store_cursor *c = NULL;
  struct pit_record r;
  pit_record_init(&r);
  int got = 0, rc;
  CHECK(pit_store_cursor_open(s, "r-c5.xlarge-r2-b16-0", &c, &e) == 0, "cursor: %s", e.msg);
  while (c && (rc = pit_store_cursor_next(c, &r, &e)) == 1)
    got++;
  CHECK(got == 10, "old run's records read back: %d", got);
  pit_record_release(&r);
  pit_store_cursor_free(c);
  add_init(s, "new", "{\"model\":\"cnn\",\"batch\":16,\"membership\":\"c5.xlarge:1+m5.large:1\"}", 2, 2);
  CHECK(pit_store_close(s, &e) == 0, "close: %s", e.msg);
  CHECK(query_i(db, "SELECT count(*) FROM members") == 3, "members: 1 backfilled + 2 new");
  CHECK(query_i(db, "SELECT count(*) FROM runs WHERE membership = 'c5.xlarge:1x2'") == 1, "backfilled runs.membership");
}

int main(void) {
  heterogeneous();
  old_store_opens();
  return check_done();
}
