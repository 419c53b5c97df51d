/* restart.h — private to src/control/: the snapshots of a workload resizable
 * by restart (restart.c). */
#ifndef PIT_CONTROL_RESTART_H
#define PIT_CONTROL_RESTART_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

struct ctl_snap {
  int watch;                 /* 1: the file at path is watched (--snapshot); 0: "snapshot saved at" lines */
  char path[1024];           /* the snapshot ("" until a line names it) */
  long long mtime_ns, size;  /* as last seen (-1: absent) */
  double t_change;           /* run seconds a change was seen, not yet settled (NaN) */
  double t_save, t_prev;     /* the last two saves (NaN: none) */
  int nsaves;
  regex_t re;
  regex_t re_resume;         /* "Resuming training from snapshot at Epoch N" (the tutorial's) */
  int compiled;
};

/* path: --snapshot (NULL: saves from the workload's lines). -1: no regex. */
int ctl_snap_init(struct ctl_snap *s, const char *path);
void ctl_snap_release(struct ctl_snap *s);
/* A line of the workload's output at t: 1 when it says a snapshot was saved
 * and no file is watched; *epoch the epoch a "snapshot saved" line follows
 * (also with a file watched), -1 when none. */
int ctl_snap_line(struct ctl_snap *s, const char *line, size_t n, double t, int64_t *epoch);
/* The epoch a line says the workload resumes at ("Resuming training from
 * snapshot at Epoch N", the DDP tutorial's; "resumed ... snapshot ... epoch N"),
 * -1 when it says none. Pure. */
int64_t ctl_snap_resume_epoch(const struct ctl_snap *s, const char *line, size_t n);
/* The watched file at t: 1 when a change has held still for settle_s (a save). */
int ctl_snap_poll(struct ctl_snap *s, double t, double settle_s);
/* A generation starts: the intervals are measured within it (a restart is no save). */
void ctl_snap_gen(struct ctl_snap *s);

#endif
