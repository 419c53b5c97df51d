/* dst_impl.h — private to the deterministic simulation (dst.c: the world and one
 * seed; dst_work.c: the simulated workload; dst_prov.c: the simulated provider;
 * dst_check.c: the invariants). One struct dst per seed, on the heap: no file of
 * the simulation keeps state of its own, so seeds never meet. */
#ifndef PIT_CONTROL_DST_IMPL_H
#define PIT_CONTROL_DST_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "control/dst.h"
#include "control/world.h"

#define DST_MAX_NODES 256
#define DST_MAX_PLAN 8
#define DST_MAX_GENS 512

/* Workload faults (one generation each). */
enum dst_wfault {
  DST_WF_NONE = 0,
  DST_WF_CRASH,      /* killed (SIGKILL) before a step */
  DST_WF_EXIT1,      /* exits 1 with a "pitstop: " line before a step */
  DST_WF_EXIT0,      /* exits 0 before a step, without an end record */
  DST_WF_HANG,       /* stops printing before a step, ignores signals */
  DST_WF_CKPT_TMP,   /* killed in its next checkpoint write: a half temp file left */
  DST_WF_CKPT_NOREC, /* killed after its next checkpoint's rename, before the record */
  DST_WF_STOP_CRASH, /* killed in the stop agreement, before its checkpoint */
  DST_WF_STOP_NOEND, /* killed in the stop agreement, after its checkpoint record, before the end */
  DST_WF_STOP_HANG,  /* hangs in the stop agreement */
  DST_WF_KINDS
};

/* A simulated node (the provider's view: its life is what a cloud bills). */
struct dst_node {
  char id[32];
  char itype[64];
  double t_start, t_end;  /* simulated seconds; t_end NaN while it lives */
  int alive;
  int gone;               /* reclaimed or lost (not stopped by the controller) */
  double notice_t, gone_t; /* reclaim: notice (NaN: none) and end; NaN: never */
  int notice_said, gone_said;
  int64_t start_fx;       /* the effect number of its start */
  int64_t stop_fx;        /* the effect number of its stop (0: none) */
  int stop_unrecorded;    /* the controller was killed between its stop and its stop record: billed
                             to the next controller's reconcile (at least its life) */
  int unrecordable;       /* the controller could not record it all: a disk full in its life, or killed
                             right after its start (exempt from the exact bill, counted) */
};

/* The workload of the generation running (one at a time). */
struct dst_work {
  pid_t pid;
  int wfd;                /* the write end of its stdout pipe (-1: closed) */
  int exited, status;
  int hang;
  int gen, launch;        /* the controller's generation; launches so far (0-based) */
  int64_t step, step0;    /* the next step to do; its first */
  uint64_t params;        /* its state: a chain over the steps done */
  double t_launch, t_next;
  int phase;              /* 0 booting, 1 running */
  int stop;               /* a stop asked (SIGUSR1 or SIGTERM): at the next step boundary */
  int stop_sig;
  int nnodes;
  char nodes[8][32];
  char resume[1100];
  enum dst_wfault fault;
  int64_t fault_step;     /* the step (of this generation's) the fault comes before */
  int64_t prev_ckpt;      /* its newest checkpoint's step (-1: none yet): kept at the rotation */
};

struct dst {
  struct ctl_world world;
  uint64_t rng, hash;
  FILE *trace;
  double now, t_limit;
  char dir[1024], run_dir[1100];
  int ncontrollers;
  /* the job */
  int64_t total;
  int ckpt_every;
  double step_s, init_s, boot_s;
  int two_phase, nodes0;
  int64_t sched_a, sched_b;
  /* faults */
  int nfaults;
  int64_t neff, kill_at;  /* effects so far; the controller dies before effect kill_at (0: never) */
  int dead, hung, kills_left;
  double full_from, full_to;
  double jump_at, jump_s;
  int slow_stop;          /* stop calls taking long (how many left) */
  int start_fail[DST_MAX_PLAN], nstart_fail;
  int list_fail[DST_MAX_PLAN], nlist_fail;
  int reclaim_start[DST_MAX_PLAN], reclaim_notice[DST_MAX_PLAN], nreclaim;
  double reclaim_after[DST_MAX_PLAN];
  int wfault_launch[DST_MAX_PLAN], wfault_kind[DST_MAX_PLAN], nwfault;
  int64_t wfault_step[DST_MAX_PLAN];
  /* the provider */
  struct dst_node nodes[DST_MAX_NODES];
  int nnodes, nstarts, nlists;
  /* the workload */
  struct dst_work wk;
  int nlaunch;
  pid_t next_pid;
  int64_t ckpts_written;
  int64_t gen_ckpt[DST_MAX_GENS];       /* the newest complete checkpoint each generation's workload wrote */
  unsigned char gen_killed[DST_MAX_GENS]; /* a controller was killed while this generation ran */
};

/* dst.c */
uint64_t dst_rand(struct dst *d);
double dst_unif(struct dst *d, double lo, double hi);
int dst_pick(struct dst *d, int n);
void dst_trace(struct dst *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int dst_fx(struct dst *d, const char *what);
int dst_disk_full(const struct dst *d);

/* dst_work.c: the simulated workload */
int dst_work_launch(struct ctl_world *w, const struct ctl_launch *L, struct ctl_gen *g, struct pit_err *e);
double dst_work_next(struct dst *d);
void dst_work_run(struct dst *d);
void dst_work_signal(struct dst *d, int sig);
void dst_work_die(struct dst *d, int status, const char *why);
void dst_work_close(struct dst *d);
/* The workload's state after n steps of an uninterrupted run, and step s's loss and sample digest. */
uint64_t dst_params_after(int64_t n);
double dst_loss(uint64_t params);
void dst_samples(int64_t step, char out[17]);

/* dst_prov.c: the simulated provider */
extern const struct pit_provider_ops dst_provider;
/* A node's reclaim comes due at the simulated now: poll's events. */
void dst_prov_tick(struct dst *d);

/* dst_check.c: the invariants */
void dst_check(struct dst *d, int done, struct pit_dst_result *r);

#endif
