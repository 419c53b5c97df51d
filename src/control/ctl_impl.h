/* ctl_impl.h — private to the controller (pit_run, src/control/controller.c and
 * ctl_*.c): its one state, struct ctl, and the functions its files share.
 *
 * The controller is cut by concern, one file each:
 *   controller.c    pit_run and pit_run_cleanup: set-up, the run's generations one
 *                   after another (done, resized, failed), tear-down
 *   ctl_loop.c      one generation: launch, the loop that reads the workload's output
 *                   and polls the provider, its end (no record handling of its own)
 *   ctl_handlers.c  what the loop dispatches: records in, snapshots, progress lines
 *   ctl_policy.c    the policy asked at a decision point, its decision carried out
 *   ctl_market.c    the market layer: spot or on-demand (pit_spot_decide)
 *   ctl_zones.c     the market layer across zones (pit_zone_decide)
 *   ctl_nodes.c     nodes started and stopped, billing, reshaping to a membership
 *   ctl_state.c     RUN_DIR/state, the lock, held checkpoints, reconcile, resume
 *   ctl_out.c       records out (events file, store), held records, the status line
 *
 * Invariants (each file states its own besides):
 *  - one struct ctl per pit_run (or pit_run_cleanup), on its stack: no function of
 *    these files keeps state of its own, so two runs in one process do not meet;
 *  - every clock reading is now_t(c) (the monotonic clock, run seconds from c->t0);
 *  - every dealing with the outside goes through the world seam (world.h): the
 *    real one, or the deterministic simulation's (dst.c);
 *  - the library never prints: warnings go through warn(c, ...) to c->o->warn. */
#ifndef PIT_CTL_IMPL_H
#define PIT_CTL_IMPL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "control/control_impl.h"
#include "control/launch.h"
#include "control/progress.h"
#include "control/restart.h"
#include "control/stop.h"
#include "control/world.h"
#include "pitstop/parse.h"
#include "pitstop/store.h"

#define MAX_NODES 256
#define RECENT 64

/* The run across zones (ctl_zones.c): what it has seen of each zone. */
struct ctl_zones {
  int on;                           /* spot layer on, the provider names >= 2 zones, one instance type */
  char itype[PIT_NAME_MAX];
  int nodes;                        /* the job's node count */
  int own;                          /* --nnodes MIN:MAX with MIN < MAX: this layer chooses the count within
                                       nmin..nmax, the cost policy keeps the count held (docs/run.md) */
  int nmin, nmax;
  int n;
  struct pit_zone_obs z[PIT_ZONES_MAX]; /* closed spans in up_s, nup */
  double up_since[PIT_ZONES_MAX];   /* run seconds the current span of spot held there began; NaN: none */
  int want;                         /* the zone the reshape starts nodes in (-1: none yet) */
  int ckpt;                         /* the zone of the last generation's nodes (-1: none) */
  int planned;                      /* the pending resize is the zone policy's choice: carried out as chosen */
  int reclaimed;                    /* spot nodes reclaimed or lost since the last zone decision (its input) */
};

struct ctl {
  const struct pit_run_opts *o;
  struct pit_provider prov;
  struct pit_catalog cat;
  int have_cat;
  struct pit_node nodes[MAX_NODES]; /* live nodes, in start order */
  struct pit_node stuck[8];         /* nodes set aside whose stop could not reach them (claims kept): stopped
                                     * again when a start fails (ctl_start_node) */
  int nstuck;
  int nnodes;
  struct pit_membership cur;
  int gen;
  int continued_gen;                /* the generation this controller began after taking over a run whose
                                       controller was stopped (killed, interrupted; not one that ended in
                                       an error): its node records say "continued" (the timeline's
                                       "(controller stopped)"); 0 none (a run's generation 0 continues
                                       nothing) */
  double t0;                        /* pit_now() of run time 0 */
  char state_dir[1024], ckpt_dir[1100], events_path[1100];
  char ckpt_held[1100]; /* a second name of c->ckpt the workload's rotation cannot remove, or "" */
  int lock_fd;
  int reached_fd;                   /* RUN_DIR/reached, open when reached_open (ctl_note_reached) */
  int reached_open;
  /* progress */
  int64_t step_next;                /* the next step the workload will do (seen) */
  int64_t step_safe;                /* steps covered by the last checkpoint */
  int64_t resume_lag;               /* resumable by restart: how many steps before its snapshot's the script
                                       resumed last time (the DDP tutorial saves epoch e as "e run" and
                                       starts again at e: one epoch), measured; 0 until a restart shows it */
  char ckpt[1100];
  /* records kept back until a checkpoint covers them */
  struct pit_record *held;
  int nheld;
  size_t capheld;
  struct pit_events ev;
  int ev_open;
  struct pit_store *store;
  /* this generation */
  struct ctl_gen *g;
  struct pit_parser *parser;
  double gen_offset;                /* controller t − workload t */
  int gen_have_offset;
  int64_t gen_step0;
  int gen_iters;
  int gen_fail_sig;                 /* the signal that ended the generation's failed process (0: none) */
  int gen_link_lost;                /* the generation failed because a remote shell's session was lost (ssh's 255:
                                     * the network or the host, not the workload) */
  int port_retries;                 /* generations started again because their rendezvous port was taken */
  double t_launch, t_first_iter, t_stop_req;
  double t_last_out;                /* run seconds of the workload's last stdout line (a hang: none for long) */
  int stop_requested;
  char end_status[16];
  double t_end;                     /* run seconds when the end record came; 0 before */
  double last_ckpt_s;
  double init_s;
  struct pit_choice pending;        /* the decision being carried out */
  char first_why[PIT_MEMBERSHIP_TEXT_MAX + 64]; /* why generation 0's nodes start ("": the initial membership) */
  double recent[RECENT];
  int64_t recent_batch;
  int nrecent;
  double last_status;
  int resizable;
  int64_t total_steps;              /* the job's length; -1 until known */
  struct pit_run_result *res;
  char reclaimed[MAX_NODES][PIT_NAME_MAX]; /* nodes the provider gave notice for, to replace at the stop */
  int nreclaimed;
  struct ctl_obs obs;               /* what the cost/time policies see (observe.c) */
  int ntypes;
  struct pit_policy_type types[PIT_POLICY_TYPES_MAX]; /* the types they may use */
  struct pit_err rec_err;
  int rec_failed;
  int poll_failing;                 /* the provider's last polls failed (said once per streak) */
  double poll_fail_t;               /* run seconds of the streak's first failure */
  /* spot (market.c): what the run has seen of spot capacity; the market chosen by pit_spot_decide */
  struct ctl_spot spot;
  double first_iter_t;              /* run seconds of the first iteration of the run (boot + launch + init) */
  int spot_failed;                  /* the last reshape failed on a spot start (no capacity) */
  struct ctl_zones zn;              /* across zones (ctl_zones.c) */
  int reclaim_stop;                 /* this generation stops for a reclaim notice */
  /* faults (issue 28) */
  int64_t step_written;             /* the events file holds every step below this: a step done again
                                       after a lost checkpoint is not written twice */
  int finished;                     /* the job is done: the state says "end done" */
  int failed_exit;                  /* this controller ends with an error: the state says "end failed" */
  int mirror_warned;
  struct ctl_stop stop;             /* the user's stop (stop.c) */
  struct pit_run_stop measured;     /* the run's own stop once it measured what it was asked to
                                       (o->until_steady, o->until_iters): sig CTL_STOP_MEASURED */
  int64_t out_lines;                /* lines the workload printed on stdout, the whole run */
  struct ctl_progress prog;         /* progress lines timed by arrival (progress.c) */
  int have_prog;
  int len_said;                     /* the job's length was said to be unknown (on_init, once) */
  int line_protocol;                /* the line being read is a protocol one (PITSTOP or JSON record) */
  int gen_protocol;                 /* this generation's workload speaks the protocol: its other lines
                                       (a script's own progress prints) are logged, not read */
  int run_protocol;                 /* an earlier generation spoke it: the same command does again, so a
                                       generation starts with gen_protocol set (else a 2-node generation's
                                       node-1 progress print, read before node 0's first record, made
                                       the controller write its own init record beside the workload's) */
  int gen_heard0;                   /* node 0 (or the one launcher) has printed a line this generation:
                                       until then another node's plain lines are logged, not read */
  int t_is_run;                     /* the record being taken has run seconds already (progress.c's) */
  /* resizable by restart (--resume-by-restart, restart.c) */
  struct ctl_snap snap;
  int have_snap;
  int restart_pending;              /* a resize waits for the next snapshot */
  int restart_refused;              /* a resize was refused: not asked again before the next snapshot */
  int restart_stopping;             /* this generation is stopped for a resize by restart */
  int unresumable_gen;              /* the generation a job that cannot resume was last weighed on spot in (+1) */
  int64_t redo_below;               /* the steps the generation before had done (a step below is redone) */
  int in_snapshot;                  /* taking a snapshot's steps: the policy asks after its checkpoint */
  int64_t snap_step;                /* the step of this generation's last snapshot (-1: none yet) */
  int64_t save_every;               /* steps between two snapshots, as measured (-1: unknown) */
  int gen_init;                     /* this generation's init record was written */
  int state_owned;                  /* this controller took the run's state over (or began it): only then
                                       does it write "end failed" into RUN_DIR/state at an error */
  /* in-place shrink (ctl_shrink.c) */
  int gen_nnodes;                   /* the nodes this generation's workload was launched on (c->nodes[0..)) */
  int shrink_pending;               /* RUN_DIR/shrink asks the stopping workload to go on with fewer ranks */
  int gen_in_place;                 /* this generation began in place (no launch of its own) */
};

/* The monotonic clock: the world's (world.h) when the run has one. */
static inline double ctl_clock(const struct ctl *c) {
  return c->o && c->o->world ? c->o->world->ops->now(c->o->world) : pit_now();
}
/* Run seconds: the monotonic clock since the run's time 0. */
static inline double now_t(const struct ctl *c) { return ctl_clock(c) - c->t0; }
/* Before an externally visible effect (world.h): 0, CTL_EFFECT_DEAD or -errno. */
static inline int ctl_fx(const struct ctl *c, const char *what) { return ctl_effect(c->o ? c->o->world : NULL, what); }

/* A warning to the caller's warn callback (the CLI prints it; the library never does). */
static inline void warn(const struct ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void warn(const struct ctl *c, const char *fmt, ...) {
  if (!c->o->warn)
    return;
  struct pit_err w;
  pit_err_clear(&w);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w.msg, sizeof w.msg, fmt, ap);
  va_end(ap);
  c->o->warn(c->o->ctx, &w);
}

/* What RUN_DIR/state says of the controller that wrote it (ctl_read_state). */
struct prev_state {
  int found, gen, restarts;
  int stops;        /* controller stops the run was continued across before (0: none said) */
  int node_restarts; /* of restarts, those after a node lost (not held against --max-restarts) */
  int done, failed; /* the controller that wrote it finished the job, or ended with an error */
  int64_t step;
  char ckpt[1100];
  int pgids[64], npg;
  double t0;        /* its run time 0 on the monotonic clock (NaN: not said) */
  int log_gens;     /* generations the events file holds (a state the disk did not take lags it) */
  int have_m;       /* m holds the membership it last ran (its "membership" line) */
  struct pit_membership m;
};

/* How a generation ended (ctl_run_generation): pit_run acts on it. */
enum gen_end { GEN_DONE, GEN_STOPPED, GEN_FAILED, GEN_FATAL, GEN_INTERRUPTED };

/* ctl_out.c: records out (events file, store), records held until a checkpoint covers them, decision and node records, the status line */
int ctl_out_record(struct ctl *c, const struct pit_record *r, struct pit_err *e);
int ctl_out_flush(struct ctl *c, struct pit_err *e);
int ctl_release_held(struct ctl *c, int64_t upto, struct pit_err *e);
int64_t ctl_drop_held(struct ctl *c);
int ctl_hold(struct ctl *c, const struct pit_record *r, struct pit_err *e);
void ctl_base_record(const struct ctl *c, struct pit_record *r, enum pit_rec_type t);
int ctl_node_record(struct ctl *c, const struct pit_node *n, const char *action, struct pit_err *e);
int ctl_decision_record(struct ctl *c, const struct pit_choice *ch, const char *policy,
                    struct pit_err *e);
double ctl_recent_median(const struct ctl *c);
void ctl_status(struct ctl *c, const char *phase, int force);

/* ctl_state.c: RUN_DIR/state, the lock, held checkpoints, reconcile, the run finished before, the checkpoint resumed from, the registry */
int ctl_write_state(struct ctl *c, struct pit_err *e);
void ctl_hold_ckpt(struct ctl *c, int64_t step);
void ctl_unhold_older(struct ctl *c);
int ctl_events_last_ckpt(const struct ctl *c, int64_t *step, char *path, size_t n);
/* The job's length an init record of the events file gives (planned_iters); -1 when none. */
int64_t ctl_events_planned(const struct ctl *c);
/* A generation resumed by restart at step, past step_safe (the last snapshot the controller saw):
 * the steps between, done and saved by a workload it no longer heard, said and recorded once
 * without a time (ctl_handlers.c); step_safe and step_next move to step. */
int ctl_unseen_steps(struct ctl *c, int64_t step, double t, int64_t batch, struct pit_err *e);
void ctl_read_state(struct ctl *c, struct prev_state *ps);
/* RUN_DIR/reached: the generation running and one past the last step it recorded, rewritten in
 * place at each step (no rename: a pwrite, which a kill of the controller does not undo), so the
 * next controller knows the steps a killed controller's generation did that no record keeps. */
void ctl_note_reached(struct ctl *c);
/* What RUN_DIR/reached says: 1 and *gen, *step, or 0 (none). */
int ctl_read_reached(const struct ctl *c, int *gen, int64_t *step);
int ctl_take_lock(struct ctl *c, struct pit_err *e);
int ctl_reconcile(struct ctl *c, struct prev_state *ps, struct pit_err *e);
/* The generation a controller taking over from the state ps starts: past the state's and
 * every generation of the events file (a state the disk did not take lags it). */
int ctl_next_gen(const struct prev_state *ps);
void ctl_test_kill_point(const char *point);
/* The same at a step: PITSTOP_TEST_KILL=POINT:N kills the controller at POINT once step >= N. */
void ctl_test_kill_at(const char *point, int64_t step);
void ctl_mirror_ckpt(struct ctl *c, const char *path, int64_t step);
void ctl_events_scan(const struct ctl *c, int64_t *next, int *done);
int ctl_finished_before(struct ctl *c, struct pit_err *e);
void ctl_resume_membership(struct ctl *c);
int ctl_ckpt_here(const struct ctl *c, const char *path);
int ctl_choose_resume(struct ctl *c, char *resume, size_t nres, struct pit_err *e);
int ctl_registry_path(const char *run, char *buf, size_t n);
void ctl_registry_note(const struct ctl *c);

/* ctl_nodes.c: nodes started and stopped, their bill, the live nodes reshaped to a membership, the report's node and generation lines */
int ctl_start_node(struct ctl *c, const char *itype, enum pit_market mk, const char *why, struct pit_err *e);
/* With action "lost", a stop that fails is said (the claim stays) and returns 0. */
int ctl_stop_node_at(struct ctl *c, int i, const char *action, struct pit_err *e);
void ctl_stop_all_nodes(struct ctl *c);
/* A node's bill to until (its stop, if it stopped), through the catalog (catalog/cost.c). */
double ctl_node_cost(const struct ctl *c, const struct pit_node *n, double until);
int ctl_node_of(const struct pit_node *n, const struct pit_member *m);
int ctl_stop_reclaimed(struct ctl *c, struct pit_err *e);
int ctl_reshape(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e);
/* Which live nodes want keeps (claimed[i], c->nnodes entries) and how many of each entry it still needs
 * (need[k]): the choice ctl_reshape carries out. */
void ctl_claim(const struct ctl *c, const struct pit_membership *want, int *claimed, int *need);
/* c->cur set to want (the status line's pace forgotten when it changes). */
void ctl_set_membership(struct ctl *c, const struct pit_membership *want);
double ctl_spent(const struct ctl *c, double t);
void ctl_gen_entry(struct ctl *c, const char *end);

/* ctl_market.c: the market layer (spot or on-demand, chosen by pit_spot_decide) */
double ctl_spot_retry_s(const struct ctl *c);
int ctl_spot_point(struct ctl *c, struct pit_choice *ch, struct pit_err *e);
int ctl_spot_reshape(struct ctl *c, const struct pit_membership *want, enum pit_spot_mode held, const char *why,
                 struct pit_err *e);
int ctl_reshape_market(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e);
int ctl_spot_initial(struct ctl *c, struct pit_err *e);
int ctl_spot_unresumable(struct ctl *c, struct pit_choice *ch, struct pit_err *e);
double ctl_restart_seconds(const struct ctl *c);
/* The PIT time measured on bare (the observer's; NaN: none), and the same with the recent steps' median
 * where none is. */
double ctl_meas_tp(const struct ctl *c, const struct pit_membership *bare);
double ctl_measured_tp(const struct ctl *c, const struct pit_membership *bare);

/* ctl_zones.c: the market layer across zones (pit_zone_decide) */
void ctl_zones_init(struct ctl *c);
void ctl_zones_spot_up(struct ctl *c, const char *zone);
void ctl_zones_spot_down(struct ctl *c, const char *zone, int reclaimed);
int ctl_zones_reshape(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e);
int ctl_zones_point(struct ctl *c, struct pit_choice *ch, struct pit_err *e);

/* ctl_policy.c: the policy asked, its decision carried out (a stop request, a resize by restart) */
double ctl_switch_seconds(const struct ctl *c, int in_place);
int ctl_decide(struct ctl *c, struct pit_err *e);
/* The first membership from what earlier runs measured (--db's prior), before
 * any node starts: cost/time weigh the membership asked for against the others
 * measured, a change costing nothing yet; c->cur is set to the choice. */
int ctl_prior_initial(struct ctl *c, struct pit_err *e);
int ctl_request_stop(struct ctl *c, const struct pit_choice *ch, const char *policy, int node,
                 struct pit_err *e);
void ctl_restart_stop(struct ctl *c);

/* ctl_handlers.c: what the generation loop dispatches: records, parser warnings, snapshots, progress lines */
int ctl_on_record(void *ctx, const struct pit_record *in, struct pit_err *e);
void ctl_on_parse_warn(void *ctx, const struct pit_err *w);
int ctl_on_snapshot(struct ctl *c, int64_t epoch, struct pit_err *e);
int ctl_on_progress(void *ctx, const struct pit_record *r, struct pit_err *e);
int ctl_on_progress_line(struct ctl *c, const char *s, size_t n, struct pit_err *e);
int ctl_measured_enough(const char *detail);

/* ctl_shrink.c: a removal carried out in place: the ranks of the nodes removed leave, the others go on */
/* Called as a stop for ch is asked (node: a reclaim's node, or -1): when ch only removes nodes of the
 * running generation and the launch allows it, RUN_DIR/shrink names the ranks that stay (c->shrink_pending). */
void ctl_shrink_offer(struct ctl *c, const struct pit_choice *ch, int node);
/* The request withdrawn (RUN_DIR/shrink removed) and forgotten: at every generation's start and at the
 * switch. */
void ctl_shrink_clear(struct ctl *c);
/* The file removed only (the user's stop, a reclaim notice): a workload that read it already goes on in
 * place, and its switch is still taken (c->shrink_pending stays). */
void ctl_shrink_withdraw(struct ctl *c);
/* 1 when the record about to be taken is the first of a generation that went on in place: the stopped
 * generation's end record came, and a request was pending. */
int ctl_shrink_due(const struct ctl *c, const struct pit_record *r);
/* The switch, as the ranks that stay send their new init record: the stopped generation's entry
 * (resized), the leaving nodes stopped once their processes are gone, the next generation begun on the
 * same processes (its own log), the state written. */
int ctl_shrink_switch(struct ctl *c, struct pit_err *e);

/* ctl_loop.c: one generation: launched, its output read, the provider polled, its end classified */
/* The generation's own fields as at a launch (no process touched): gen_reset's, and an in-place switch's. */
void ctl_gen_fields_reset(struct ctl *c);
enum gen_end ctl_run_generation(struct ctl *c, const char *resume, char *why, size_t nwhy,
                            struct pit_err *e);
/* ctl_measure.c: a run that only measures (o->until_steady, o->until_iters) stops itself once enough is
 * measured: ctl_measure_iter after each iteration record, once the observer has it (sets c->measured). */
int ctl_measure_iter(struct ctl *c, struct pit_err *e);

#endif
