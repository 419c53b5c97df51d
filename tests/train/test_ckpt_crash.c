/* test_ckpt_crash.c — crash safety of the rotated checkpoint directory: a save made
 * to fail (an error) or to crash (the process ends at once) at its 1st, 2nd, …
 * write, flush, fsync, link or rename always leaves the previous checkpoint
 * loadable and pit_ckpt_find_latest answering a valid one (the previous, or the
 * new one when the fault came after it was complete); a truncated or bit-flipped
 * newest checkpoint is reported (path and reason) and the previous one used. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/train.h"

struct model {
  struct pit_model_spec spec;
  struct pit_net *net;
  struct pit_optim opt;
};

static void model_init(struct model *m) {
  struct pit_err e = {0};
  int rc = pit_model_build("cnn", 1, 28, 10, 0, &m->spec, NULL, &e);
  if (rc == 0)
    rc = pit_net_create(&m->net, &m->spec, 1, PIT_BACKEND_REF, &e);
  if (rc == 0)
    rc = pit_optim_init(&m->opt, PIT_OPT_ADAM, m->spec.nparams, 1e-3, &e);
  if (rc != 0) {
    fprintf(stderr, "model: %s\n", e.msg);
    exit(1);
  }
}

/* Parameters, m and v all hold `v`: a checkpoint's content names its step. */
static void fill(struct model *m, float v) {
  float *p = pit_net_params(m->net);
  for (size_t i = 0; i < m->spec.nparams; i++)
    p[i] = m->opt.m[i] = m->opt.v[i] = v;
  m->opt.t = (int64_t)v;
}

static int save_after(struct model *m, const char *dir, int64_t step, int64_t prev, struct pit_err *e) {
  struct pit_ckpt_meta meta;
  memset(&meta, 0, sizeof meta);
  snprintf(meta.run, sizeof meta.run, "crash");
  snprintf(meta.model, sizeof meta.model, "cnn");
  meta.step = step;
  meta.sampler.global_batch = 8;
  meta.sampler.n = 100;
  fill(m, (float)step);
  char path[1024];
  struct pit_net *nets[1] = {m->net};
  return pit_ckpt_dir_save(dir, &meta, nets, &m->opt, 1, prev, path, sizeof path, NULL, e);
}

static int save(struct model *m, const char *dir, int64_t step, struct pit_err *e) {
  return save_after(m, dir, step, -1, e);
}

/* The step whose values the checkpoint at path holds, or -1 if it does not load. */
static int64_t loaded_step(struct model *m, const char *path) {
  struct pit_err e = {0};
  unsigned char *blob;
  size_t len;
  if (pit_ckpt_read(path, &blob, &len, &e) < 0)
    return -1;
  struct pit_ckpt_meta meta;
  struct pit_net *nets[1] = {m->net};
  fill(m, -1);
  int rc = pit_ckpt_load(blob, len, path, &meta, nets, &m->opt, 1, &e);
  free(blob);
  if (rc < 0)
    return -1;
  const float *p = pit_net_params(m->net);
  for (size_t i = 0; i < m->spec.nparams; i++)
    if (p[i] != (float)meta.step || m->opt.v[i] != (float)meta.step)
      return -2;
  return meta.step;
}

static int count_tmp(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d)))
    n += strstr(de->d_name, ".tmp.") != NULL;
  if (d)
    closedir(d);
  return n;
}

struct warns {
  int n;
  char last[600];
};
static void on_warn(void *ctx, const struct pit_err *e) {
  struct warns *w = ctx;
  w->n++;
  snprintf(w->last, sizeof w->last, "%s", e->msg);
}

/* dir holds checkpoints of steps 10 and 20 (fresh). */
static void two_saved(struct model *m, const char *dir) {
  struct pit_err e = {0};
  mkdir(dir, 0777);
  CHECK(save(m, dir, 10, &e) == 0 && save(m, dir, 20, &e) == 0, "setup: %s", e.msg);
}

/* After a fault in the save of step 30: the previous is intact, the latest valid. */
static void after_fault(struct model *m, const char *dir, int k, const char *how) {
  char p20[1024], latest[1024];
  snprintf(p20, sizeof p20, "%s/checkpoint-000000000020.pit", dir);
  CHECK(loaded_step(m, p20) == 20, "%s at point %d: the previous checkpoint does not load", how, k);
  struct pit_err e = {0};
  struct warns w = {0};
  int rc = pit_ckpt_find_latest(dir, latest, sizeof latest, on_warn, &w, &e);
  int64_t s = rc == 0 ? loaded_step(m, latest) : -1;
  CHECK(rc == 0 && (s == 20 || s == 30) && w.n == 0, "%s at point %d: latest %s step %lld (%s; %d warnings: %s)",
        how, k, latest, (long long)s, e.msg, w.n, w.last);
  char link[1024];
  snprintf(link, sizeof link, "%s/checkpoint.pit", dir);
  s = loaded_step(m, link);
  CHECK(s == 20 || s == 30, "%s at point %d: checkpoint.pit holds step %lld", how, k, (long long)s);
  CHECK(save(m, dir, 40, &e) == 0 && pit_ckpt_find_latest(dir, latest, sizeof latest, NULL, NULL, &e) == 0 &&
            loaded_step(m, latest) == 40,
        "%s at point %d: the directory takes the next checkpoint: %s", how, k, e.msg);
}

static void corrupt(const char *path, long off, int truncate_to_half) {
  struct stat st;
  stat(path, &st);
  if (truncate_to_half) {
    CHECK(truncate(path, st.st_size / 2) == 0, "truncate");
    return;
  }
  FILE *f = fopen(path, "r+b");
  fseek(f, off < 0 ? st.st_size + off : off, SEEK_SET);
  int c = fgetc(f);
  fseek(f, off < 0 ? st.st_size + off : off, SEEK_SET);
  fputc(c ^ 0x10, f);
  fclose(f);
}

int main(void) {
  struct model m;
  model_init(&m);
  const char *tmp = check_tmpdir();
  char dir[512];
  struct pit_err e = {0};

  /* how many fault points one save passes */
  snprintf(dir, sizeof dir, "%s/count", tmp);
  two_saved(&m, dir);
  pit_fault_arm(LONG_MAX, 0);
  CHECK(save(&m, dir, 30, &e) == 0, "%s", e.msg);
  long points = pit_fault_seen();
  pit_fault_arm(0, 0);
  printf("a save passes %ld fault points; each made to fail, then to crash\n", points);
  CHECK(points >= 15, "a save passes %ld fault points (writes, flushes, fsyncs, renames, link)", points);

  for (int k = 1; k <= points + 1; k++) {
    /* a failing operation: an error, nothing half-written, no temp file left */
    snprintf(dir, sizeof dir, "%s/fail%d", tmp, k);
    two_saved(&m, dir);
    pit_fault_arm(k, 0);
    int rc = save(&m, dir, 30, &e);
    pit_fault_arm(0, 0);
    CHECK((rc < 0) == (k <= points), "fail at point %d of %ld: rc %d", k, points, rc);
    CHECK(count_tmp(dir) == 0, "fail at point %d: a temp file is left", k);
    after_fault(&m, dir, k, "fail");

    /* a crash: the process ends at the point; the sweep removes what it left */
    snprintf(dir, sizeof dir, "%s/crash%d", tmp, k);
    two_saved(&m, dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      pit_fault_arm(k, 1);
      _exit(save(&m, dir, 30, &e) == 0 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == (k <= points ? 86 : 0), "crash at point %d: status %d", k, st);
    int removed = -1;
    CHECK(pit_atomic_sweep(dir, &removed, &e) == 0 && count_tmp(dir) == 0, "crash at point %d: sweep: %s", k,
          e.msg);
    after_fault(&m, dir, k, "crash");
  }

  /* corrupted newest: reported with its path, the previous used */
  const char *how[] = {"truncated", "payload bit flipped", "header bit flipped", "checksum bit flipped"};
  long offs[] = {0, -100, 20, -1};
  for (int i = 0; i < 4; i++) {
    snprintf(dir, sizeof dir, "%s/corrupt%d", tmp, i);
    two_saved(&m, dir);
    char p20[1024], latest[1024];
    snprintf(p20, sizeof p20, "%s/checkpoint-000000000020.pit", dir);
    corrupt(p20, offs[i], i == 0);
    struct warns w = {0};
    int rc = pit_ckpt_find_latest(dir, latest, sizeof latest, on_warn, &w, &e);
    CHECK(rc == 0 && loaded_step(&m, latest) == 10, "%s: latest '%s' (%s)", how[i], latest, e.msg);
    CHECK(w.n == 1 && strstr(w.last, p20), "%s: one warning naming the file: %d '%s'", how[i], w.n, w.last);
    CHECK(pit_ckpt_read(p20, &(unsigned char *){NULL}, &(size_t){0}, &e) == PIT_EFORMAT && strstr(e.msg, p20),
          "%s: read refuses it: %s", how[i], e.msg);
    /* both corrupted: an error, not a fresh start */
    char p10[1024];
    snprintf(p10, sizeof p10, "%s/checkpoint-000000000010.pit", dir);
    corrupt(p10, -100, 0);
    rc = pit_ckpt_find_latest(dir, latest, sizeof latest, NULL, NULL, &e);
    CHECK(rc == PIT_EFORMAT && strstr(e.msg, dir), "%s: all corrupted: %d %s", how[i], rc, e.msg);
  }

  /* rotation keeps two; an empty directory holds none */
  snprintf(dir, sizeof dir, "%s/rot", tmp);
  two_saved(&m, dir);
  CHECK(save(&m, dir, 30, &e) == 0 && save(&m, dir, 40, &e) == 0, "%s", e.msg);
  char p[1024], latest[1024];
  snprintf(p, sizeof p, "%s/checkpoint-000000000030.pit", dir);
  CHECK(loaded_step(&m, p) == 30, "the one before the newest is kept");
  snprintf(p, sizeof p, "%s/checkpoint-000000000020.pit", dir);
  CHECK(access(p, F_OK) != 0, "older ones are removed");
  snprintf(p, sizeof p, "%s/" PIT_CKPT_LATEST, dir);
  FILE *f = fopen(p, "r");
  char line[128] = "";
  CHECK(f && fgets(line, sizeof line, f) && strcmp(line, "checkpoint-000000000040.pit\n") == 0,
        "the pointer names the newest: '%s'", line);
  if (f)
    fclose(f);
  /* resumed from 30 past a corrupted 40: the next save keeps 30, not the corrupted 40 */
  snprintf(p, sizeof p, "%s/checkpoint-000000000040.pit", dir);
  corrupt(p, -100, 0);
  CHECK(pit_ckpt_find_latest(dir, latest, sizeof latest, NULL, NULL, &e) == 0 && loaded_step(&m, latest) == 30,
        "previous valid: %s", e.msg);
  CHECK(save_after(&m, dir, 50, 30, &e) == 0, "%s", e.msg);
  snprintf(p, sizeof p, "%s/checkpoint-000000000030.pit", dir);
  CHECK(loaded_step(&m, p) == 30, "the checkpoint resumed from is kept as the previous one");
  snprintf(p, sizeof p, "%s/checkpoint-000000000040.pit", dir);
  CHECK(access(p, F_OK) != 0, "the corrupted one skipped is removed");
  snprintf(dir, sizeof dir, "%s/empty", tmp);
  mkdir(dir, 0777);
  CHECK(pit_ckpt_find_latest(dir, latest, sizeof latest, NULL, NULL, &e) == PIT_ENOTFOUND, "empty: %s", e.msg);
  snprintf(dir, sizeof dir, "%s/missing", tmp);
  CHECK(pit_ckpt_find_latest(dir, latest, sizeof latest, NULL, NULL, &e) == PIT_ENOTFOUND, "missing: %s", e.msg);

  pit_optim_release(&m.opt);
  pit_net_free(m.net);
  return check_done();
}
