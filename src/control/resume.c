/* resume.c — which checkpoint a generation resumes from, and the checkpoint
 * mirror (`--checkpoint-mirror DIR`).
 *
 * The candidates of a resume at most at step S (the newest checkpoint the
 * controller knows of: its state's or its events file's) are every copy of
 * every checkpoint at or below S: the wanted file itself, the held links
 * RUN_DIR/held-<step>.ckpt, the paths of the events file's checkpoint records,
 * the step files checkpoint-<step>.pit of the checkpoint directory, and the
 * copies of the same names in the mirror. They are tried newest step first
 * (for one step: held link, the workload's path, the mirror's copy); the first
 * whose file checks is used. A file is checked as the workload will read it:
 * pitstop's own format (PITCKPT1) in full (lengths and checksum, by the
 * function the caller gives: the CLI passes the train module's pit_ckpt_check,
 * which the control module does not link), the protocol's header format
 * (PITSTOP-CKPT) by its length;
 * a file of any other format cannot be judged here and is taken as it is, and
 * so is a wanted file that is not on this machine unless the provider's nodes
 * are this machine (it is on a node's disk).
 * Never above S: a checkpoint the workload wrote after its controller died
 * covers steps the events file lacks.
 *
 * Invariants: nothing here removes or changes a candidate; a mirror copy is
 * written atomically (temp file, fsync, rename, directory fsync) before any
 * older copy is removed, and the mirror keeps the newest two.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control_impl.h"
#include "pitstop/record.h"

#define STEP_PREFIX "checkpoint-"
#define STEP_SUFFIX ".pit"

/* The number of a name "<prefix><digits><suffix>", or -1. */
static int64_t step_in(const char *name, const char *prefix, const char *suffix) {
  size_t lp = strlen(prefix);
  if (strncmp(name, prefix, lp) != 0)
    return -1;
  size_t nd = strspn(name + lp, "0123456789");
  if (nd == 0 || nd > 18 || strcmp(name + lp + nd, suffix) != 0)
    return -1;
  return strtoll(name + lp, NULL, 10);
}

static const char *base_of(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

/* The protocol's format: a header line "PITSTOP-CKPT 1 <payload bytes> <sha256>" then the payload. */
static int check_protocol(FILE *fp, const char *path, struct pit_err *e) {
  char line[256];
  if (fseek(fp, 0, SEEK_SET) != 0 || !fgets(line, sizeof line, fp))
    return pit_err_errno(e, PIT_EIO, "cannot read checkpoint '%s'", path);
  unsigned long long want = 0;
  int ver = 0;
  if (sscanf(line, "PITSTOP-CKPT %d %llu", &ver, &want) != 2)
    return pit_err_set(e, PIT_EFORMAT, "'%s': bad checkpoint header", path);
  long at = ftell(fp);
  if (at < 0 || fseek(fp, 0, SEEK_END) != 0)
    return pit_err_errno(e, PIT_EIO, "cannot read checkpoint '%s'", path);
  unsigned long long have = (unsigned long long)(ftell(fp) - at);
  if (have != want)
    return pit_err_set(e, PIT_EFORMAT, "'%s': truncated checkpoint (%llu payload bytes expected, %llu present)",
                       path, want, have);
  return 0;
}

int ctl_ckpt_check(const char *path, int (*own)(const char *, struct pit_err *), struct pit_err *e) {
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open checkpoint '%s'", path);
  char magic[13] = {0};
  size_t got = fread(magic, 1, 12, fp);
  int rc = 0;
  if (got >= 8 && memcmp(magic, "PITCKPT1", 8) == 0) {
    fclose(fp);
    return own ? own(path, e) : 0; /* pitstop's own format: the train module's reader judges it */
  }
  if (got == 12 && memcmp(magic, "PITSTOP-CKPT", 12) == 0)
    rc = check_protocol(fp, path, e);
  else if (got == 0)
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': empty checkpoint", path);
  fclose(fp);
  return rc; /* another format: not ours to judge */
}

struct cand {
  int64_t step;
  int order; /* within a step: 0 wanted, 1 held link, 2 the workload's path, 3 mirror */
  char path[1100];
};

struct cands {
  struct cand *v;
  int n;
  size_t cap;
};

static int add(struct cands *cs, int64_t step, int order, const char *path, struct pit_err *e) {
  if (!path || !path[0])
    return 0;
  for (int i = 0; i < cs->n; i++)
    if (strcmp(cs->v[i].path, path) == 0)
      return 0;
  if (PIT_GROW(cs->v, cs->n + 1, cs->cap))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  struct cand *c = &cs->v[cs->n++];
  c->step = step;
  c->order = order;
  snprintf(c->path, sizeof c->path, "%s", path);
  return 0;
}

/* Every name "<prefix><step><suffix>" in dir as a candidate. */
static int add_dir(struct cands *cs, const char *dir, const char *prefix, const char *suffix, int order,
                   struct pit_err *e) {
  DIR *d = dir && dir[0] ? opendir(dir) : NULL;
  if (!d)
    return 0;
  struct dirent *de;
  int rc = 0;
  while (rc == 0 && (de = readdir(d))) {
    int64_t s = step_in(de->d_name, prefix, suffix);
    char p[1100];
    if (s >= 0 && (size_t)snprintf(p, sizeof p, "%s/%s", dir, de->d_name) < sizeof p)
      rc = add(cs, s, order, p, e);
  }
  closedir(d);
  return rc;
}

static int cmp_cand(const void *a, const void *b) {
  const struct cand *x = a, *y = b;
  if (x->step != y->step)
    return x->step < y->step ? 1 : -1;
  return (x->order > y->order) - (x->order < y->order);
}

int ctl_resume_pick(const struct ctl_resume_in *in, struct ctl_resume *out, struct pit_err *e) {
  memset(out, 0, sizeof *out);
  out->step = -1;
  struct cands cs = {0};
  char p[1100];
  struct stat st0;
  if (!in->here && in->want && in->want[0] && stat(in->want, &st0) < 0) {
    /* on a node's disk, not here: the workload judges it (docs/protocol.md, section 5) */
    out->step = in->want_step;
    snprintf(out->path, sizeof out->path, "%s", in->want);
    return 0;
  }
  int rc = add(&cs, in->want_step, 0, in->want, e);
  /* the events file's checkpoint records (its fold): held link, path, mirror copy */
  struct pit_runlog log;
  struct pit_err e2 = {0};
  pit_runlog_init(&log);
  if (rc == 0 && in->events && pit_runlog_load(&log, in->events, &e2) == 0)
    for (int i = 0; rc == 0 && i < log.nckpt; i++) {
      const struct pit_runlog_ckpt *k = &log.ckpt[i];
      if (k->step < 0 || !k->path[0])
        continue;
      snprintf(p, sizeof p, "%s/held-%012lld.ckpt", in->state_dir, (long long)k->step);
      rc = add(&cs, k->step, 1, p, e);
      if (rc == 0)
        rc = add(&cs, k->step, 2, k->path, e);
      if (rc == 0 && in->mirror && (size_t)snprintf(p, sizeof p, "%s/%s", in->mirror, base_of(k->path)) < sizeof p)
        rc = add(&cs, k->step, 3, p, e);
    }
  pit_runlog_release(&log);
  if (rc == 0)
    rc = add_dir(&cs, in->state_dir, "held-", ".ckpt", 1, e);
  if (rc == 0)
    rc = add_dir(&cs, in->ckpt_dir, STEP_PREFIX, STEP_SUFFIX, 2, e);
  if (rc == 0)
    rc = add_dir(&cs, in->mirror, STEP_PREFIX, STEP_SUFFIX, 3, e);
  if (rc < 0) {
    free(cs.v);
    return rc;
  }
  if (cs.n > 1)
    qsort(cs.v, (size_t)cs.n, sizeof *cs.v, cmp_cand);
  /* files already judged (one checkpoint has several names: a held link is the same file) */
  struct stat seen[64];
  int nseen = 0;
  for (int i = 0; i < cs.n; i++) {
    const struct cand *c = &cs.v[i];
    if (c->step > in->want_step)
      continue;
    struct stat st;
    if (stat(c->path, &st) < 0) {
      if (c->order == 0 && out->nbad < CTL_RESUME_BAD_MAX) { /* the wanted file gone: said */
        struct ctl_ckpt_bad *b = &out->bad[out->nbad++];
        snprintf(b->path, sizeof b->path, "%s", c->path);
        snprintf(b->why, sizeof b->why, "it is gone (%s)", strerror(errno));
      }
      continue;
    }
    int dup = 0;
    for (int k = 0; k < nseen; k++)
      dup |= seen[k].st_dev == st.st_dev && seen[k].st_ino == st.st_ino;
    if (dup)
      continue;
    if (nseen < 64)
      seen[nseen++] = st;
    out->ncand++;
    pit_err_clear(&e2);
    int ok = ctl_ckpt_check(c->path, in->own, &e2);
    if (ok == PIT_ENOMEM) {
      free(cs.v);
      *e = e2;
      return ok;
    }
    if (ok == 0) {
      out->step = c->step;
      snprintf(out->path, sizeof out->path, "%s", c->path);
      out->from_mirror = c->order == 3;
      break;
    }
    if (out->nbad < CTL_RESUME_BAD_MAX) {
      struct ctl_ckpt_bad *b = &out->bad[out->nbad++];
      snprintf(b->path, sizeof b->path, "%s", c->path);
      /* the reason without the path the message already names */
      const char *why = e2.msg;
      size_t lp = strlen(c->path);
      if (why[0] == '\'' && strncmp(why + 1, c->path, lp) == 0 && strncmp(why + 1 + lp, "': ", 3) == 0)
        why += lp + 4;
      snprintf(b->why, sizeof b->why, "%.399s", why);
    }
  }
  free(cs.v);
  return 0;
}

void ctl_resume_bad_list(const struct ctl_resume *r, char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < r->nbad && at + 1 < n; i++) {
    int k = snprintf(buf + at, n - at, "%s'%s': %s", i ? "; " : "", r->bad[i].path, r->bad[i].why);
    if (k < 0)
      break;
    at += (size_t)k;
  }
}

/* ---------------- the mirror ---------------- */

int ctl_mirror_copy(const char *src, const char *name, const char *mirror, int64_t step, struct pit_err *e) {
  int rc = pit_mkdir_p(mirror, e);
  if (rc < 0)
    return rc;
  char dst[1200];
  if ((size_t)snprintf(dst, sizeof dst, "%s/%s", mirror, name) >= sizeof dst)
    return pit_err_set(e, PIT_EARG, "mirror path too long: '%s/%s'", mirror, name);
  FILE *in = fopen(src, "rb");
  if (!in)
    return pit_err_errno(e, PIT_EIO, "cannot open checkpoint '%s' to mirror it", src);
  struct pit_atomic_file af;
  if ((rc = pit_atomic_open(&af, dst, e)) < 0) {
    fclose(in);
    return rc;
  }
  char buf[65536];
  size_t k;
  while (rc == 0 && (k = fread(buf, 1, sizeof buf, in)) > 0)
    if (pit_atomic_write(&af, buf, k) != 0)
      rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", dst);
  if (rc == 0 && ferror(in))
    rc = pit_err_errno(e, PIT_EIO, "cannot read checkpoint '%s' to mirror it", src);
  fclose(in);
  if (rc < 0) {
    pit_atomic_abort(&af);
    return rc;
  }
  if ((rc = pit_atomic_commit(&af, e)) < 0)
    return rc;
  /* the newest two stay: older copies of the same naming go (a step read from the
   * name: checkpoint-<step>.pit, or the protocol's ckpt-<step>.pt) */
  DIR *d = opendir(mirror);
  if (!d)
    return 0;
  int64_t keep = -1; /* the newest step below this one */
  struct dirent *de;
  for (int pass = 0; pass < 2; pass++) {
    rewinddir(d);
    while ((de = readdir(d))) {
      int64_t s = step_in(de->d_name, STEP_PREFIX, STEP_SUFFIX);
      if (s < 0)
        s = step_in(de->d_name, "ckpt-", ".pt");
      if (s < 0 || s >= step)
        continue;
      if (pass == 0 && s > keep)
        keep = s;
      if (pass == 1 && s != keep) {
        char p[1400];
        snprintf(p, sizeof p, "%s/%s", mirror, de->d_name);
        unlink(p);
      }
    }
  }
  closedir(d);
  return 0;
}
