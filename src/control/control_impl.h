/* control_impl.h — private to src/control/: the live spot market's state
 * (market.c) and the checkpoint a generation resumes from (resume.c). */
#ifndef PIT_CONTROL_IMPL_H
#define PIT_CONTROL_IMPL_H

#include <sys/types.h>

#include "pitstop/control.h"
#include "policy/observe.h"
#include "provider/procs.h"

/* What `pitstop run` has seen of spot capacity (market.c): spans of
 * availability, from a spot node coming up to a reclaim notice or a failed
 * spot start (down), and back. Run seconds throughout. */
struct ctl_spot {
  int on;                 /* the spot layer chooses the market (--policy cost --deadline, spot prices, a
                             provider with a spot market) */
  int observed;           /* 0: nothing seen yet (availability 0.5, as the simulator's) */
  int up;                 /* spot capacity as last seen */
  double since;           /* when the current span began */
  double up_s, down_s;    /* completed spans' seconds */
  int nup;                /* completed up spans */
  double tried, retry_s;  /* down: spot is tried again retry_s after the last try (doubled per failure) */
};
void ctl_spot_init(struct ctl_spot *sp);
/* A spot node came up at t (starts an up span unless one runs). */
void ctl_spot_up(struct ctl_spot *sp, double t);
/* Spot went away at t (a reclaim notice, a failed spot start): tried again
 * after retry_s, doubled at each failure while it stays away. */
void ctl_spot_down(struct ctl_spot *sp, double t, double retry_s);
/* Spot can be had (or is worth a try) at t. */
int ctl_spot_avail(const struct ctl_spot *sp, double t);
/* The run's measurements as the spot policy's state: the job's compute is
 * total_steps × tp, done step × tp; deadline, restart overhead (measured in
 * this job) and decision spacing in seconds; prices of the whole membership
 * per hour on each market. */
struct ctl_spot_in {
  double t, deadline_s, tp, restart_s, tick_s, price_h, spot_price_h;
  int64_t step, total_steps;
  enum pit_spot_mode mode; /* what the job holds now (idle: no node) */
};
void ctl_spot_state(const struct ctl_spot *sp, const struct ctl_spot_in *in, struct pit_spot_state *s);
/* A decision's reason: the state's numbers in seconds and prices. */
void ctl_spot_reason(const struct pit_spot_state *s, enum pit_spot_mode to, char *buf, size_t n);

/* Resume (resume.c): the checkpoint a generation continues from. */
#define CTL_RESUME_BAD_MAX 16
struct ctl_resume_in {
  const char *want;       /* the checkpoint the controller knows as newest ("" none) */
  int64_t want_step;      /* its step: no candidate above it is used */
  const char *state_dir;  /* held links held-<step>.ckpt */
  const char *ckpt_dir;   /* step files checkpoint-<step>.pit */
  const char *mirror;     /* --checkpoint-mirror, or NULL */
  const char *events;     /* the events file's checkpoint records (may be NULL) */
  int (*own)(const char *path, struct pit_err *e); /* judges pitstop's own format (NULL: not judged) */
  int here;               /* the workload's files are this machine's (local provider): a wanted file
                             missing here is gone; else a missing one is on a node, not judged */
};
struct ctl_ckpt_bad {
  char path[1100];
  char why[400];
};
struct ctl_resume {
  int64_t step;           /* the chosen checkpoint's step; -1 when none checks */
  char path[1100];        /* the chosen file; "" when none checks */
  int from_mirror;        /* it is the mirror's copy */
  int ncand;              /* distinct files judged */
  int nbad;               /* of them damaged (newest first), with the reason each */
  struct ctl_ckpt_bad bad[CTL_RESUME_BAD_MAX];
};
/* 0 when path is a checkpoint the workload can read (or of a format not
 * judged here); else the reason in e (PIT_ENOTFOUND, PIT_EIO, PIT_EFORMAT). */
int ctl_ckpt_check(const char *path, int (*own)(const char *path, struct pit_err *e), struct pit_err *e);
/* The newest candidate at most at in->want_step whose file checks (out->path
 * "" when none); the damaged ones tried before it in out->bad. */
int ctl_resume_pick(const struct ctl_resume_in *in, struct ctl_resume *out, struct pit_err *e);
/* "'PATH': why; 'PATH': why" of r's damaged files. */
void ctl_resume_bad_list(const struct ctl_resume *r, char *buf, size_t n);
/* Copies the checkpoint src of step to MIRROR/name atomically, then removes
 * the mirror's older copies but the newest one below step. */
int ctl_mirror_copy(const char *src, const char *name, const char *mirror, int64_t step, struct pit_err *e);

#endif
