/* api.c — libpitstop: the C API of include/pitstop/pitstop.h for programs that
 * are not pitstop (docs/api.md). One session per process, guarded by a mutex;
 * every call formats one record (src/record) and writes it as one line —
 * "PITSTOP {json}" on stdout/stderr, or plain JSON Lines to a file opened for
 * appending. Invariants: nothing here exits, aborts or prints anything but
 * records; a call out of order changes nothing and writes nothing; a record
 * line is written with a single stdio write and flushed. */
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/pitstop.h"
#include "pitstop/record.h"
#include "pitstop/util.h"

struct session {
  int active;
  char run[PIT_NAME_MAX];
  char *config;            /* normalised JSON object text, or NULL */
  long long batch;         /* -1: unknown */
  int ranks, nodes;        /* from the config; -1: unknown */
  int rank;                /* -1: records cover the whole job */
  int gen;
  FILE *fp;
  int owns_fp, prefixed;
  double t0;               /* pit_init */
  int init_written;
  int in_iter;
  double it_begin, it_data;
  long long epoch, iter, step;
  double epoch_begin;      /* NaN until the first iteration of the epoch */
  char *buf;               /* formatting buffer */
  size_t cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct session S;
static _Thread_local char last_error[512];

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return code;
}

const char *pit_last_error(void) { return last_error; }

/* A record of the session with the common fields set. */
static void rec_start(struct pit_record *r, enum pit_rec_type type) {
  pit_record_init(r);
  r->type = type;
  snprintf(r->run, sizeof r->run, "%s", S.run);
  r->gen = S.gen;
  r->t = pit_now() - S.t0;
  r->rank = S.rank;
}

/* Formats and writes r (then releases it). Caller holds the lock. */
static int emit(struct pit_record *r) {
  int n = pit_record_format(r, &S.buf, &S.cap);
  r->config = NULL; /* borrowed from the session */
  pit_record_release(r);
  if (n < 0)
    return fail(PITSTOP_ENOMEM, "pitstop: cannot format a record (out of memory)");
  if ((S.prefixed && fputs("PITSTOP ", S.fp) == EOF) || fwrite(S.buf, 1, (size_t)n, S.fp) != (size_t)n ||
      fflush(S.fp) != 0)
    return fail(PITSTOP_EIO, "pitstop: cannot write the records of run '%s'", S.run);
  return PITSTOP_OK;
}

static int write_init(void) {
  struct pit_record r;
  rec_start(&r, PIT_REC_INIT);
  r.init_s = r.t;
  r.ranks = S.ranks;
  r.nodes = S.nodes;
  r.config = S.config;
  S.init_written = 1;
  return emit(&r);
}

static void session_reset(void) {
  if (S.owns_fp && S.fp)
    fclose(S.fp);
  free(S.config);
  free(S.buf);
  memset(&S, 0, sizeof S);
}

/* Reads batch/ranks/nodes from the config and keeps its one-line text. */
static int take_config(const char *config_json) {
  S.batch = -1;
  S.ranks = S.nodes = -1;
  if (!config_json)
    return 0;
  cJSON *c = cJSON_Parse(config_json);
  if (!c || !cJSON_IsObject(c)) {
    cJSON_Delete(c);
    return fail(PITSTOP_EARG, "pitstop: the configuration is not a JSON object: %.80s", config_json);
  }
  const cJSON *v;
  if ((v = cJSON_GetObjectItemCaseSensitive(c, "batch")) && cJSON_IsNumber(v) && v->valuedouble >= 1)
    S.batch = (long long)v->valuedouble;
  if ((v = cJSON_GetObjectItemCaseSensitive(c, "ranks")) && cJSON_IsNumber(v) && v->valuedouble >= 1)
    S.ranks = (int)v->valuedouble;
  if ((v = cJSON_GetObjectItemCaseSensitive(c, "nodes")) && cJSON_IsNumber(v) && v->valuedouble >= 1)
    S.nodes = (int)v->valuedouble;
  S.config = pit_json_print(c);
  cJSON_Delete(c);
  if (!S.config)
    return fail(PITSTOP_ENOMEM, "pitstop: out of memory");
  return 0;
}

/* A process of a job of several (Open MPI, MPICH/PMI, torchrun) reports its
 * own view: its rank from the launcher's environment, and the job's size as
 * ranks unless the config says. PITSTOP_RANK overrides. */
static void detect_rank(void) {
  static const char *vars[][2] = {{"PITSTOP_RANK", NULL},
                                  {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                  {"PMI_RANK", "PMI_SIZE"},
                                  {"RANK", "WORLD_SIZE"}};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *r = getenv(vars[i][0]), *n = vars[i][1] ? getenv(vars[i][1]) : NULL;
    int64_t rank, size = -1;
    if (!r || pit_parse_i64(r, &rank) || rank < 0 || rank > 1000000)
      continue;
    if (vars[i][1] && (!n || pit_parse_i64(n, &size) || size < 2 || rank >= size))
      continue; /* a job of one process: records cover it all */
    S.rank = (int)rank;
    if (size > 1 && S.ranks < 1)
      S.ranks = (int)size;
    return;
  }
}

int pit_init_to(const char *run, const char *config_json, const char *dest) {
  pthread_mutex_lock(&lock);
  int rc = 0;
  if (S.active) {
    rc = fail(PITSTOP_ESTATE, "pitstop: pit_init: run '%s' is still open (call pit_finish first)", S.run);
    goto out;
  }
  size_t n = run ? strlen(run) : 0;
  if (n == 0 || n >= PIT_NAME_MAX) {
    rc = fail(PITSTOP_EARG, "pitstop: pit_init: the run id must have 1 to %d characters", PIT_NAME_MAX - 1);
    goto out;
  }
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)run[i] < 0x20 || run[i] == 0x7f) {
      rc = fail(PITSTOP_EARG, "pitstop: pit_init: the run id has a control character");
      goto out;
    }
  memset(&S, 0, sizeof S);
  if ((rc = take_config(config_json)) != 0) {
    session_reset();
    goto out;
  }
  snprintf(S.run, sizeof S.run, "%s", run);
  if (!dest)
    dest = getenv("PITSTOP_EVENTS");
  if (!dest || !*dest || strcmp(dest, "stdout") == 0) {
    S.fp = stdout;
    S.prefixed = 1;
  } else if (strcmp(dest, "stderr") == 0) {
    S.fp = stderr;
    S.prefixed = 1;
  } else {
    S.fp = fopen(dest, "a");
    if (!S.fp) {
      rc = fail(PITSTOP_EIO, "pitstop: cannot open '%s' for the records", dest);
      session_reset();
      goto out;
    }
    S.owns_fp = 1;
  }
  const char *gen = getenv("PITSTOP_GEN");
  int64_t g;
  S.gen = gen && pit_parse_i64(gen, &g) == 0 && g >= 0 && g < 1000000 ? (int)g : 0;
  S.rank = -1;
  detect_rank();
  S.t0 = pit_now();
  S.epoch_begin = NAN;
  S.active = 1;
out:
  pthread_mutex_unlock(&lock);
  return rc;
}

int pit_init(const char *run, const char *config_json) { return pit_init_to(run, config_json, NULL); }

/* Locks and checks that a session is open; on failure unlocks. */
static int enter(const char *fn) {
  pthread_mutex_lock(&lock);
  if (!S.active) {
    pthread_mutex_unlock(&lock);
    return fail(PITSTOP_ESTATE, "pitstop: %s before pit_init", fn);
  }
  return 0;
}

static int leave(int rc) {
  pthread_mutex_unlock(&lock);
  return rc;
}

/* A caller's duration or accuracy: finite and >= 0, else unknown (NaN). */
static double nonneg_or_nan(double v) { return isfinite(v) && v >= 0 ? v : NAN; }

/* enter(fn) for a call allowed only inside an iteration (in_iter 1) or only
 * outside one (0); otherwise PITSTOP_ESTATE "pitstop: <fn> <why>". 0 with the
 * lock held, or an error with it released. */
static int enter_iter(const char *fn, int in_iter, const char *why) {
  int rc = enter(fn);
  if (rc)
    return rc;
  if (S.in_iter != in_iter)
    return leave(fail(PITSTOP_ESTATE, "pitstop: %s %s", fn, why));
  return 0;
}

int pit_set_rank(int rank) {
  int rc = enter("pit_set_rank");
  if (rc)
    return rc;
  if (rank < -1 || rank > 1000000)
    return leave(fail(PITSTOP_EARG, "pitstop: pit_set_rank: rank %d out of range", rank));
  S.rank = rank;
  return leave(0);
}

int pit_set_batch(long long batch) {
  int rc = enter("pit_set_batch");
  if (rc)
    return rc;
  if (batch < 1)
    return leave(fail(PITSTOP_EARG, "pitstop: pit_set_batch: batch %lld is not positive", batch));
  S.batch = batch;
  return leave(0);
}

int pit_iter_begin(void) {
  int rc = enter_iter("pit_iter_begin", 0, "twice without pit_iter_end");
  if (rc)
    return rc;
  if (!S.init_written && (rc = write_init()) != 0)
    return leave(rc);
  S.it_begin = pit_now();
  S.it_data = NAN;
  if (isnan(S.epoch_begin))
    S.epoch_begin = S.it_begin;
  S.in_iter = 1;
  return leave(0);
}

int pit_iter_data(void) {
  int rc = enter_iter("pit_iter_data", 1, "outside an iteration");
  if (rc)
    return rc;
  S.it_data = pit_now();
  return leave(0);
}

int pit_iter_end(double loss) {
  int rc = enter_iter("pit_iter_end", 1, "without pit_iter_begin");
  if (rc)
    return rc;
  struct pit_record r;
  rec_start(&r, PIT_REC_ITER);
  double now = S.t0 + r.t;
  r.epoch = S.epoch;
  r.iter = S.iter;
  r.step = S.step;
  r.batch = S.batch;
  r.step_s = now - S.it_begin;
  r.data_s = isnan(S.it_data) ? NAN : S.it_data - S.it_begin;
  r.loss = isfinite(loss) ? loss : NAN;
  S.in_iter = 0;
  S.iter++;
  S.step++;
  return leave(emit(&r));
}

/* With the lock held: the init record first if none was written yet, then r
 * started as a record of type t. 0, or the error of writing the init record. */
static int start_event(struct pit_record *r, enum pit_rec_type t) {
  int rc = S.init_written ? 0 : write_init();
  if (!rc)
    rec_start(r, t);
  return rc;
}

int pit_epoch_end(void) {
  int rc = enter_iter("pit_epoch_end", 0, "inside an iteration");
  if (rc)
    return rc;
  struct pit_record r;
  if ((rc = start_event(&r, PIT_REC_EPOCH)) != 0)
    return leave(rc);
  r.epoch = S.epoch;
  r.epoch_s = isnan(S.epoch_begin) ? NAN : S.t0 + r.t - S.epoch_begin;
  S.epoch_begin = S.t0 + r.t;
  S.epoch++;
  S.iter = 0;
  return leave(emit(&r));
}

/* enter(fn), then start_event: 0 with the lock held, or an error with it released. */
static int enter_event(const char *fn, struct pit_record *r, enum pit_rec_type t) {
  int rc = enter(fn);
  if (rc)
    return rc;
  rc = start_event(r, t);
  return rc ? leave(rc) : 0;
}

int pit_validation(double accuracy, double secs) {
  struct pit_record r;
  int rc = enter_event("pit_validation", &r, PIT_REC_VALIDATION);
  if (rc)
    return rc;
  r.epoch = S.epoch;
  r.val_s = nonneg_or_nan(secs);
  r.accuracy = nonneg_or_nan(accuracy);
  return leave(emit(&r));
}

int pit_checkpoint(const char *path, long long bytes, double secs) {
  struct pit_record r;
  int rc = enter_event("pit_checkpoint", &r, PIT_REC_CHECKPOINT);
  if (rc)
    return rc;
  r.step = S.step;
  r.ckpt_s = nonneg_or_nan(secs);
  r.bytes = bytes >= 0 ? bytes : -1;
  r.path = path ? strdup(path) : NULL;
  if (path && !r.path) {
    pit_record_release(&r);
    return leave(fail(PITSTOP_ENOMEM, "pitstop: out of memory"));
  }
  return leave(emit(&r));
}

int pit_finish(void) {
  int rc = enter("pit_finish");
  if (rc)
    return rc;
  struct pit_record r;
  if ((rc = start_event(&r, PIT_REC_END)) == 0) {
    r.total_s = r.t;
    rc = emit(&r);
  }
  if (S.owns_fp && fclose(S.fp) != 0 && !rc)
    rc = fail(PITSTOP_EIO, "pitstop: cannot close the records of run '%s'", S.run);
  S.owns_fp = 0;
  session_reset();
  return leave(rc);
}
