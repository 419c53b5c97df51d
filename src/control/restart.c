/* restart.c — a workload resizable by restart (--resume-by-restart): it
 * resumes from its own snapshot when started again (the DDP tutorial's
 * pattern, torchrun's way of surviving a change of nodes). What the
 * controller needs of it: when a snapshot was saved, and what a restart
 * would cost now.
 *
 * A save is seen one of two ways: with --snapshot PATH, the file's mtime or
 * size changed and then stayed the same for settle_s (a save finished); without,
 * a line "... snapshot saved at PATH" (the tutorial's "Epoch e | Training
 * snapshot saved at PATH", printed after the save returned), whose epoch
 * says which epoch it follows.
 *
 * With the file watched, such a line still says which epoch was done (the
 * epoch's steps are recorded then), but the save is the file's.
 *
 * Invariants: no clock (times come in as run seconds), stat only; a save
 * is reported once; the file as it was when watching began is no save. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "control/restart.h"

static void look(const char *path, long long *mtime_ns, long long *size) {
  struct stat st;
  if (stat(path, &st) != 0) {
    *mtime_ns = *size = -1;
    return;
  }
  *mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  *size = (long long)st.st_size;
}

int ctl_snap_init(struct ctl_snap *s, const char *path) {
  memset(s, 0, sizeof *s);
  s->t_change = NAN;
  s->t_save = s->t_prev = NAN;
  s->watch = path && *path;
  if (s->watch) {
    snprintf(s->path, sizeof s->path, "%s", path);
    look(s->path, &s->mtime_ns, &s->size);
  }
  if (regcomp(&s->re, "^(Epoch ([0-9]+) \\| )?.*[Ss]napshot saved at ([^ ]+)", REG_EXTENDED) != 0)
    return -1;
  if (regcomp(&s->re_resume, "[Rr]esum[a-z]* .*[Ss]napshot.* [Ee]poch ([0-9]+)", REG_EXTENDED) != 0) {
    regfree(&s->re);
    return -1;
  }
  s->compiled = 1;
  return 0;
}

void ctl_snap_release(struct ctl_snap *s) {
  if (s->compiled) {
    regfree(&s->re);
    regfree(&s->re_resume);
  }
  s->compiled = 0;
}

int64_t ctl_snap_resume_epoch(const struct ctl_snap *s, const char *line, size_t n) {
  if (!s->compiled || n == 0 || n > 2000)
    return -1;
  char buf[2048];
  memcpy(buf, line, n);
  buf[n] = 0;
  regmatch_t m[2];
  if (regexec(&s->re_resume, buf, 2, m, 0) != 0 || m[1].rm_so < 0)
    return -1;
  return strtoll(buf + m[1].rm_so, NULL, 10);
}

static void saved(struct ctl_snap *s, double t) {
  s->t_prev = s->t_save;
  s->t_save = t;
  s->nsaves++;
}

int ctl_snap_line(struct ctl_snap *s, const char *line, size_t n, double t, int64_t *epoch) {
  *epoch = -1;
  if (!s->compiled || n == 0 || n > 2000)
    return 0;
  char buf[2048];
  memcpy(buf, line, n);
  buf[n] = 0;
  regmatch_t m[4];
  if (regexec(&s->re, buf, 4, m, 0) != 0)
    return 0;
  if (m[2].rm_so >= 0)
    *epoch = strtoll(buf + m[2].rm_so, NULL, 10);
  if (s->watch) /* the file says when the save is complete; the line only which epoch it follows */
    return 0;
  snprintf(s->path, sizeof s->path, "%.*s", (int)(m[3].rm_eo - m[3].rm_so), buf + m[3].rm_so);
  saved(s, t);
  return 1;
}

int ctl_snap_poll(struct ctl_snap *s, double t, double settle_s) {
  if (!s->watch)
    return 0;
  long long mt, sz;
  look(s->path, &mt, &sz);
  if (mt != s->mtime_ns || sz != s->size) { /* changed (again): wait until it holds still */
    s->mtime_ns = mt;
    s->size = sz;
    s->t_change = mt >= 0 ? t : NAN;
    return 0;
  }
  if (isnan(s->t_change) || t - s->t_change < settle_s)
    return 0;
  s->t_change = NAN;
  saved(s, t);
  return 1;
}

void ctl_snap_gen(struct ctl_snap *s) {
  s->t_save = s->t_prev = NAN;
  s->nsaves = 0;
}
