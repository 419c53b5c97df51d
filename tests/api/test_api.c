/* test_api.c — the C instrumentation API (include/pitstop/pitstop.h) through the
 * static pit_api: a session written to a JSON Lines file reads back as the
 * records docs/records.md defines (init, iterations with epoch/iter/step and
 * the config's batch, data time inside the step time, validation, epoch,
 * checkpoint, end; rank when set); calls out of order, a bad run id or config,
 * and an unwritable destination return error codes and write nothing. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "pitstop/pitstop.h"
#include "pitstop/record.h"

static int read_all(const char *path, struct pit_record *recs, int max) {
  struct pit_record_reader rd;
  struct pit_err e = {0};
  if (pit_record_reader_open(&rd, path, &e))
    return -1;
  int n = 0, got;
  while (n < max) {
    pit_record_init(&recs[n]);
    got = pit_record_reader_next(&rd, &recs[n], &e);
    if (got != 1) {
      CHECK(got == 0, "record %d: %s", n, e.msg);
      pit_record_release(&recs[n]);
      break;
    }
    n++;
  }
  pit_record_reader_release(&rd);
  return n;
}

static void *validations(void *arg) {
  for (int i = 0; i < 500; i++)
    *(int *)arg += pit_validation(0.5, 0.001) != 0;
  return NULL;
}

static void busy(double secs) {
  struct timespec ts = {0, (long)(secs * 1e9)};
  nanosleep(&ts, NULL);
}

int main(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/api.jsonl", check_tmpdir());

  /* out of order before any session */
  CHECK(pit_iter_begin() == PITSTOP_ESTATE && strstr(pit_last_error(), "before pit_init"), "begin before init: %s",
        pit_last_error());
  CHECK(pit_finish() == PITSTOP_ESTATE, "finish before init");
  CHECK(pit_init_to("", NULL, path) == PITSTOP_EARG, "empty run id");
  CHECK(pit_init_to("a\nb", NULL, path) == PITSTOP_EARG, "run id with a newline");
  CHECK(pit_init_to("r", "[1,2]", path) == PITSTOP_EARG && strstr(pit_last_error(), "not a JSON object"),
        "config not an object: %s", pit_last_error());
  CHECK(pit_init_to("r", "{\"batch\":", path) == PITSTOP_EARG, "config truncated");
  CHECK(pit_init_to("r", NULL, "/nonexistent-dir/x.jsonl") == PITSTOP_EIO && strstr(pit_last_error(), "/nonexistent-dir"),
        "unwritable destination: %s", pit_last_error());

  /* a session: 2 epochs of 3 iterations, validation, checkpoint */
  CHECK(pit_init_to("toy", "{ \"model\": \"mlp\",\n \"batch\": 32, \"ranks\": 1 }", path) == 0, "init: %s",
        pit_last_error());
  CHECK(pit_init_to("again", NULL, path) == PITSTOP_ESTATE, "second init while open");
  CHECK(pit_iter_end(1.0) == PITSTOP_ESTATE, "end without begin");
  CHECK(pit_iter_data() == PITSTOP_ESTATE, "data outside an iteration");
  for (int ep = 0; ep < 2; ep++) {
    for (int i = 0; i < 3; i++) {
      CHECK(pit_iter_begin() == 0, "begin: %s", pit_last_error());
      CHECK(pit_iter_begin() == PITSTOP_ESTATE, "begin twice");
      busy(0.001);
      CHECK(pit_iter_data() == 0, "data");
      busy(0.002);
      CHECK(pit_iter_end(i == 2 ? NAN : 2.0 - 0.1 * i) == 0, "end: %s", pit_last_error());
    }
    CHECK(pit_validation(0.5 + ep * 0.1, 0.25) == 0, "validation");
    CHECK(pit_epoch_end() == 0, "epoch end");
  }
  CHECK(pit_set_rank(3) == 0 && pit_set_batch(8) == 0, "set rank and batch");
  CHECK(pit_set_batch(0) == PITSTOP_EARG, "batch 0");
  CHECK(pit_iter_begin() == 0 && pit_iter_end(INFINITY) == 0, "iteration with rank");
  CHECK(pit_checkpoint("/tmp/ck \"1\"", 1234, 0.5) == 0, "checkpoint");
  CHECK(pit_finish() == 0, "finish: %s", pit_last_error());
  CHECK(pit_finish() == PITSTOP_ESTATE, "finish twice");

  struct pit_record r[32];
  int n = read_all(path, r, 32);
  /* init, 3 iter, val, epoch, 3 iter, val, epoch, iter, ckpt, end */
  CHECK(n == 14, "14 records, got %d", n);
  if (n == 14) {
    CHECK(r[0].type == PIT_REC_INIT && strcmp(r[0].run, "toy") == 0 && r[0].ranks == 1 && r[0].config &&
              strstr(r[0].config, "\"batch\":32") && !strchr(r[0].config, '\n'),
          "init record (config on one line): %s", r[0].config ? r[0].config : "(none)");
    const struct pit_record *it = &r[5 + 2];  /* epoch 1, iter 1 */
    CHECK(it->type == PIT_REC_ITER && it->epoch == 1 && it->iter == 1 && it->step == 4 && it->batch == 32,
          "iteration fields: epoch %lld iter %lld step %lld batch %lld", (long long)it->epoch, (long long)it->iter,
          (long long)it->step, (long long)it->batch);
    CHECK(it->step_s >= 0.003 && it->data_s >= 0.001 && it->data_s < it->step_s, "data_s %g inside step_s %g",
          it->data_s, it->step_s);
    CHECK(r[1].loss == 2.0 && isnan(r[3].loss), "loss, and NaN loss omitted");
    CHECK(r[4].type == PIT_REC_VALIDATION && r[4].val_s == 0.25 && r[4].accuracy == 0.5 && r[4].epoch == 0,
          "validation");
    CHECK(r[5].type == PIT_REC_EPOCH && r[5].epoch == 0 && r[5].epoch_s >= 0.009, "epoch record %g", r[5].epoch_s);
    CHECK(r[11].type == PIT_REC_ITER && r[11].rank == 3 && r[11].batch == 8 && r[11].epoch == 2 && r[11].iter == 0 &&
              isnan(r[11].loss),
          "rank and batch set, infinite loss omitted");
    CHECK(r[12].type == PIT_REC_CHECKPOINT && r[12].path && strcmp(r[12].path, "/tmp/ck \"1\"") == 0 &&
              r[12].bytes == 1234,
          "checkpoint");
    CHECK(r[13].type == PIT_REC_END && r[13].total_s >= r[12].t, "end record");
    for (int i = 1; i < n; i++)
      CHECK(r[i].t >= r[i - 1].t, "t never decreases (%d)", i);
  }
  for (int i = 0; i < n; i++)
    pit_record_release(&r[i]);

  /* a process of a 4-process Open MPI job reports as its rank, the job's size as ranks */
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  char path2[600];
  snprintf(path2, sizeof path2, "%s/mpi.jsonl", check_tmpdir());
  CHECK(pit_init_to("mpi", NULL, path2) == 0 && pit_iter_begin() == 0 && pit_iter_end(1) == 0 && pit_finish() == 0,
        "mpi session: %s", pit_last_error());
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1); /* one process: the records cover the job */
  CHECK(pit_init_to("one", NULL, path2) == 0 && pit_iter_begin() == 0 && pit_iter_end(1) == 0 && pit_finish() == 0,
        "one-process session");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  n = read_all(path2, r, 32);
  CHECK(n == 6 && r[0].rank == 2 && r[0].ranks == 4 && r[1].rank == 2 && r[3].rank == -1 && r[4].rank == -1,
        "ranks from the environment: n=%d", n);
  for (int i = 0; i < n; i++)
    pit_record_release(&r[i]);

  /* calls from two threads never tear a record: iterations in one, validations in the other */
  snprintf(path2, sizeof path2, "%s/threads.jsonl", check_tmpdir());
  CHECK(pit_init_to("threads", NULL, path2) == 0, "threads session");
  pthread_t th;
  int bad = 0, bad_val = 0;
  CHECK(pthread_create(&th, NULL, validations, &bad_val) == 0, "thread");
  for (int i = 0; i < 500; i++)
    bad += pit_iter_begin() != 0 || pit_iter_end(i) != 0;
  pthread_join(th, NULL);
  CHECK(bad == 0 && bad_val == 0 && pit_finish() == 0, "no call failed (%d, %d)", bad, bad_val);
  struct pit_record *many = calloc(1100, sizeof *many);
  n = read_all(path2, many, 1100);
  CHECK(n == 1002, "1002 whole records, got %d", n);
  for (int i = 0; i < n; i++)
    pit_record_release(&many[i]);
  free(many);

  /* a new session appends to the same file */
  CHECK(pit_init_to("second", NULL, path) == 0 && pit_finish() == 0, "second session");
  n = read_all(path, r, 32);
  CHECK(n == 16 && strcmp(r[15].run, "second") == 0 && r[14].type == PIT_REC_INIT, "appended: %d records", n);
  for (int i = 0; i < n; i++)
    pit_record_release(&r[i]);
  return check_done();
}
