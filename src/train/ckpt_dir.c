/* ckpt_dir.c — a directory of rotated checkpoints (the layout is in train.h):
 * DIR/checkpoint-<step>.pit (the newest two), DIR/checkpoint.latest naming the
 * newest, DIR/checkpoint.pit a second name of it.
 * Invariants: a save writes the new step file completely (atomically) before it
 * touches the pointer, the link or any older file, so whatever fails or crashes
 * part way, the previous checkpoint is still there and valid; older files are
 * removed only after the new one, its pointer and its link are in place. The
 * newest checkpoint is the valid step file with the highest step (the pointer
 * says the same after a complete save; after a crash between the step file and
 * the pointer, the step file, complete and checked, is the newer one).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pitstop/train.h"

#define PREFIX "checkpoint-"
#define SUFFIX ".pit"
#define COMPAT "checkpoint.pit"
#define STEP_DIGITS 12

/* The step of "checkpoint-<digits>.pit", or -1 if name is not a step file. */
static int64_t step_of(const char *name) {
  size_t lp = strlen(PREFIX), ls = strlen(SUFFIX), n = strlen(name);
  if (n <= lp + ls || strncmp(name, PREFIX, lp) != 0 || strcmp(name + n - ls, SUFFIX) != 0)
    return -1;
  int64_t s = 0;
  for (size_t i = lp; i < n - ls; i++) {
    if (name[i] < '0' || name[i] > '9' || s > INT64_MAX / 10 - 10)
      return -1;
    s = s * 10 + (name[i] - '0');
  }
  return s;
}

static int cmp_desc(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The steps of dir's step files, highest first, in *steps (malloc'd, caller frees). */
static int list_steps(const char *dir, int64_t **steps, int *n, struct pit_err *e) {
  *steps = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open directory '%s'", dir);
  size_t cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    int64_t s = step_of(de->d_name);
    if (s < 0)
      continue;
    if (PIT_GROW(*steps, *n + 1, cap)) {
      closedir(d);
      free(*steps);
      *steps = NULL;
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    (*steps)[(*n)++] = s;
  }
  closedir(d);
  if (*n > 1)
    qsort(*steps, (size_t)*n, sizeof **steps, cmp_desc);
  return 0;
}

static int join(char *buf, size_t n, const char *dir, const char *name, struct pit_err *e) {
  if ((size_t)snprintf(buf, n, "%s/%s", dir, name) >= n)
    return pit_err_set(e, PIT_EARG, "checkpoint path too long: '%s/%s'", dir, name);
  return 0;
}

static void step_name(char *buf, size_t n, int64_t step) {
  snprintf(buf, n, PREFIX "%0*lld" SUFFIX, STEP_DIGITS, (long long)step);
}

int pit_ckpt_dir_save(const char *dir, const struct pit_ckpt_meta *m, struct pit_net *const *nets,
                      const struct pit_optim *optims, int nnets, int64_t prev_step, char *path, size_t n,
                      int64_t *bytes, struct pit_err *e) {
  char name[64], other[4096];
  step_name(name, sizeof name, m->step);
  int rc = join(path, n, dir, name, e);
  if (rc < 0 || (rc = pit_ckpt_save(path, m, nets, optims, nnets, bytes, e)) < 0)
    return rc;
  /* the pointer, then the second name */
  char line[80];
  int len = snprintf(line, sizeof line, "%s\n", name);
  if ((rc = join(other, sizeof other, dir, PIT_CKPT_LATEST, e)) < 0 ||
      (rc = pit_file_write_atomic(other, line, (size_t)len, e)) < 0 ||
      (rc = join(other, sizeof other, dir, COMPAT, e)) < 0 || (rc = pit_atomic_link(path, other, e)) < 0)
    return rc;
  /* rotation: keep this step and the previous one (prev_step if there, else the
   * highest below this step: a newer one skipped as corrupted is not the previous) */
  int64_t *steps;
  int ns;
  if ((rc = list_steps(dir, &steps, &ns, e)) < 0)
    return rc;
  int64_t keep = -1;
  for (int i = 0; i < ns; i++)
    if (steps[i] < m->step && (keep < 0 || steps[i] == prev_step))
      keep = steps[i];
  for (int i = 0; i < ns && rc == 0; i++) {
    if (steps[i] == m->step || steps[i] == keep)
      continue;
    step_name(name, sizeof name, steps[i]);
    if ((rc = join(other, sizeof other, dir, name, e)) == 0 && unlink(other) != 0 && errno != ENOENT)
      rc = pit_err_errno(e, PIT_EIO, "cannot remove old checkpoint '%s'", other);
  }
  free(steps);
  return rc;
}

int pit_ckpt_check(const char *path, struct pit_err *e) {
  unsigned char *blob;
  size_t len;
  int rc = pit_ckpt_read(path, &blob, &len, e);
  free(blob);
  return rc;
}

int pit_ckpt_find_latest(const char *dir, char *path, size_t n, pit_warn_fn warn, void *ctx,
                         struct pit_err *e) {
  int64_t *steps;
  int ns;
  int rc = list_steps(dir, &steps, &ns, e);
  if (rc < 0) {
    path[0] = 0;
    return rc;
  }
  int bad = 0;
  struct pit_err w = {0};
  for (int i = 0; i <= ns; i++) {
    char name[64];
    if (i < ns)
      step_name(name, sizeof name, steps[i]);
    else /* a directory written before rotation holds only checkpoint.pit */
      snprintf(name, sizeof name, "%s", COMPAT);
    if ((rc = join(path, n, dir, name, e)) < 0)
      break;
    if (i == ns && (ns > 0 || access(path, F_OK) != 0)) {
      rc = 1; /* not a candidate */
      break;
    }
    pit_err_clear(&w);
    if ((rc = pit_ckpt_check(path, &w)) == 0)
      break;
    if (rc == PIT_ENOMEM) {
      *e = w;
      break;
    }
    bad++;
    if (warn) {
      pit_err_hint(&w, "%s", i + 1 < ns ? "using the previous checkpoint" : "no older checkpoint to use");
      warn(ctx, &w);
    }
  }
  free(steps);
  if (rc == 0 || rc == PIT_ENOMEM)
    return rc;
  if (rc < 0 && rc != PIT_EFORMAT && rc != PIT_EIO)
    return rc;
  path[0] = 0;
  if (bad == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "no checkpoint in '%s'", dir);
  return pit_err_set(e, PIT_EFORMAT, "no valid checkpoint in '%s' (%d unreadable or corrupted)", dir, bad);
}
