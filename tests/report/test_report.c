/* test_report.c — the report module without the CLI: price catalogs (parsing,
 * errors naming file:line, billed seconds), run sets loaded from a store
 * written here (selection, unknown run, empty store), and pit_plot from the
 * store to PNG (skipped when gnuplot is missing) including an unwritable
 * output that leaves nothing behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/report.h"
#include "pitstop/store.h"

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static void test_catalog(const char *dir) {
  char path[512];
  struct pit_err e = {0};
  struct pit_catalog c;
  snprintf(path, sizeof path, "%s/cat.tsv", dir);
  write_file(path, "# comment\n\nc5.xlarge\t4\t0.17\t1\t60\n  m5.large 2 0.096 3600 0\n");
  CHECK(pit_catalog_load(&c, path, &e) == 0, "load: %s", e.msg);
  CHECK(c.n == 2, "two types, got %d", c.n);
  const struct pit_itype *t = pit_catalog_find(&c, "m5.large");
  CHECK(t && t->vcpus == 2 && t->price_h == 0.096 && t->billing_s == 3600, "m5.large fields");
  CHECK(pit_catalog_find(&c, "c5.large") == NULL, "unknown type");
  t = pit_catalog_find(&c, "c5.xlarge");
  CHECK(t && pit_itype_billed_s(t, 10) == 60, "minimum 60 s");
  CHECK(t && pit_itype_billed_s(t, 61.2) == 62, "per-second billing rounds up");
  t = pit_catalog_find(&c, "m5.large");
  CHECK(t && pit_itype_billed_s(t, 3601) == 7200, "hourly billing rounds up to the hour");
  pit_catalog_release(&c);

  const char *bad[][2] = {{"a 1 0.1 1\n", ":1: expected 5 fields"},
                          {"# x\na 0 0.1 1 60\n", ":2: vcpus '0'"},
                          {"a 1 -3 1 60\n", ":1: price_h '-3'"},
                          {"a 1 0.1 0 60\n", ":1: billing_s '0'"},
                          {"a 1 0.1 1 60\na 2 0.2 1 60\n", ":2: instance type 'a' listed twice"},
                          {"# only comments\n", "lists no instance type"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_file(path, bad[i][0]);
    memset(&e, 0, sizeof e);
    CHECK(pit_catalog_load(&c, path, &e) == PIT_EFORMAT && strstr(e.msg, bad[i][1]) && strstr(e.msg, "cat.tsv"),
          "bad catalog %zu: '%s'", i, e.msg);
  }
  snprintf(path, sizeof path, "%s/missing.tsv", dir);
  CHECK(pit_catalog_load(&c, path, &e) == PIT_ENOTFOUND && strstr(e.msg, "missing.tsv"), "missing: %s", e.msg);
}

/* A run of n iterations (1 epoch) with batch and ranks into the store. */
static void add_run(struct pit_store *s, const char *name, int batch, int ranks, double tp) {
  struct pit_record r;
  struct pit_err e = {0};
  pit_record_init(&r);
  r.type = PIT_REC_INIT;
  snprintf(r.run, sizeof r.run, "%s", name);
  r.gen = 0;
  r.t = 0.1;
  r.init_s = 0.1;
  r.ranks = ranks;
  r.nodes = 1;
  char cfg[200];
  snprintf(cfg, sizeof cfg, "{\"model\":\"cnn\",\"batch\":%d,\"ranks\":%d,\"threads\":1,\"itype\":\"c5.xlarge\"}", batch,
           ranks);
  r.config = strdup(cfg);
  CHECK(pit_store_add(s, &r, &e) == 0, "add init: %s", e.msg);
  pit_record_release(&r);
  for (int i = 0; i < 60; i++) {
    pit_record_init(&r);
    r.type = PIT_REC_ITER;
    snprintf(r.run, sizeof r.run, "%s", name);
    r.gen = 0;
    r.t = 0.1 + i * tp;
    r.epoch = 0;
    r.iter = r.step = i;
    r.batch = batch;
    r.step_s = tp * (1 + 0.01 * ((i * 7) % 5)) * (i < 5 ? 3 : 1);
    r.data_s = 0;
    pit_record_set_ranks(&r, ranks);
    for (int k = 0; k < ranks; k++) {
      r.compute_s[k] = r.step_s * 0.9;
      r.wait_s[k] = r.step_s * 0.1;
    }
    CHECK(pit_store_add(s, &r, &e) == 0, "add iter: %s", e.msg);
    pit_record_release(&r);
  }
}

static int have_gnuplot(void) {
  char *argv[] = {"gnuplot", "--version", NULL};
  int st = -1;
  struct pit_err e = {0};
  return pit_child_run(argv, 1, &st, NULL, 0, &e) == 0 && st == 0;
}

static void test_store_plots(const char *dir) {
  char db[512], empty[512], out[600];
  struct pit_err e = {0};
  struct pit_store *s;
  snprintf(db, sizeof db, "%s/runs.db", dir);
  snprintf(empty, sizeof empty, "%s/empty.db", dir);
  CHECK(pit_store_open(&s, db, &e) == 0, "open: %s", e.msg);
  add_run(s, "a1", 16, 1, 0.010);
  add_run(s, "a2", 16, 2, 0.006);
  add_run(s, "b1", 64, 1, 0.030);
  add_run(s, "b2", 64, 2, 0.017);
  CHECK(pit_store_close(s, &e) == 0, "close: %s", e.msg);
  CHECK(pit_store_open(&s, empty, &e) == 0, "open empty: %s", e.msg);
  pit_store_close(s, &e);

  struct pit_runset rs;
  pit_runset_init(&rs);
  char *only[] = {"b2", "a1"};
  CHECK(pit_runset_load_store(&rs, db, only, 2, &e) == 0, "load two: %s", e.msg);
  CHECK(rs.n == 2 && strcmp(rs.runs[0].name, "a1") == 0 && strcmp(rs.runs[1].name, "b2") == 0, "two runs in store order");
  CHECK(pit_runset_summarize(&rs, &e) == 0, "summarize: %s", e.msg);
  CHECK(rs.runs[1].cfg.batch == 64 && rs.runs[1].cfg.ranks == 2, "config of b2");
  CHECK(fabs(rs.runs[0].sum.tp.mean - 0.0102) < 0.001, "t_p of a1 from the analysis module: %g", rs.runs[0].sum.tp.mean);
  pit_runset_release(&rs);

  char *nope[] = {"nope"};
  CHECK(pit_runset_load_store(&rs, db, nope, 1, &e) == PIT_ENOTFOUND && strstr(e.msg, "no run named 'nope'"),
        "unknown run: %s", e.msg);
  pit_runset_release(&rs);
  CHECK(pit_runset_load_store(&rs, empty, NULL, 0, &e) == 0, "empty store loads");
  CHECK(pit_runset_check(&rs, NULL, 0, "'empty.db'", &e) == PIT_ENOTFOUND && strstr(e.msg, "holds no runs"),
        "empty store: %s", e.msg);
  pit_runset_release(&rs);

  if (!have_gnuplot()) {
    fprintf(stderr, "gnuplot not found: chart checks skipped\n");
    return;
  }
  CHECK(pit_runset_load_store(&rs, db, NULL, 0, &e) == 0 && pit_runset_summarize(&rs, &e) == 0, "load all: %s", e.msg);
  struct pit_plot_opts o;
  pit_plot_opts_init(&o);
  const enum pit_plot_kind kinds[] = {PIT_PLOT_BATCH, PIT_PLOT_SCALING};
  for (int k = 0; k < 2; k++) {
    o.kind = kinds[k];
    snprintf(out, sizeof out, "%s/k%d.png", dir, k);
    o.out = out;
    CHECK(pit_plot(&rs, &o, &e) == 0, "plot kind %d: %s", k, e.msg);
    unsigned char sig[8] = {0};
    FILE *f = fopen(out, "rb");
    CHECK(f && fread(sig, 1, 8, f) == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0, "PNG signature of %s", out);
    if (f)
      fclose(f);
  }
  o.kind = PIT_PLOT_STEPS;
  snprintf(out, sizeof out, "%s/steps.png", dir);
  CHECK(pit_plot(&rs, &o, &e) == PIT_EARG && strstr(e.msg, "one run"), "steps of 4 runs: %s", e.msg);
  CHECK(access(out, F_OK) != 0, "no file after the error");
  o.kind = PIT_PLOT_BATCH;
  snprintf(out, sizeof out, "%s/no-such-dir/x.png", dir);
  CHECK(pit_plot(&rs, &o, &e) != 0 && strstr(e.msg, "no-such-dir"), "unwritable: %s", e.msg);
  CHECK(access(out, F_OK) != 0, "no file");
  pit_runset_release(&rs);
}

int main(void) {
  const char *dir = check_tmpdir();
  test_catalog(dir);
  test_store_plots(dir);
  return check_done();
}
