/* controller.c — pit_run(): the elastic controller's generations.
 *
 *   lock RUN_DIR → reconcile (a crashed controller's workload killed, its nodes
 *   adopted or stopped) → start nodes → generation g: launch, read records
 *   live, ask the policy at every iteration → on RESIZE: SIGUSR1 to the
 *   workload's processes that catch it (it checkpoints at a step all ranks
 *   agreed on and exits 0) → stop removed nodes, start added ones →
 *   generation g+1 resumes from the checkpoint → … → job done → stop nodes.
 *   A failed generation (a non-zero exit, a signal, no record within the
 *   start time-out, a stop request not honoured) restarts from the last
 *   checkpoint, up to max_restarts.
 *
 * Invariants:
 *  - the controller is the only writer of the store and of the run's events
 *    file; records get the run id, the controller's generation and its clock;
 *  - iteration records are kept back until a checkpoint (or the workload's
 *    end) covers them, so a failure drops exactly the steps that will be
 *    redone and the stored steps stay contiguous; node records are written
 *    through at once (a restarted controller's records follow the killed one's);
 *  - RUN_DIR/state (written atomically at each change) names the generation,
 *    the last checkpoint and the workload's process groups; RUN_DIR/lock is
 *    held (flock) while a controller runs the run, so two never start a node
 *    twice; a restart resumes from the newer of the state's checkpoint and the
 *    events file's last one, each held by a hard link RUN_DIR/held-<step>.ckpt
 *    so a workload outliving its controller cannot rotate it away (the newest
 *    two held: a damaged newest has an older one beside it);
 *  - a generation resumes from a checkpoint that checks (resume.c: damaged ones
 *    skipped, said, the older one used; none left: step 0 or an error), and the
 *    events file and the store hold each step once (a step done again after a
 *    lost checkpoint is not written again);
 *  - once the job is done the state says "end done" before any node stops, so a
 *    kill after the end record never runs the job twice;
 *  - every node this controller started is stopped before pit_run returns. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control/control_impl.h"
#include "control/launch.h"
#include "control/progress.h"
#include "control/restart.h"
#include "control/stop.h"
#include "pitstop/analysis.h"
#include "pitstop/parse.h"
#include "pitstop/store.h"

#define MAX_NODES 256
#define RECENT 64

struct ctl {
  const struct pit_run_opts *o;
  struct pit_provider prov;
  struct pit_catalog cat;
  int have_cat;
  struct pit_node nodes[MAX_NODES]; /* live nodes, in start order */
  int nnodes;
  struct pit_membership cur;
  int gen;
  double t0;                        /* pit_now() of run time 0 */
  char state_dir[1024], ckpt_dir[1100], events_path[1100];
  char ckpt_held[1100]; /* a second name of c->ckpt the workload's rotation cannot remove, or "" */
  int lock_fd;
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
  double t_launch, t_first_iter, t_stop_req;
  int stop_requested;
  char end_status[16];
  double t_end;                     /* run seconds when the end record came; 0 before */
  double last_ckpt_s;
  double init_s;
  struct pit_choice pending;        /* the decision being carried out */
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
  int reclaim_stop;                 /* this generation stops for a reclaim notice */
  /* faults (issue 28) */
  int64_t step_written;             /* the events file holds every step below this: a step done again
                                       after a lost checkpoint is not written twice */
  int finished;                     /* the job is done: the state says "end done" */
  int failed_exit;                  /* this controller ends with an error: the state says "end failed" */
  int mirror_warned;
  struct ctl_stop stop;             /* the user's stop (stop.c) */
  int64_t out_lines;                /* lines the workload printed on stdout, the whole run */
  struct ctl_progress prog;         /* progress lines timed by arrival (progress.c) */
  int have_prog;
  int line_protocol;                /* the line being read is a protocol one (PITSTOP or JSON record) */
  int gen_protocol;                 /* this generation's workload speaks the protocol: its other lines
                                       (a script's own progress prints) are logged, not read */
  int t_is_run;                     /* the record being taken has run seconds already (progress.c's) */
  /* resizable by restart (--resume-by-restart, restart.c) */
  struct ctl_snap snap;
  int have_snap;
  int restart_pending;              /* a resize waits for the next snapshot */
  int restart_refused;              /* a resize was refused: not asked again before the next snapshot */
  int restart_stopping;             /* this generation is stopped for a resize by restart */
  int64_t redo_below;               /* the steps the generation before had done (a step below is redone) */
  int in_snapshot;                  /* taking a snapshot's steps: the policy asks after its checkpoint */
  int64_t snap_step;                /* the step of this generation's last snapshot (-1: none yet) */
  int64_t save_every;               /* steps between two snapshots, as measured (-1: unknown) */
  int gen_init;                     /* this generation's init record was written */
};

static double now_t(const struct ctl *c) { return pit_now() - c->t0; }

static void warn(const struct ctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(const struct ctl *c, const char *fmt, ...) {
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

void pit_run_opts_init(struct pit_run_opts *o) {
  memset(o, 0, sizeof *o);
  o->provider = "local";
  o->deftype = "local-1";
  o->nmin = 1;
  o->nmax = 0;
  o->ranks_per_node = 1;
  o->max_restarts = 3;
  o->total_steps = -1;
  o->start_timeout_s = 120;
  o->stop_timeout_s = 60;
  o->grace_s = 30;
}

/* ---------------- records out: events file and store ---------------- */

static int out_record(struct ctl *c, const struct pit_record *r, struct pit_err *e) {
  int rc = 0;
  if (r->type == PIT_REC_ITER && r->step >= 0) {
    if (r->step < c->step_written)
      return 0; /* done again after its checkpoint was lost: the events file has it */
    c->step_written = r->step + 1;
  }
  if (c->ev_open && (rc = pit_events_write(&c->ev, r, e)) < 0)
    return rc;
  if (c->store && (rc = pit_store_add(c->store, r, e)) < 0)
    return rc;
  return 0;
}

static int out_flush(struct ctl *c, struct pit_err *e) {
  int rc = 0;
  if (c->ev_open && (rc = pit_events_flush(&c->ev, e)) < 0)
    return rc;
  if (c->store && (rc = pit_store_commit(c->store, e)) < 0)
    return rc;
  return 0;
}

/* Writes the held records with step < upto (all when upto < 0). */
static int release_held(struct ctl *c, int64_t upto, struct pit_err *e) {
  int k = 0, rc = 0;
  for (int i = 0; i < c->nheld; i++) {
    struct pit_record *r = &c->held[i];
    if (rc == 0 && (upto < 0 || r->type != PIT_REC_ITER || r->step < upto)) {
      rc = out_record(c, r, e);
      pit_record_release(r);
    } else if (rc == 0) {
      if (k != i) {
        c->held[k] = c->held[i];
        pit_record_init(&c->held[i]);
      }
      k++;
    } else {
      pit_record_release(r);
    }
  }
  c->nheld = rc == 0 ? k : 0;
  return rc;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Drops the held records; returns the steps they held, each counted once
 * (the lines of several ranks read from a log are one record per rank and
 * step; records without a step count one each). */
static int64_t drop_held(struct ctl *c) {
  int64_t lost = 0, *steps = malloc((size_t)(c->nheld > 0 ? c->nheld : 1) * sizeof *steps);
  int ns = 0;
  for (int i = 0; i < c->nheld; i++) {
    if (c->held[i].type == PIT_REC_ITER) {
      if (steps && c->held[i].step >= 0)
        steps[ns++] = c->held[i].step;
      else
        lost++;
    }
    pit_record_release(&c->held[i]);
  }
  c->nheld = 0;
  if (steps)
    qsort(steps, (size_t)ns, sizeof *steps, cmp_i64);
  for (int i = 0; i < ns; i++)
    lost += i == 0 || steps[i] != steps[i - 1];
  free(steps);
  return lost;
}

static int hold(struct ctl *c, const struct pit_record *r, struct pit_err *e) {
  if (PIT_GROW(c->held, c->nheld + 1, c->capheld))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  pit_record_init(&c->held[c->nheld]);
  int rc = pit_record_copy(&c->held[c->nheld], r);
  if (rc < 0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  c->nheld++;
  return 0;
}

static void base_record(const struct ctl *c, struct pit_record *r, enum pit_rec_type t) {
  pit_record_init(r);
  r->type = t;
  snprintf(r->run, sizeof r->run, "%s", c->o->run);
  r->gen = c->gen;
  r->t = now_t(c);
}

static int node_record(struct ctl *c, const struct pit_node *n, const char *action, struct pit_err *e) {
  struct pit_record r;
  base_record(c, &r, PIT_REC_NODE);
  snprintf(r.action, sizeof r.action, "%s", action);
  snprintf(r.node, sizeof r.node, "%s", n->id);
  snprintf(r.itype, sizeof r.itype, "%s", n->itype);
  r.price_h = n->price_h;
  if (strcmp(action, "start") == 0 && isfinite(n->t_start)) /* billed from its start, as the provider bills */
    r.t = n->t_start;
  /* written through at once: a restarted controller's reconciliation and the bill rest on it */
  int rc = out_record(c, &r, e);
  if (rc == 0)
    rc = out_flush(c, e);
  pit_record_release(&r);
  return rc;
}

/* A decision record (struct pit_decision): what = the policy's kind of move
 * ("add", "remove", "switch"; "resize" for a schedule), "keep" at a cost/time
 * decision point, "recommend" when the workload cannot be resized; the chosen
 * membership is the first alternative (the timeline labels it), then the
 * others weighed with the rest of the job's predicted time and cost (or the
 * membership kept, when the policy weighed none). The controller adds
 * policy, action, from, to, and per alternative its model, t_p and
 * intervals and whether it fits the deadline and budget. */
static int decision_record(struct ctl *c, const struct pit_choice *ch, const char *policy,
                           struct pit_err *e) {
  char from[PIT_MEMBERSHIP_TEXT_MAX], to[PIT_MEMBERSHIP_TEXT_MAX], reason[1700];
  pit_membership_format(&c->cur, from, sizeof from);
  pit_membership_format(&ch->to, to, sizeof to);
  snprintf(reason, sizeof reason, "%s (policy %s)", ch->reason, policy);
  int keep = pit_membership_equal(&ch->to, &c->cur);
  /* the spot layer's change of market is no resize of the cost policy's (replays leave it out) */
  const char *action = keep ? (ch->act == PIT_ACT_RESIZE ? "resize" : "keep")
                       : strcmp(policy, "spot") == 0 ? "market" : ch->act == PIT_ACT_RESIZE ? "resize" : "recommend";
  struct pit_decision d;
  pit_decision_init(&d);
  snprintf(d.kind, sizeof d.kind, "%s", ch->act == PIT_ACT_RESIZE && ch->kind[0] ? ch->kind : action);
  d.step = c->step_next;
  d.reason = strdup(reason);
  int rc = d.reason ? 0 : PIT_ENOMEM;
  /* alternatives: the chosen first */
  int order[PIT_POLICY_ALTS_MAX + 1], nord = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < ch->nalts; i++)
      if (pit_membership_equal(&ch->alts[i].m, &ch->to) == (pass == 0))
        order[nord++] = i;
  if (nord == 0 || !pit_membership_equal(&ch->alts[order[0]].m, &ch->to)) {
    rc = rc ? rc : pit_decision_add_alt(&d, to, NAN, NAN);
    if (ch->nalts == 0 && !keep)
      rc = rc ? rc : pit_decision_add_alt(&d, from, NAN, NAN);
  }
  for (int k = 0; rc == 0 && k < nord; k++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&ch->alts[order[k]].m, m, sizeof m);
    rc = pit_decision_add_alt(&d, m, ch->alts[order[k]].rest_s, ch->alts[order[k]].cost);
  }
  char *text = NULL;
  if (rc < 0)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  else
    rc = pit_decision_encode(&d, &text, e);
  int skip = d.nalts - nord; /* leading alternatives not from the policy */
  pit_decision_release(&d);
  if (rc < 0)
    return rc;
  cJSON *o = cJSON_Parse(text);
  free(text);
  if (!o)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  cJSON_AddStringToObject(o, "policy", policy);
  cJSON_AddStringToObject(o, "action", action);
  cJSON_AddStringToObject(o, "from", from);
  cJSON_AddStringToObject(o, "to", to);
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "alternatives");
  for (int k = 0; arr && k < nord && skip + k < cJSON_GetArraySize(arr); k++) {
    const struct pit_policy_alt *a = &ch->alts[order[k]];
    cJSON *x = cJSON_GetArrayItem(arr, skip + k), *iv;
    cJSON_AddStringToObject(x, "what", a->kind);
    cJSON_AddStringToObject(x, "model", a->model);
    cJSON_AddNumberToObject(x, "pit_s", a->tp);
    if ((iv = cJSON_AddArrayToObject(x, "pit_interval_s"))) {
      cJSON_AddItemToArray(iv, cJSON_CreateNumber(a->tp_lo));
      cJSON_AddItemToArray(iv, cJSON_CreateNumber(isfinite(a->tp_hi) ? a->tp_hi : -1));
    }
    if ((iv = cJSON_AddArrayToObject(x, "predicted_interval_s"))) {
      cJSON_AddItemToArray(iv, cJSON_CreateNumber(a->rest_lo));
      cJSON_AddItemToArray(iv, cJSON_CreateNumber(isfinite(a->rest_hi) ? a->rest_hi : -1));
    }
    cJSON_AddBoolToObject(x, "fits", a->feasible);
  }
  text = pit_json_print(o);
  cJSON_Delete(o);
  if (!text)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  struct pit_record r;
  base_record(c, &r, PIT_REC_DECISION);
  r.step = c->step_next;
  r.detail = text;
  rc = out_record(c, &r, e);
  pit_record_release(&r);
  return rc;
}

/* ---------------- state file, lock ---------------- */

static int write_state(struct ctl *c, struct pit_err *e) {
  char path[1100], text[4096], mem[256];
  snprintf(path, sizeof path, "%s/state", c->state_dir);
  pit_membership_format(&c->cur, mem, sizeof mem);
  int at = snprintf(text, sizeof text, "gen %d\nstep %lld\nckpt %s\nrestarts %d\nmembership %s\npgids", c->gen,
                    (long long)c->step_safe, c->ckpt_held[0] ? c->ckpt_held : c->ckpt[0] ? c->ckpt : "-",
                    c->res->restarts, mem);
  for (int i = 0; c->g && i < c->g->nproc && at < (int)sizeof text - 32; i++)
    if (!c->g->proc[i].exited)
      at += snprintf(text + at, sizeof text - (size_t)at, " %d", (int)c->g->proc[i].pid);
  snprintf(text + at, sizeof text - (size_t)at, "\n%s", c->finished ? "end done\n" : c->failed_exit ? "end failed\n" : "");
  return pit_file_write_atomic(path, text, strlen(text), e);
}

/* The checkpoint the state file names must outlive a killed controller: its
 * workload may run on and rotate that file away before a new controller resumes
 * from it. A hard link "held-<step>.ckpt" in the state directory keeps it (no
 * copy), made before the checkpoint record reaches the events file; the older
 * held links go only after the state names the new one, so whichever of the
 * events file and the state a kill leaves newer, its checkpoint is held. Where
 * the checkpoint is not on this filesystem (or has no step), the state names the
 * workload's path. */
static void held_path(const struct ctl *c, int64_t step, char *buf, size_t n) {
  snprintf(buf, n, "%s/held-%012lld.ckpt", c->state_dir, (long long)step);
}

static void hold_ckpt(struct ctl *c, int64_t step) {
  char held[1100];
  struct pit_err e2 = {0};
  c->ckpt_held[0] = 0;
  if (step < 0)
    return;
  held_path(c, step, held, sizeof held);
  if (pit_atomic_link(c->ckpt, held, &e2) == 0)
    snprintf(c->ckpt_held, sizeof c->ckpt_held, "%s", held);
}

/* Once the state names c->ckpt_held: the other held links go but the newest
 * one below it, so a damaged newest checkpoint has an older one beside it
 * whatever the workload's rotation removed (resume.c falls back to it). */
static void unhold_older(struct ctl *c) {
  const char *keep = strrchr(c->ckpt_held, '/');
  DIR *d = keep ? opendir(c->state_dir) : NULL;
  if (!d)
    return;
  long long ks = -1, s, prev = -1;
  sscanf(keep + 1, "held-%lld.ckpt", &ks);
  struct dirent *de;
  for (int pass = 0; pass < 2; pass++) {
    rewinddir(d);
    while ((de = readdir(d))) {
      if (strncmp(de->d_name, "held-", 5) != 0 || strcmp(de->d_name, keep + 1) == 0)
        continue;
      if (sscanf(de->d_name, "held-%lld.ckpt", &s) != 1)
        s = -1;
      if (pass == 0 && s < ks && s > prev)
        prev = s;
      if (pass == 1 && (s < 0 || s != prev)) {
        char p[1400];
        snprintf(p, sizeof p, "%s/%s", c->state_dir, de->d_name);
        unlink(p);
      }
    }
  }
  closedir(d);
}

/* The newest checkpoint record of the events file (the durable log, which a
 * kill between its flush and the state's write leaves ahead of the state):
 * 1 with *step and its path (held link if there, else the workload's), 0 if none. */
static int events_last_ckpt(const struct ctl *c, int64_t *step, char *path, size_t n) {
  struct pit_runlog log;
  struct pit_err e2 = {0};
  char last[1100] = "";
  *step = -1;
  pit_runlog_init(&log);
  const struct pit_runlog_ckpt *k = pit_runlog_load(&log, c->events_path, &e2) == 0 ? pit_runlog_last_ckpt(&log) : NULL;
  if (k) {
    *step = k->step;
    snprintf(last, sizeof last, "%s", k->path);
  }
  pit_runlog_release(&log);
  if (*step < 0)
    return 0;
  char held[1100];
  held_path(c, *step, held, sizeof held);
  const char *use = access(held, R_OK) == 0 ? held : access(last, R_OK) == 0 ? last : NULL;
  if (!use)
    return 0;
  snprintf(path, n, "%s", use);
  return 1;
}

struct prev_state {
  int found, gen, restarts;
  int done, failed; /* the controller that wrote it finished the job, or ended with an error */
  int64_t step;
  char ckpt[1100];
  int pgids[64], npg;
};

static void read_state(struct ctl *c, struct prev_state *ps) {
  memset(ps, 0, sizeof *ps);
  char path[1100], text[4096];
  snprintf(path, sizeof path, "%s/state", c->state_dir);
  if (ctl_read_small(path, text, sizeof text) < 0)
    return;
  ps->found = 1;
  long long st = 0;
  char ck[1024] = "-";
  sscanf(text, "gen %d\nstep %lld\nckpt %1023s\nrestarts %d", &ps->gen, &st, ck, &ps->restarts);
  ps->step = st;
  if (strcmp(ck, "-") != 0)
    snprintf(ps->ckpt, sizeof ps->ckpt, "%s", ck);
  ps->done = strstr(text, "\nend done") != NULL;
  ps->failed = strstr(text, "\nend failed") != NULL;
  char *p = strstr(text, "pgids");
  if (p) {
    p += 5;
    char *end;
    long v;
    while (ps->npg < 64 && (v = strtol(p, &end, 10), end != p)) {
      ps->pgids[ps->npg++] = (int)v;
      p = end;
    }
  }
}

static int take_lock(struct ctl *c, struct pit_err *e) {
  char path[1100];
  snprintf(path, sizeof path, "%s/lock", c->state_dir);
  c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (c->lock_fd < 0)
    return pit_err_errno(e, PIT_EIO, "cannot open '%s'", path);
  if (flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
    char who[64] = "";
    ctl_read_small(path, who, sizeof who);
    close(c->lock_fd);
    c->lock_fd = -1;
    pit_err_set(e, PIT_ESTATE, "run '%s' is being controlled by another pitstop (pid %s)", c->o->run,
                who[0] ? who : "?");
    pit_err_hint(e, "wait for it, or stop it; two controllers of one run would start its nodes twice");
    return PIT_ESTATE;
  }
  char pid[32];
  int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  if (ftruncate(c->lock_fd, 0) < 0 || pwrite(c->lock_fd, pid, (size_t)n, 0) != n)
    return pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
  return 0;
}

/* ---------------- nodes ---------------- */

/* itype: a membership entry's type (TYPE, TYPE@spot, TYPE@on-demand); a
 * provider without a spot market gets the bare type. A spot start that
 * fails sets c->spot_failed (no capacity, for the spot policy). */
static int start_node(struct ctl *c, const char *itype, const char *why, struct pit_err *e) {
  if (c->nnodes == MAX_NODES)
    return pit_err_set(e, PIT_EARG, "more than %d nodes", MAX_NODES);
  struct pit_node *n = &c->nodes[c->nnodes];
  double t = now_t(c);
  char base[PIT_NAME_MAX];
  int mk = pit_itype_market(itype, base, sizeof base, NULL);
  int rc = c->prov.ops->start(&c->prov, c->prov.ops->spot_market ? itype : base, n, e);
  if (rc < 0) {
    c->spot_failed = mk == PIT_MARKET_SPOT && rc == PIT_ESTATE;
    return rc;
  }
  if (n->spot)
    ctl_spot_up(&c->spot, now_t(c));
  snprintf(n->why, sizeof n->why, "%s", why);
  n->t_start = t;
  n->t_ready = now_t(c);
  n->t_stop = NAN;
  c->nnodes++;
  if ((rc = node_record(c, n, "start", e)) < 0 || (rc = node_record(c, n, "ready", e)) < 0)
    return rc;
  return 0;
}

/* A node's bill to until (its stop, if it stopped): the live spend (catalog/cost.c). */
static double node_cost(const struct ctl *c, const struct pit_node *n, double until) {
  const struct pit_itype *t = c->have_cat ? pit_catalog_find(&c->cat, n->itype) : NULL;
  return pit_node_cost(t, n->price_h, (isnan(n->t_stop) ? until : n->t_stop) - n->t_start);
}

/* The report's line for a node that ended. */
static void node_entry(struct ctl *c, const struct pit_node *n, const char *end) {
  struct pit_run_result *res = c->res;
  if (res->nnodes == (int)(sizeof res->nodes / sizeof res->nodes[0]))
    return;
  struct pit_run_node *r = &res->nodes[res->nnodes++];
  memset(r, 0, sizeof *r);
  snprintf(r->id, sizeof r->id, "%s", n->id);
  snprintf(r->itype, sizeof r->itype, "%s", n->itype);
  snprintf(r->end, sizeof r->end, "%s", end);
  snprintf(r->why, sizeof r->why, "%s", n->why[0] ? n->why : "adopted from a previous controller");
  r->spot = n->spot;
  r->t_start = n->t_start;
  r->t_ready = n->t_ready;
  r->t_stop = n->t_stop;
  const struct pit_itype *t = c->have_cat ? pit_catalog_find(&c->cat, n->itype) : NULL;
  double secs = n->t_stop - n->t_start;
  r->billed_s = secs > 0 ? t ? pit_itype_billed_s(t, secs) : secs : 0;
  r->cost = node_cost(c, n, n->t_stop);
  r->od_cost = t ? pit_node_cost(t, t->price_h, secs) : r->cost;
  r->waste_s = n->waste_s;
}

static int stop_node_at(struct ctl *c, int i, const char *action, struct pit_err *e) {
  struct pit_node *n = &c->nodes[i];
  int rc = c->prov.ops->stop(&c->prov, n, e);
  n->t_stop = now_t(c);
  c->res->cost += node_cost(c, n, n->t_stop);
  node_entry(c, n, action);
  int rc2 = node_record(c, n, action, rc < 0 ? NULL : e);
  memmove(&c->nodes[i], &c->nodes[i + 1], (size_t)(c->nnodes - i - 1) * sizeof *n);
  c->nnodes--;
  return rc < 0 ? rc : rc2;
}

static void stop_all_nodes(struct ctl *c) {
  while (c->nnodes > 0) {
    struct pit_err e2 = {0};
    if (stop_node_at(c, c->nnodes - 1, "stop", &e2) < 0)
      warn(c, "%s", e2.msg);
  }
}

/* n is a node of a membership entry of type itype: the same type, and the
 * entry's market when it names one (a bare type takes either). */
static int node_of(const struct pit_node *n, const char *itype) {
  char base[PIT_NAME_MAX];
  int mk = pit_itype_market(itype, base, sizeof base, NULL);
  return strcmp(base, n->itype) == 0 && (mk == PIT_MARKET_DEFAULT || mk == n->spot);
}

/* The nodes the provider is taking back (a notice) stop as lost. */
static int stop_reclaimed(struct ctl *c, struct pit_err *e) {
  int rc;
  for (int r = 0; r < c->nreclaimed; r++)
    for (int i = c->nnodes - 1; i >= 0; i--)
      if (strcmp(c->nodes[i].id, c->reclaimed[r]) == 0 && (rc = stop_node_at(c, i, "lost", e)) < 0)
        return rc;
  c->nreclaimed = 0;
  return 0;
}

/* Nodes to stop and start so that the live nodes match want: each entry
 * (those naming a market first) claims its nodes from the front of the list,
 * the unclaimed ones stop (from the end), the missing ones start. */
static int reshape(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e) {
  int rc;
  /* nodes the provider is taking back go first (they are replaced below) */
  if ((rc = stop_reclaimed(c, e)) < 0)
    return rc;
  int claimed[MAX_NODES] = {0}, need[PIT_MEMBERS_MAX];
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < want->n; k++) {
      char base[PIT_NAME_MAX];
      if ((pit_itype_market(want->m[k].itype, base, sizeof base, NULL) == PIT_MARKET_DEFAULT) != pass)
        continue;
      need[k] = want->m[k].nodes;
      for (int i = 0; i < c->nnodes && need[k] > 0; i++)
        if (!claimed[i] && node_of(&c->nodes[i], want->m[k].itype)) {
          claimed[i] = 1;
          need[k]--;
        }
    }
  for (int i = c->nnodes - 1; i >= 0; i--)
    if (!claimed[i] && (rc = stop_node_at(c, i, "stop", e)) < 0)
      return rc;
  for (int k = 0; k < want->n; k++)
    for (; need[k] > 0; need[k]--)
      if ((rc = start_node(c, want->m[k].itype, why, e)) < 0)
        return rc;
  char was[256], to[256];
  pit_membership_format(&c->cur, was, sizeof was);
  pit_membership_format(want, to, sizeof to);
  if (strcmp(was, to) != 0)
    c->nrecent = 0; /* the status line's pace is the new membership's, from its own steps */
  c->cur = *want;
  return 0;
}

/* ---------------- records in ---------------- */

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double recent_median(const struct ctl *c) {
  if (c->nrecent == 0)
    return NAN;
  double v[RECENT];
  int n = c->nrecent < RECENT ? c->nrecent : RECENT;
  memcpy(v, c->recent, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double spent(const struct ctl *c, double t) {
  double usd = c->res->cost;
  for (int i = 0; i < c->nnodes; i++)
    usd += node_cost(c, &c->nodes[i], t);
  return usd;
}

/* The rest of the job's time and cost with 95% intervals: remaining steps ×
 * the recent step times' mean ± its half-width (t quantile × sd / √n; a
 * span of steps timed by one progress line counts once), the cost as spent +
 * the live nodes' bills grown by that time (pit_node_cost: billed seconds). The point (eta_s) is the
 * same mean's, so it lies inside its interval; with fewer than two
 * measurements there is a point (the one measured) and no interval. */
static void eta_interval(const struct ctl *c, struct pit_run_status *st) {
  st->eta_lo = st->eta_hi = st->cost_end = st->cost_lo = st->cost_hi = NAN;
  int n = c->nrecent < RECENT ? c->nrecent : RECENT, i;
  if (!(c->total_steps > 0) || n < 2)
    return;
  double sum = 0, ss = 0;
  for (i = 0; i < n; i++)
    sum += c->recent[i];
  double mean = sum / n;
  for (i = 0; i < n; i++)
    ss += (c->recent[i] - mean) * (c->recent[i] - mean);
  double half = pit_t_quantile(0.975, n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n);
  double left = (double)(c->total_steps > c->step_next ? c->total_steps - c->step_next : 0);
  st->eta_s = left * mean;
  st->eta_lo = left * (mean - half > 0 ? mean - half : 0);
  st->eta_hi = left * (mean + half);
  double *cost[3] = {&st->cost_end, &st->cost_lo, &st->cost_hi}, rest[3] = {st->eta_s, st->eta_lo, st->eta_hi};
  for (int k = 0; k < 3; k++) /* the nodes up now, on until the end: their bill then less their bill now */
    for (*cost[k] = st->spent, i = 0; i < c->nnodes; i++)
      *cost[k] += node_cost(c, &c->nodes[i], st->t + rest[k]) - node_cost(c, &c->nodes[i], st->t);
}

static void status(struct ctl *c, const char *phase, int force) {
  double t = now_t(c);
  if (!c->o->status || (!force && t - c->last_status < 0.5))
    return;
  c->last_status = t;
  char mem[256];
  pit_membership_format(&c->cur, mem, sizeof mem);
  struct pit_run_status st;
  memset(&st, 0, sizeof st);
  st.gen = c->gen;
  st.membership = mem;
  st.step = c->step_next;
  st.total_steps = c->total_steps;
  st.t = t;
  st.tp_s = recent_median(c);
  st.samples_per_s = c->recent_batch > 0 && st.tp_s > 0 ? (double)c->recent_batch / st.tp_s : NAN;
  st.spent = spent(c, t);
  st.eta_s = c->total_steps > 0 && st.tp_s > 0 ? (double)(c->total_steps - c->step_next) * st.tp_s : NAN;
  eta_interval(c, &st);
  st.phase = phase;
  st.resizable = c->resizable || !c->o->cmd || c->o->resume_by_restart;
  c->o->status(c->o->ctx, &st);
}

static int decide(struct ctl *c, struct pit_err *e);
static int request_stop(struct ctl *c, const struct pit_choice *ch, const char *policy, int node,
                        struct pit_err *e);

/* The job's length from the workload's init record ("planned_iters"), and
 * the schedule checked against it. */
static int on_init(struct ctl *c, const struct pit_record *r, struct pit_err *e) {
  if (c->total_steps > 0 || !r->config)
    return 0;
  cJSON *o = cJSON_Parse(r->config);
  const cJSON *p = o ? cJSON_GetObjectItemCaseSensitive(o, "planned_iters") : NULL;
  const cJSON *ipe = o ? cJSON_GetObjectItemCaseSensitive(o, "iters_per_epoch") : NULL;
  const cJSON *ep = o ? cJSON_GetObjectItemCaseSensitive(o, "epochs") : NULL;
  const cJSON *b = o ? cJSON_GetObjectItemCaseSensitive(o, "batch") : NULL;
  int64_t per = cJSON_IsNumber(ipe) && ipe->valuedouble > 0 ? (int64_t)ipe->valuedouble : 0;
  if (cJSON_IsNumber(p) && p->valuedouble > 0)
    c->total_steps = (int64_t)p->valuedouble;
  else if (per > 0 && c->o->job_epochs > 0) /* a log a parser reads: --epochs × its iterations per epoch */
    c->total_steps = c->o->job_epochs * per;
  else if (cJSON_IsNumber(b) && b->valuedouble > 0 && c->o->job_samples > 0)
    c->total_steps = (c->o->job_samples + (int64_t)b->valuedouble - 1) / (int64_t)b->valuedouble;
  else if (per > 0 && cJSON_IsNumber(ep) && ep->valuedouble > 0)
    c->total_steps = (int64_t)ep->valuedouble * per;
  cJSON_Delete(o);
  const struct pit_policy *pol = &c->o->policy;
  for (int i = 0; c->total_steps > 0 && i < pol->nsched; i++)
    if (pol->sched[i].step >= c->total_steps)
      return pit_err_set(e, PIT_EARG, "schedule step %lld is beyond the job's %lld iterations",
                         (long long)pol->sched[i].step, (long long)c->total_steps);
  return 0;
}

/* The init record's config names the generation's membership (the store
 * then knows what each run ran on: pitstop profile, the cost policy's prior),
 * and its node count is the membership's: the workload counts distinct host
 * names, and the local provider's nodes (CPU sets of one host) are one host —
 * the quickstart's local-1:2 generation was summarized as "nodes=1". */
static int tag_membership(const struct ctl *c, struct pit_record *r, struct pit_err *e) {
  cJSON *o = r->config ? cJSON_Parse(r->config) : cJSON_CreateObject();
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return 0; /* a config that is not an object is left as the workload wrote it */
  }
  struct pit_membership bare; /* the store ranks memberships by type: markets left out */
  pit_membership_bare(&c->cur, &bare);
  char *m = pit_membership_json(&bare);
  cJSON *mj = m ? cJSON_Parse(m) : NULL;
  free(m);
  if (!mj) {
    cJSON_Delete(o);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  cJSON_DeleteItemFromObjectCaseSensitive(o, "membership");
  cJSON_AddItemToObject(o, "membership", mj);
  /* what the controller knows of a command's job, kept with the run (predict --db, summary) */
  if (c->total_steps > 0 && !cJSON_GetObjectItemCaseSensitive(o, "planned_iters"))
    cJSON_AddNumberToObject(o, "planned_iters", (double)c->total_steps);
  if (c->o->cmd && !cJSON_GetObjectItemCaseSensitive(o, "model")) {
    const char *name = c->o->cmd[0];
    for (int i = 0; c->o->cmd[i]; i++) { /* the script a launcher (torchrun, python3) runs */
      size_t n = strlen(c->o->cmd[i]);
      if (n > 3 && strcmp(c->o->cmd[i] + n - 3, ".py") == 0) {
        name = c->o->cmd[i];
        break;
      }
    }
    const char *base = strrchr(name, '/');
    cJSON_AddStringToObject(o, "model", base ? base + 1 : name);
  }
  if (c->o->cmd && bare.n == 1 && !cJSON_GetObjectItemCaseSensitive(o, "itype"))
    cJSON_AddStringToObject(o, "itype", bare.m[0].itype);
  int nodes = pit_membership_nodes(&bare);
  if (nodes > 0) {
    cJSON_DeleteItemFromObjectCaseSensitive(o, "nodes");
    cJSON_AddNumberToObject(o, "nodes", nodes);
    r->nodes = nodes;
  }
  char *text = pit_json_print(o);
  cJSON_Delete(o);
  if (!text)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  free(r->config);
  r->config = text;
  return 0;
}

/* A workload that stopped of itself because it measured what it was asked to
 * (`pitstop train --until-steady`: the end record's detail says "steady", or
 * "cap" when the cap came first) has finished the job — `pitstop profile`'s
 * candidates — rather than stopped without being asked (which the controller
 * resumes). */
static int measured_enough(const char *detail) {
  cJSON *d = detail ? cJSON_Parse(detail) : NULL;
  const cJSON *why = cJSON_GetObjectItemCaseSensitive(d, "reason");
  int yes = cJSON_IsString(why) && (strcmp(why->valuestring, "steady") == 0 || strcmp(why->valuestring, "cap") == 0);
  cJSON_Delete(d);
  return yes;
}

static void mirror_ckpt(struct ctl *c, const char *path, int64_t step);
/* A command whose log has no init line: the controller's own init record
 * before its first iteration (launch → that iteration), so the stored run
 * keeps its membership, type, job length and script (tag_membership). */
static int own_init(struct ctl *c, double now, struct pit_err *e) {
  struct pit_record r;
  base_record(c, &r, PIT_REC_INIT);
  r.t = now;
  r.init_s = now - c->t_launch;
  r.ranks = 1;
  r.config = strdup("{}");
  int rc = r.config ? on_init(c, &r, e) : pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (rc == 0)
    rc = tag_membership(c, &r, e);
  if (rc == 0)
    rc = out_record(c, &r, e);
  c->gen_init = 1;
  if (isnan(c->init_s))
    c->init_s = r.init_s;
  pit_record_release(&r);
  return rc;
}

static int on_record(void *ctx, const struct pit_record *in, struct pit_err *e) {
  struct ctl *c = ctx;
  struct pit_record r;
  pit_record_init(&r);
  if (pit_record_copy(&r, in) < 0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  snprintf(r.run, sizeof r.run, "%s", c->o->run);
  r.gen = c->gen;
  double now = now_t(c);
  if (c->t_is_run && !isnan(r.t)) {
    if (r.t > now)
      r.t = now;
  } else if (!isnan(r.t)) {
    if (!c->gen_have_offset) {
      c->gen_offset = now - r.t;
      c->gen_have_offset = 1;
    }
    r.t += c->gen_offset;
    if (r.t > now)
      r.t = now;
  } else {
    r.t = now;
  }
  int rc = 0;
  switch (r.type) {
  case PIT_REC_ITER:
    if (!c->gen_init && c->o->cmd && (rc = own_init(c, now, e)) < 0)
      break;
    if (c->o->resume_by_restart && c->gen_iters == 0 && r.step >= 0 && r.step < c->redo_below) {
      int64_t redo = c->redo_below - r.step; /* measured: where its progress lines say it resumed */
      c->res->lost_steps += redo;
      c->resume_lag = c->step_safe > r.step ? c->step_safe - r.step : 0;
      warn(c, "generation %d resumed at step %lld: the %lld step%s since its snapshot are redone", c->gen,
           (long long)r.step, (long long)redo, redo == 1 ? "" : "s");
    }
    if (c->o->resume_by_restart && r.step >= 0 && r.step < c->step_safe) { /* redone, kept already */
      if (c->gen_iters++ == 0)
        c->t_first_iter = now;
      break;
    }
    if (r.step >= 0 && r.step != c->step_next && c->gen_iters == 0)
      c->gen_step0 = r.step;
    if (r.step >= 0)
      c->step_next = r.step + 1;
    if (c->gen_iters++ == 0)
      c->t_first_iter = now;
    if (isnan(c->first_iter_t))
      c->first_iter_t = now;
    if (r.step_s > 0 && !(c->t_is_run && c->prog.span_rest > 0)) { /* a span of steps timed by one
                                                                      line is one measurement */
      c->recent[c->nrecent++ % RECENT] = r.step_s;
      if (r.batch > 0)
        c->recent_batch = r.batch;
    }
    rc = hold(c, &r, e);
    struct pit_membership bare; /* spot and on-demand nodes of a type compute alike */
    pit_membership_bare(&c->cur, &bare);
    if (rc == 0)
      rc = ctl_obs_iter(&c->obs, &bare, &r, e);
    if (rc == 0)
      rc = decide(c, e);
    break;
  case PIT_REC_CHECKPOINT:
    if (!c->line_protocol) /* a script's own "snapshot saved" line: restart.c's (--resume-by-restart), */
      break;               /* not a checkpoint pitstop can resume a generation from */
    if (r.path) {
      snprintf(c->ckpt, sizeof c->ckpt, "%s", r.path);
      c->resizable = 1;
      hold_ckpt(c, r.step);
    }
    if (r.step >= 0)
      c->step_safe = r.step;
    c->last_ckpt_s = r.ckpt_s;
    if ((rc = release_held(c, r.step >= 0 ? r.step : -1, e)) == 0 && (rc = out_record(c, &r, e)) == 0 &&
        (rc = out_flush(c, e)) == 0 && (rc = write_state(c, e)) == 0)
      unhold_older(c);
    if (rc == 0 && r.path && r.step >= 0)
      mirror_ckpt(c, r.path, r.step);
    break;
  case PIT_REC_END:
    snprintf(c->end_status, sizeof c->end_status, "%s", r.status[0] ? r.status : "done");
    if (!c->stop_requested && strcmp(c->end_status, "stopped") == 0 && measured_enough(r.detail))
      snprintf(c->end_status, sizeof c->end_status, "done");
    if ((rc = release_held(c, -1, e)) == 0)
      rc = out_record(c, &r, e);
    break;
  case PIT_REC_INIT:
    c->gen_init = 1;
    c->init_s = r.init_s;
    rc = on_init(c, &r, e);
    if (rc == 0)
      rc = tag_membership(c, &r, e);
    if (rc == 0)
      rc = out_record(c, &r, e);
    break;
  default:
    rc = hold(c, &r, e);
    break;
  }
  pit_record_release(&r);
  status(c, c->stop_requested ? "resizing" : "running", 0);
  return rc;
}

static void on_parse_warn(void *ctx, const struct pit_err *w) {
  const struct ctl *c = ctx;
  warn(c, "workload output: %s", w->msg);
}

/* Seconds one resize took in this job, from the decision to the next
 * generation's first iteration, less any wait for spot capacity with no
 * node held (mean of the resizes so far; NaN: none yet). */
static double switch_seconds(const struct ctl *c) {
  double sum = 0;
  int n = 0;
  for (int i = 0; i < c->res->ngens; i++) {
    const struct pit_run_gen *g = &c->res->gens[i];
    /* the next generation's first iteration: its entry, or the running one's */
    double first = i + 1 < c->res->ngens ? c->res->gens[i + 1].t_first_iter : c->t_first_iter;
    /* (first > t1: the next generation has had its first iteration, not only the one before) */
    if (strcmp(g->end, "resized") == 0 && isfinite(g->exit_s) && isfinite(first) && first > g->t1) {
      sum += first - (g->t1 - g->exit_s) - g->idle_s;
      n++;
    }
  }
  return n ? sum / n : NAN;
}

/* The policy weighs memberships by type (cost, time): it sees them bare. */
static int weighs(const struct ctl *c) {
  return c->o->policy.kind == PIT_POLICY_COST || c->o->policy.kind == PIT_POLICY_TIME;
}

/* The policy's state from what the controller has seen. */
static void policy_state(const struct ctl *c, struct pit_policy_state *s) {
  memset(s, 0, sizeof *s);
  s->gen = c->gen;
  s->step = c->step_next;
  s->total_steps = c->total_steps;
  s->cur = c->cur;
  if (weighs(c)) /* cost and time weigh types; the market is the spot layer's (spot_point) */
    pit_membership_bare(&c->cur, &s->cur);
  s->nmin = c->o->nmin;
  s->nmax = c->o->nmax;
  s->resizable = c->resizable || !c->o->cmd || c->o->resume_by_restart;
  s->t = now_t(c);
  s->spent = spent(c, s->t);
  s->since_change = c->step_next - c->gen_step0;
  s->switch_s = switch_seconds(c);
  ctl_obs_state(&c->obs, c->nodes, c->nnodes, c->o->ranks_per_node, s);
  s->ntypes = c->ntypes;
  memcpy(s->types, c->types, (size_t)c->ntypes * sizeof c->types[0]);
}

/* ---------------- spot: the market chosen by pit_spot_decide ---------------- */

/* What the job holds: no node, a spot node among them, or on-demand only. */
static enum pit_spot_mode held_mode(const struct ctl *c) {
  if (c->nnodes == 0)
    return PIT_SPOT_IDLE;
  for (int i = 0; i < c->nnodes; i++)
    if (c->nodes[i].spot)
      return PIT_SPOT_SPOT;
  return PIT_SPOT_OD;
}

/* The catalog a membership is put on spot with (types without a spot price stay on-demand). */
static const struct pit_catalog *spot_cat(const struct ctl *c) { return c->have_cat ? &c->cat : NULL; }

/* bare on the market of mode (spot: the types with a spot price; else on-demand). */
static int on_mode(const struct ctl *c, const struct pit_membership *bare, enum pit_spot_mode mode,
                   struct pit_membership *out, struct pit_err *e) {
  return pit_membership_on_market(bare, mode == PIT_SPOT_SPOT ? PIT_MARKET_SPOT : PIT_MARKET_ON_DEMAND, spot_cat(c),
                                  out, e);
}

/* The market every entry of cur names (DEFAULT: bare, or mixed). */
static enum pit_market cur_market(const struct ctl *c) {
  int mk = PIT_MARKET_DEFAULT;
  for (int i = 0; i < c->cur.n; i++) {
    char base[PIT_NAME_MAX];
    int m = pit_itype_market(c->cur.m[i].itype, base, sizeof base, NULL);
    if (m == PIT_MARKET_DEFAULT || (i > 0 && m != mk))
      return PIT_MARKET_DEFAULT;
    mk = m;
  }
  return (enum pit_market)mk;
}

/* A policy's (bare) membership on the market the run holds now: cur itself
 * when it is cur's bare form. */
static int on_cur_market(const struct ctl *c, struct pit_membership *m, struct pit_err *e) {
  struct pit_membership bare;
  pit_membership_bare(&c->cur, &bare);
  if (pit_membership_equal(m, &bare)) {
    *m = c->cur;
    return 0;
  }
  return pit_membership_on_market(m, cur_market(c), NULL, m, e);
}

/* Σ nodes × price of bare on each market (a type without a spot price: its on-demand price). */
static void market_prices(const struct ctl *c, const struct pit_membership *bare, double *od, double *spot) {
  *od = *spot = 0;
  for (int i = 0; i < bare->n; i++) {
    const struct pit_itype *t = c->have_cat ? pit_catalog_find(&c->cat, bare->m[i].itype) : NULL;
    double p = t ? t->price_h : NAN;
    *od += bare->m[i].nodes * p;
    *spot += bare->m[i].nodes * (t && isfinite(t->spot_price_h) ? t->spot_price_h : p);
  }
}

/* Seconds a restart costs in this job: the resizes' mean (decision → first
 * iteration) once there is one, else the run's first start (nodes, launch,
 * init) plus the last checkpoint's time; NaN before the first iteration. */
static double restart_seconds(const struct ctl *c) {
  double sw = switch_seconds(c);
  if (isfinite(sw))
    return sw;
  return c->first_iter_t + (isfinite(c->last_ckpt_s) ? c->last_ckpt_s : 0);
}

/* The measured PIT time of bare (NaN: none). */
static double measured_tp(const struct ctl *c, const struct pit_membership *bare) {
  for (int i = 0; i < c->obs.nmeas; i++)
    if (pit_membership_equal(&c->obs.meas[i].m, bare))
      return c->obs.meas[i].tp;
  return recent_median(c);
}

/* How long after spot went away it is worth a try again: the spot policy's
 * decision spacing (`every` iterations), at least 1 s. */
static double spot_retry_s(const struct ctl *c) {
  struct pit_membership bare;
  pit_membership_bare(&c->cur, &bare);
  double tick = (double)(c->o->policy.every > 0 ? c->o->policy.every : 50) * measured_tp(c, &bare);
  return tick > 1 ? tick : 1;
}

/* pit_spot_decide on the run's measurements for the rest of the job on
 * bare, holding `held`; *to its choice, ch (decided) the decision to record:
 * reason, the two markets weighed (the rest of the job's time and cost on
 * each) and, when to differs from held, a resize to bare on that market.
 * 0: decided; 1: nothing measured yet (job length or PIT time unknown). */
static int spot_choose(struct ctl *c, const struct pit_membership *bare, enum pit_spot_mode held,
                       enum pit_spot_mode *to, struct pit_choice *ch, struct pit_err *e) {
  struct ctl_spot_in in = {.t = now_t(c), .deadline_s = c->o->policy.deadline_s, .tp = measured_tp(c, bare),
                           .restart_s = restart_seconds(c), .step = c->step_next, .total_steps = c->total_steps,
                           .mode = held};
  if (!(in.tp > 0) || c->total_steps <= 0 || !isfinite(in.restart_s))
    return 1;
  in.tick_s = spot_retry_s(c);
  market_prices(c, bare, &in.price_h, &in.spot_price_h);
  struct pit_spot_state st;
  ctl_spot_state(&c->spot, &in, &st);
  *to = pit_spot_decide(PIT_SPOT_PITSTOP, &st);
  memset(ch, 0, sizeof *ch);
  ch->decided = 1;
  ctl_spot_reason(&st, *to, ch->reason, sizeof ch->reason);
  snprintf(ch->kind, sizeof ch->kind, "%s", pit_spot_mode_name(*to));
  double left = (double)(c->total_steps - c->step_next) * in.tp;
  for (int k = 0; k < 2; k++) { /* the two markets weighed: the rest of the job on each */
    struct pit_policy_alt *a = &ch->alts[ch->nalts++];
    enum pit_spot_mode m = k ? PIT_SPOT_OD : PIT_SPOT_SPOT;
    int rc = on_mode(c, bare, m, &a->m, e);
    if (rc < 0)
      return rc;
    snprintf(a->kind, sizeof a->kind, "%s", k ? "on-demand" : "spot");
    snprintf(a->model, sizeof a->model, "measured");
    a->tp = a->tp_lo = a->tp_hi = in.tp;
    a->rest_s = a->rest_lo = a->rest_hi = left + (m == held ? 0 : in.restart_s);
    a->cost = a->cost_hi = a->rest_s / 3600 * (k ? in.price_h : in.spot_price_h); /* forecast: the rest of the job, predicted */
    a->feasible = (m == PIT_SPOT_OD || st.spot_avail) && in.t + a->rest_s <= in.deadline_s;
  }
  ch->act = *to == held ? PIT_ACT_KEEP : PIT_ACT_RESIZE;
  if (*to == PIT_SPOT_IDLE)
    pit_membership_clear(&ch->to);
  else if (*to != held)
    return on_mode(c, bare, *to, &ch->to, e);
  else
    ch->to = c->cur;
  return 0;
}

/* The spot layer at a cost decision point (nodes up, the workload running):
 * the policy's choice ch gets the market pit_spot_decide wants; a keep on
 * the other market becomes a resize onto it. A spot record says why. */
static int spot_point(struct ctl *c, struct pit_choice *ch, struct pit_err *e) {
  struct pit_choice sc = {0};
  struct pit_membership bare;
  pit_membership_bare(&ch->to, &bare);
  enum pit_spot_mode held = held_mode(c), to;
  int rc = spot_choose(c, &bare, held, &to, &sc, e);
  if (rc != 0)
    return rc < 0 ? rc : 0;
  if (to == PIT_SPOT_IDLE) /* cannot come with nodes up and spot held or away; never idle a running job */
    to = PIT_SPOT_OD;
  if (ch->act == PIT_ACT_RESIZE) { /* the cost policy's new membership, on the market chosen */
    snprintf(ch->reason + strlen(ch->reason), sizeof ch->reason - strlen(ch->reason), "; %s", sc.reason);
    return on_mode(c, &bare, to, &ch->to, e);
  }
  if (to == held) /* recorded as a keep */
    return decision_record(c, &sc, "spot", e);
  if ((rc = decision_record(c, ch, pit_policy_name(&c->o->policy), e)) < 0) /* the cost policy's keep */
    return rc;
  *ch = sc;
  return 1;
}

static int restart_decide(struct ctl *c, const struct pit_choice *ch, const char *policy, struct pit_err *e);

static int decide(struct ctl *c, struct pit_err *e) {
  if (c->stop_requested || c->restart_pending || c->restart_refused || c->in_snapshot)
    return 0;
  struct pit_policy_state s = {0};
  struct pit_choice ch = {0};
  policy_state(c, &s);
  const char *pol = pit_policy_name(&c->o->policy);
  int rc = pit_policy_decide(&c->o->policy, &s, &ch, e);
  if (rc == 0 && weighs(c)) { /* the policy weighs bare memberships: the run's markets put back */
    for (int i = 0; rc == 0 && i < ch.nalts; i++)
      rc = on_cur_market(c, &ch.alts[i].m, e);
    if (rc == 0)
      rc = on_cur_market(c, &ch.to, e);
  }
  if (rc == 0 && c->spot.on && ch.decided && s.resizable && (rc = spot_point(c, &ch, e)) == 1)
    return request_stop(c, &ch, "spot", -1, e);
  if (rc == 0 && ch.act == PIT_ACT_RESIZE && c->o->resume_by_restart && !c->resizable)
    return restart_decide(c, &ch, pol, e);
  if (rc < 0 || ch.act != PIT_ACT_RESIZE) {
    if (rc == 0 && !s.resizable && !pit_membership_equal(&ch.to, &c->cur) && !c->pending.reason[0]) {
      c->pending = ch; /* said once */
      c->res->recommended++;
      warn(c, "%s", ch.reason);
      return decision_record(c, &ch, pol, e);
    }
    if (rc == 0 && ch.decided)
      return decision_record(c, &ch, pol, e);
    return rc;
  }
  return request_stop(c, &ch, pol, -1, e);
}

/* Carries out ch: the decision record, then the stop request to the
 * workload. node >= 0 (a reclaim notice): SIGTERM to the processes of that
 * node that catch it (per-node launcher; the protocol's "checkpoint within
 * the grace period"), else — and with mpirun, which forwards it — SIGUSR1
 * to every process that catches it. */
static int request_stop(struct ctl *c, const struct pit_choice *ch, const char *policy, int node,
                        struct pit_err *e) {
  c->pending = *ch;
  c->stop_requested = 1;
  c->t_stop_req = now_t(c);
  int rc = decision_record(c, ch, policy, e);
  if (rc < 0)
    return rc;
  warn(c, "%s", ch->reason);
  int n = 0;
  for (int i = 0; node >= 0 && i < c->g->nproc; i++)
    if (!c->g->proc[i].exited && c->g->proc[i].node == node)
      n += ctl_signal_catchers(c->g->proc[i].pid, SIGTERM);
  if (n > 0)
    warn(c, "SIGTERM to %d process%s of node %s: checkpoint within the grace period", n, n == 1 ? "" : "es",
         c->nodes[node].id);
  for (int i = 0; n == 0 && i < c->g->nproc; i++)
    if (!c->g->proc[i].exited)
      n += ctl_signal_catchers(c->g->proc[i].pid, SIGUSR1);
  if (n == 0)
    warn(c, "no process of the workload catches SIGUSR1: it will be stopped at the time-out");
  return 0;
}

/* ---------------- resizable by restart (restart.c) ---------------- */

static int progress_emit(void *ctx, const struct pit_record *r, struct pit_err *e);

/* The resize by restart now: SIGTERM to every process group of the
 * workload (right after a snapshot), SIGKILL after the grace; the next
 * generation is the same command on the new membership. */
static void restart_stop(struct ctl *c) {
  c->restart_pending = 0;
  c->restart_stopping = 1;
  c->stop_requested = 1;
  c->t_stop_req = now_t(c);
  int k = 0;
  for (int i = 0; i < c->g->nproc; i++)
    if (!c->g->proc[i].exited && kill(-c->g->proc[i].pid, SIGTERM) == 0)
      k++;
  warn(c, "resize by restart: the snapshot at step %lld was just saved; SIGTERM to the workload (%d process "
          "group%s), restarted on the new membership",
       (long long)c->step_safe, k, k == 1 ? "" : "s");
}

/* A snapshot was saved (epoch: the epoch it follows, -1 when unknown): a
 * checkpoint record (the steps done so far are safe), and a resize waiting
 * for it is carried out. */
static int on_snapshot(struct ctl *c, int64_t epoch, struct pit_err *e) {
  int rc = 0;
  c->in_snapshot = 1;
  if (epoch >= 0 && c->have_prog)
    rc = ctl_progress_close(&c->prog, epoch, now_t(c), progress_emit, c, e);
  c->in_snapshot = 0;
  if (rc < 0)
    return rc;
  struct pit_record r;
  base_record(c, &r, PIT_REC_CHECKPOINT);
  r.step = c->step_next;
  r.path = strdup(c->snap.path);
  snprintf(c->ckpt, sizeof c->ckpt, "%s", c->snap.path);
  c->ckpt_held[0] = 0;
  c->step_safe = c->step_next;
  int64_t from = c->snap_step >= 0 ? c->snap_step : c->gen_step0;
  if (c->step_next > from)
    c->save_every = c->step_next - from;
  c->snap_step = c->step_next;
  if ((rc = release_held(c, c->step_safe, e)) == 0 && (rc = out_record(c, &r, e)) == 0 && (rc = out_flush(c, e)) == 0)
    rc = write_state(c, e);
  pit_record_release(&r);
  c->restart_refused = 0;
  if (rc == 0 && c->total_steps > 0 && c->step_next >= c->total_steps && c->restart_pending) {
    c->restart_pending = 0; /* the job's last snapshot: nothing left to resize for */
    warn(c, "the job's last snapshot: the resize waiting for it is dropped");
  }
  if (rc == 0 && c->restart_pending && !c->stop_requested)
    restart_stop(c);
  else if (rc == 0 && !c->stop_requested)
    rc = decide(c, e); /* a resize may be due right after this save */
  return rc;
}

/* A resize of a workload resizable by restart: its price is the work since
 * the last snapshot, which a restart redoes. Right after a save (nothing
 * done since): now. Else at the next save, unless that is not due before the
 * job's predicted end: then refused, with the numbers. */
static int restart_decide(struct ctl *c, const struct pit_choice *ch, const char *policy, struct pit_err *e) {
  struct pit_choice d = *ch;
  double tp = recent_median(c);
  int64_t since = c->step_next - c->step_safe, left = c->total_steps > 0 ? c->total_steps - c->step_next : -1;
  int64_t due = c->save_every > 0 ? c->save_every - since : -1;
  size_t at = strlen(d.reason);
  if (left == 0)
    return 0; /* the job is done: nothing to resize for */
  if (c->snap_step >= 0 && since == 0) {
    if (c->resume_lag > 0)
      snprintf(d.reason + at, sizeof d.reason - at,
               "; by restart right after the snapshot at step %lld (the script resumed %lld steps before its "
               "snapshot last time: %lld steps, %.1f s, to redo)",
               (long long)c->step_safe, (long long)c->resume_lag, (long long)c->resume_lag,
               (double)c->resume_lag * tp);
    else
      snprintf(d.reason + at, sizeof d.reason - at, "; by restart right after the snapshot at step %lld (nothing to redo)",
               (long long)c->step_safe);
    c->pending = d;
    int rc = decision_record(c, &d, policy, e);
    warn(c, "%s", d.reason);
    restart_stop(c);
    return rc;
  }
  since += c->resume_lag; /* what a restart now redoes: the steps since the snapshot and the lag before it */
  if (due > 0 && left >= 0 && due > left) {
    snprintf(d.reason + at, sizeof d.reason - at,
             "; refused: a restart now redoes the %lld steps (%.1f s) since the last snapshot, and the next is due "
             "in %lld steps (%.1f s; one every %lld steps), after the job's end in %lld steps (%.1f s)",
             (long long)since, (double)since * tp, (long long)due, (double)due * tp, (long long)c->save_every,
             (long long)left, (double)left * tp);
    d.act = PIT_ACT_KEEP;
    d.to = c->cur;
    c->restart_refused = 1;
    c->res->refused++;
    warn(c, "%s", d.reason);
    return decision_record(c, &d, policy, e);
  }
  if (due > 0)
    snprintf(d.reason + at, sizeof d.reason - at,
             "; by restart at the next snapshot, due in %lld steps (%.1f s; a restart now would redo %lld steps, "
             "%.1f s%s)",
             (long long)due, (double)due * tp, (long long)since, (double)since * tp,
             c->resume_lag > 0 ? ", the script's lag before its snapshot included" : "");
  else
    snprintf(d.reason + at, sizeof d.reason - at, "; by restart at the next snapshot (none seen yet)");
  c->pending = d;
  c->restart_pending = 1;
  warn(c, "%s", d.reason);
  return decision_record(c, &d, policy, e);
}

/* The provider's news about the nodes (a reclaim notice, a node gone):
 * a notice stops the generation at a checkpoint and replaces the node;
 * a node gone fails the generation (why set, 1 returned). */
static int provider_events(struct ctl *c, char *why, size_t nwhy, struct pit_err *e) {
  if (!c->prov.ops->poll)
    return 0;
  struct pit_node_event ev[16];
  int nev = 0;
  struct pit_err e2 = {0};
  if (c->prov.ops->poll(&c->prov, ev, 16, &nev, &e2) < 0) {
    /* the workload goes on; said once until the provider answers again */
    if (!c->poll_failing++) {
      c->poll_fail_t = now_t(c);
      warn(c, "cannot ask the provider about the nodes (the run goes on; said once until it answers): %s", e2.msg);
    }
    return 0;
  }
  if (c->poll_failing) {
    warn(c, "the provider answers again (it could not be asked for %.1f s)", now_t(c) - c->poll_fail_t);
    c->poll_failing = 0;
  }
  for (int k = 0; k < nev; k++) {
    int i = 0;
    while (i < c->nnodes && strcmp(c->nodes[i].id, ev[k].id) != 0)
      i++;
    if (i == c->nnodes)
      continue;
    c->res->reclaims++;
    if (ev[k].kind == PIT_NODE_GONE) {
      snprintf(why, nwhy, "node %.63s is gone", ev[k].id);
      return 1;
    }
    warn(c, "node %s will be reclaimed in %.0f s: checkpoint now, then a replacement", ev[k].id, ev[k].grace_s);
    if (c->nodes[i].spot) /* spot capacity is away from now: the spot policy chooses the replacement's market */
      ctl_spot_down(&c->spot, now_t(c), spot_retry_s(c));
    c->reclaim_stop = 1;
    if (c->nreclaimed < MAX_NODES)
      snprintf(c->reclaimed[c->nreclaimed++], PIT_NAME_MAX, "%.63s", ev[k].id);
    if (c->stop_requested)
      continue; /* already stopping: the node goes at the reshape */
    struct pit_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.act = PIT_ACT_RESIZE;
    ch.to = c->cur;
    snprintf(ch.reason, sizeof ch.reason, "node %.63s (%.63s) reclaimed with %.0f s notice: replaced", ev[k].id,
             c->nodes[i].itype, ev[k].grace_s);
    int rc = request_stop(c, &ch, "reclaim", c->o->launcher == PIT_LAUNCH_PER_NODE ? i : -1, e);
    if (rc < 0)
      return rc;
  }
  return 0;
}

/* ---------------- one generation ---------------- */

static void progress_total(struct ctl *c);

static int progress_emit(void *ctx, const struct pit_record *r, struct pit_err *e) {
  struct ctl *c = ctx;
  if (r->type == PIT_REC_INIT)
    progress_total(c); /* the job's length into the init record's config */
  c->t_is_run = 1;
  int rc = on_record(c, r, e);
  c->t_is_run = 0;
  return rc;
}

/* The job's length once the progress lines (and --epochs/--samples) say it. */
static void progress_total(struct ctl *c) {
  if (c->o->total_steps > 0)
    return;
  int64_t t = ctl_progress_total(&c->prog, c->o->job_epochs, c->o->job_samples);
  if (t > 0)
    c->total_steps = t;
}

/* A progress line of a program that prints no times: iteration records
 * timed by its arrival (progress.c). */
static int progress_line(struct ctl *c, const char *s, size_t n, struct pit_err *e) {
  if (!c->have_prog)
    return 0;
  int rc = ctl_progress_line(&c->prog, s, n, now_t(c), progress_emit, c, e);
  if (rc > 0)
    progress_total(c);
  return rc < 0 ? rc : 0;
}

/* The complete lines p's stdout holds now into the generation's log and
 * parser, its stderr's into the log; final: p is gone, its unfinished last
 * line counts. Each is closed once it has ended. */
static int feed(struct ctl *c, struct ctl_proc *p, int final, struct pit_err *e) {
  int erc = ctl_proc_drain_err(c->g, p, final, e);
  if (erc < 0)
    return erc;
  if (p->fd < 0)
    return 0;
  for (;;) {
    const char *s;
    size_t n;
    int rc = pit_follower_line(&p->out, &s, &n, e);
    if (rc == PIT_FOLLOW_RECORD) {
      ctl_proc_log(c->g, p, s, n, 0);
      c->out_lines++;
      /* a workload that speaks the protocol (PITSTOP lines, JSON records) stops on SIGUSR1 */
      c->line_protocol = (n >= 8 && memcmp(s, "PITSTOP ", 8) == 0) || (n && s[0] == '{');
      if (c->line_protocol)
        c->resizable = c->gen_protocol = 1;
      if (c->gen_protocol && !c->line_protocol) {
        /* its records say it all; a progress print beside them would count its steps twice */
      } else if (c->have_prog && ctl_progress_shape(&c->prog, s, n)) { /* a progress line: timed by its arrival */
        if ((rc = progress_line(c, s, n, e)) < 0)
          return rc;
      } else if ((rc = pit_parser_line(c->parser, s, n, e)) < 0) {
        return rc;
      }
      int64_t epoch;
      if (c->have_snap && (rc = ctl_snap_line(&c->snap, s, n, now_t(c), &epoch)) != 0) {
        if ((rc = on_snapshot(c, epoch, e)) < 0)
          return rc;
      } else if (c->have_snap && epoch >= 0 && c->have_prog) { /* the watched file says when; the epoch is done */
        c->in_snapshot = 1;
        rc = ctl_progress_close(&c->prog, epoch, now_t(c), progress_emit, c, e);
        c->in_snapshot = 0;
        if (rc < 0 || (rc = decide(c, e)) < 0)
          return rc;
      }
      continue;
    }
    if (rc == PIT_FOLLOW_CLOSED) {
      if (p->fd >= 0)
        close(p->fd);
      p->fd = -1;
      return 0;
    }
    if (rc < 0 || !final)
      return rc < 0 ? rc : 0;
    pit_follower_writer_gone(&p->out);
  }
}

/* The exit status of the first process of the generation that failed (0: none). */
static int bad_exit(const struct ctl *c) {
  for (int i = 0; i < c->g->nproc; i++)
    if (c->g->proc[i].exited && c->g->proc[i].status != 0)
      return c->g->proc[i].status;
  return 0;
}

enum gen_end { GEN_DONE, GEN_STOPPED, GEN_FAILED, GEN_FATAL, GEN_INTERRUPTED };

/* The user's stop, one step (stop.c): a protocol workload past its first
 * iteration is asked for an agreed checkpoint, anything else gets SIGTERM;
 * killed after the grace or at a second signal. 1 while a stop is under way. */
static int user_stop(struct ctl *c) {
  char msg[512];
  int agree = (c->resizable || !c->o->cmd) && c->gen_iters > 0;
  if (ctl_stop_step(&c->stop, c->o, c->g, now_t(c), agree, c->stop_requested, msg, sizeof msg))
    warn(c, "%s", msg);
  return c->stop.how != CTL_STOP_NONE;
}

static enum gen_end run_generation(struct ctl *c, const char *resume, char *why, size_t nwhy,
                                   struct pit_err *e) {
  struct ctl_launch L;
  memset(&L, 0, sizeof L);
  L.o = c->o;
  L.prov = &c->prov;
  L.nodes = c->nodes;
  L.nnodes = c->nnodes;
  L.gen = c->gen;
  L.state_dir = c->state_dir;
  L.ckpt_dir = c->ckpt_dir;
  snprintf(L.resume, sizeof L.resume, "%s", resume ? resume : "");
  ctl_gen_release(c->g);
  snprintf(c->g->log, sizeof c->g->log, "%s/gen-%d.log", c->state_dir, c->gen);
  unlink(c->g->log);
  c->gen_have_offset = 0;
  c->gen_iters = 0;
  ctl_obs_gen(&c->obs);
  c->gen_step0 = c->step_safe;
  c->step_next = c->step_safe;
  c->stop_requested = 0;
  c->reclaim_stop = 0;
  c->restart_pending = c->restart_refused = c->restart_stopping = 0;
  c->gen_init = 0;
  c->gen_protocol = 0;
  c->snap_step = -1;
  if (c->have_snap)
    ctl_snap_gen(&c->snap);
  c->end_status[0] = 0;
  c->t_end = 0;
  c->t_launch = now_t(c);
  if (c->have_prog)
    ctl_progress_gen(&c->prog, c->t_launch);
  c->t_first_iter = NAN;
  c->init_s = NAN;
  memset(&c->pending, 0, sizeof c->pending);
  if (ctl_stop_signal(c->o)) { /* stopped before this generation started: nothing launched */
    user_stop(c);
    return GEN_INTERRUPTED;
  }
  int rc = pit_parser_new(&c->parser, PIT_PARSE_AUTO, c->o->run, 1, "the workload's output", on_record,
                          on_parse_warn, c, e);
  if (rc < 0) {
    snprintf(why, nwhy, "%s", e->msg);
    return GEN_FAILED;
  }
  if ((rc = ctl_launch(&L, c->g, e)) < 0) {
    pit_parser_free(c->parser);
    c->parser = NULL;
    snprintf(why, nwhy, "%s", e->msg);
    return GEN_FAILED;
  }
  write_state(c, e);
  status(c, "starting", 1);
  int failed = 0;
  why[0] = 0;
  for (;;) {
    struct pollfd pf[2 * CTL_PROCS_MAX];
    int map[2 * CTL_PROCS_MAX], np = 0;
    for (int i = 0; i < c->g->nproc; i++)
      for (int k = 0; k < 2; k++) {
        int fd = k ? c->g->proc[i].efd : c->g->proc[i].fd;
        if (fd >= 0 && np < 2 * CTL_PROCS_MAX) {
          pf[np].fd = fd;
          pf[np].events = POLLIN;
          map[np++] = i;
        }
      }
    if (np)
      poll(pf, (nfds_t)np, 200);
    else
      usleep(20000);
    for (int k = 0; k < np && !failed; k++)
      if (pf[k].revents && (rc = feed(c, &c->g->proc[map[k]], 0, e)) < 0) {
        snprintf(why, nwhy, "%s", e->msg);
        failed = 2; /* the controller's own error: stop */
      }
    int stopping = user_stop(c);
    if (c->have_snap && !failed && ctl_snap_poll(&c->snap, now_t(c), 0.5) && (rc = on_snapshot(c, -1, e)) < 0) {
      snprintf(why, nwhy, "%s", e->msg);
      failed = 2;
    }
    if (c->restart_stopping) { /* killed after the grace */
      stopping = 1;
      if (now_t(c) - c->t_stop_req > c->o->grace_s)
        ctl_gen_kill(c->g, 0);
    }
    int alive = 0, bad = -1;
    for (int i = 0; i < c->g->nproc; i++) {
      struct ctl_proc *p = &c->g->proc[i];
      ctl_proc_poll(p);
      if (!p->exited || p->fd >= 0 || p->efd >= 0)
        alive = 1;
      if (p->exited && p->status != 0 && bad < 0 && !stopping) /* after a stop signal: waited for, not failed */
        bad = i;
    }
    if (!failed && !c->end_status[0] && (rc = provider_events(c, why, nwhy, e)) != 0) {
      if (rc < 0)
        snprintf(why, nwhy, "%s", e->msg);
      failed = rc < 0 ? 2 : 1;
    }
    double t = now_t(c);
    if (c->end_status[0] && c->t_end == 0)
      c->t_end = t;
    /* after the end record the records decide, not launcher exit codes (a torchrun agent
     * exits non-zero after a stop); launchers still there 10 s later are killed */
    if (!failed && c->end_status[0]) {
      if (alive && t - c->t_end > 10) {
        ctl_gen_kill(c->g, 2.0);
        alive = 0;
      }
      bad = -1;
    }
    if (!failed && bad >= 0) {
      struct ctl_proc *p = &c->g->proc[bad];
      if (p->status > 128)
        snprintf(why, nwhy, "the workload%s was killed by signal %d", p->node >= 0 ? " on a node" : "",
                 p->status - 128);
      else
        snprintf(why, nwhy, "the workload exited with status %d", p->status);
      failed = 1;
    }
    if (!failed && !stopping && c->gen_iters == 0 && t - c->t_launch > c->o->start_timeout_s) {
      snprintf(why, nwhy, "the workload sent no iteration within %.0f s of its start", c->o->start_timeout_s);
      failed = 1;
    }
    if (!failed && !stopping && c->stop_requested && t - c->t_stop_req > c->o->stop_timeout_s) {
      snprintf(why, nwhy, "the workload did not stop within %.0f s of the request", c->o->stop_timeout_s);
      failed = 1;
    }
    if (failed) {
      ctl_gen_kill(c->g, 2.0);
      for (int i = 0; i < c->g->nproc; i++)
        if (c->g->proc[i].fd >= 0 || c->g->proc[i].efd >= 0)
          feed(c, &c->g->proc[i], 1, e);
      break;
    }
    if (!alive) {
      for (int i = 0; i < c->g->nproc; i++)
        feed(c, &c->g->proc[i], 1, e);
      break;
    }
    status(c, c->stop_requested ? "resizing" : "running", 0);
  }
  pit_parser_finish(c->parser, e);
  pit_parser_free(c->parser);
  c->parser = NULL;
  if (!failed && c->have_prog && c->stop.how == CTL_STOP_NONE && bad_exit(c) == 0 &&
      ctl_progress_end(&c->prog, now_t(c), progress_emit, c, e) < 0)
    return GEN_FATAL;
  if (failed == 2)
    return GEN_FATAL;
  if (c->stop.how != CTL_STOP_NONE && strcmp(c->end_status, "done") != 0)
    return GEN_INTERRUPTED;
  if (c->restart_stopping && !failed)
    return GEN_STOPPED;
  if (failed)
    return GEN_FAILED;
  if (c->stop_requested && strcmp(c->end_status, "done") != 0)
    return GEN_STOPPED;
  if (strcmp(c->end_status, "stopped") == 0) {
    snprintf(why, nwhy, "the workload stopped without being asked");
    return GEN_STOPPED;
  }
  return GEN_DONE;
}

/* Last lines of a generation's log, for a message. */
static void log_tail(const struct ctl *c, int gen, char *out, size_t n) {
  char path[1100], buf[8192];
  snprintf(path, sizeof path, "%s/gen-%d.log", c->state_dir, gen);
  out[0] = 0;
  if (ctl_read_small(path, buf, sizeof buf) < 0)
    return;
  size_t len = strlen(buf);
  while (len && buf[len - 1] == '\n')
    buf[--len] = 0;
  int lines = 0;
  size_t i = len;
  while (i > 0 && lines < 3)
    if (buf[--i] == '\n')
      lines++;
  snprintf(out, n, "%s", buf + (i ? i + 1 : 0));
  for (char *p = out; *p; p++)
    if (*p == '\n')
      *p = '|';
}

static void gen_entry(struct ctl *c, const char *end) {
  struct pit_run_result *res = c->res;
  if (res->ngens == (int)(sizeof res->gens / sizeof res->gens[0]))
    return;
  struct pit_run_gen *g = &res->gens[res->ngens++];
  memset(g, 0, sizeof *g);
  g->gen = c->gen;
  pit_membership_format(&c->cur, g->membership, sizeof g->membership);
  g->step0 = c->gen_step0;
  g->step1 = c->step_next;
  g->t0 = c->t_launch;
  g->t_first_iter = c->t_first_iter;
  g->t1 = now_t(c);
  snprintf(g->end, sizeof g->end, "%s", end);
  g->ckpt_s = c->last_ckpt_s;
  g->init_s = c->init_s;
  g->exit_s = NAN;
  g->nodes_s = NAN;
  g->cost = NAN; /* its share of the bills, once every node stopped (pit_run_result_price) */
}

/* The run stopped by the user's signal: the records a checkpoint covers are
 * kept (a program that speaks no protocol: every measured step, it has no
 * checkpoint to redo them from), the rest dropped, as a failure drops them;
 * the state is left without processes, so the same command continues from
 * the last checkpoint. */
static int end_interrupted(struct ctl *c, struct pit_err *e) {
  struct pit_run_result *res = c->res;
  int protocol = c->resizable || !c->o->cmd;
  int rc = release_held(c, protocol ? c->step_safe : -1, e);
  drop_held(c);
  if (c->g->nproc > 0) /* a generation that was launched */
    gen_entry(c, "interrupted");
  res->interrupted = c->stop.sig;
  snprintf(res->stop_how, sizeof res->stop_how, "%s",
           c->g->nproc == 0                 ? "not started"
           : c->stop.how == CTL_STOP_AGREED ? "checkpoint" : c->stop.how == CTL_STOP_TERM ? "sigterm" : "killed");
  res->stop_s = c->stop.how == CTL_STOP_NONE ? 0 : now_t(c) - c->stop.t_signal;
  res->stop_ckpt_step = c->ckpt[0] ? c->step_safe : -1;
  status(c, "stopped", 1);
  if (rc == 0)
    rc = write_state(c, e);
  return rc;
}

/* ---------------- spot: acting on the market chosen ---------------- */

/* A spot start failed in the last reshape: spot capacity is away (said, and
 * e cleared, for the spot policy to choose again). */
static void spot_start_failed(struct ctl *c, struct pit_err *e) {
  warn(c, "no spot capacity (%s): the spot policy chooses again", e->msg);
  ctl_spot_down(&c->spot, now_t(c), spot_retry_s(c));
  pit_err_clear(e);
}

/* The nodes for want (its types and counts) on the market pit_spot_decide
 * chooses, holding `held` now: each choice a decision record; idle stops
 * every node and waits until spot is worth a try again; a spot start that
 * fails (no capacity) makes it choose again. Bounded: the slack only shrinks
 * while it waits or fails, and the policy turns to on-demand before it runs
 * out (after 16 rounds, on-demand whatever it says). Nothing measured yet
 * (PIT time, job length): on-demand, which cannot miss for spot's sake. */
static int spot_reshape(struct ctl *c, const struct pit_membership *want, enum pit_spot_mode held, const char *why,
                        struct pit_err *e) {
  struct pit_choice ch = {0};
  struct pit_membership bare;
  pit_membership_bare(want, &bare);
  for (int round = 0;; round++) {
    enum pit_spot_mode to;
    int rc = spot_choose(c, &bare, held, &to, &ch, e);
    if (rc < 0)
      return rc;
    if (rc == 1 || (round >= 16 && to != PIT_SPOT_OD)) {
      to = PIT_SPOT_OD;
      memset(&ch, 0, sizeof ch);
      ch.act = PIT_ACT_RESIZE;
      ch.decided = 1;
      snprintf(ch.kind, sizeof ch.kind, "on_demand");
      snprintf(ch.reason, sizeof ch.reason, "market %s → on_demand: %s", pit_spot_mode_name(held),
               rc == 1 ? "spot is away and nothing is measured yet (PIT time, job length, restart)"
                       : "spot failed 16 times in a row");
      if ((rc = on_mode(c, &bare, PIT_SPOT_OD, &ch.to, e)) < 0)
        return rc;
    }
    if (to == PIT_SPOT_IDLE && c->cur.n > 0)
      ch.act = PIT_ACT_RESIZE; /* every node stops */
    if ((rc = decision_record(c, &ch, "spot", e)) < 0)
      return rc;
    warn(c, "%s", ch.reason);
    if (to == PIT_SPOT_IDLE) {
      while (c->nnodes > 0)
        if ((rc = stop_node_at(c, c->nnodes - 1, "stop", e)) < 0)
          return rc;
      pit_membership_clear(&c->cur);
      /* one tick of the policy at most (its idle rule spends one), then it chooses again */
      double t0 = now_t(c), tick = spot_retry_s(c);
      while (!ctl_spot_avail(&c->spot, now_t(c)) && now_t(c) - t0 < tick) {
        status(c, "idle", 0);
        usleep(100000);
      }
      if (c->res->ngens > 0) /* not part of the restart overhead the policies plan with */
        c->res->gens[c->res->ngens - 1].idle_s += now_t(c) - t0;
      held = PIT_SPOT_IDLE;
      continue;
    }
    struct pit_membership m;
    if ((rc = on_mode(c, &bare, to, &m, e)) < 0)
      return rc;
    c->spot_failed = 0;
    if ((rc = reshape(c, &m, why, e)) == 0 || !c->spot_failed)
      return rc;
    spot_start_failed(c, e);
    held = held_mode(c);
  }
}

/* reshape, and with the spot layer on, a failed spot start handed to the
 * spot policy (on-demand or idle) rather than failing the run. */
static int reshape_market(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e) {
  c->spot_failed = 0;
  int rc = reshape(c, want, why, e);
  if (rc == 0 || !c->spot.on || !c->spot_failed)
    return rc;
  spot_start_failed(c, e);
  return spot_reshape(c, want, held_mode(c), why, e);
}

/* The first generation's market, before any measurement: spot when its types
 * have a spot price (the job's length and PIT time are not known yet: the
 * first decision point weighs the slack with measured numbers and turns to
 * on-demand when it runs short). A membership that names its market is kept. */
static int spot_initial(struct ctl *c, struct pit_err *e) {
  struct pit_choice ch = {0};
  struct pit_membership bare;
  pit_membership_bare(&c->cur, &bare);
  double od, spot;
  market_prices(c, &bare, &od, &spot);
  if (cur_market(c) != PIT_MARKET_DEFAULT || !(spot < od))
    return 0;
  memset(&ch, 0, sizeof ch);
  ch.act = PIT_ACT_RESIZE;
  ch.decided = 1;
  snprintf(ch.kind, sizeof ch.kind, "spot");
  snprintf(ch.reason, sizeof ch.reason,
           "market idle → spot: $%.4f/h spot against $%.4f/h on-demand, nothing measured yet (the first decision "
           "point weighs the slack to the deadline, %.0f s, with the measured PIT time and restart)",
           spot, od, c->o->policy.deadline_s);
  int rc = on_mode(c, &bare, PIT_SPOT_SPOT, &ch.to, e);
  if (rc == 0)
    rc = decision_record(c, &ch, "spot", e);
  if (rc == 0)
    c->cur = ch.to;
  return rc;
}

/* ---------------- reconcile ---------------- */

static int reconcile(struct ctl *c, struct prev_state *ps, struct pit_err *e) {
  read_state(c, ps);
  if (ps->found) {
    /* the previous controller's workload: kill its process groups */
    for (int i = 0; i < ps->npg; i++)
      if (ps->pgids[i] > 1 && kill(-ps->pgids[i], 0) == 0) {
        kill(-ps->pgids[i], SIGKILL);
        warn(c, "stopped the workload (process group %d) a previous controller of run %s left", ps->pgids[i],
             c->o->run);
      }
  }
  struct pit_node *list = NULL;
  int n = 0;
  int rc = c->prov.ops->list(&c->prov, &list, &n, e);
  if (rc < 0)
    return rc;
  /* adopt what the wanted membership needs, stop the rest */
  for (int i = 0; i < n; i++) {
    struct pit_node *nd = &list[i];
    int have = 0, want = 0;
    for (int j = 0; j < c->nnodes; j++)
      have += strcmp(c->nodes[j].itype, nd->itype) == 0;
    for (int k = 0; k < c->cur.n; k++)
      want += node_of(nd, c->cur.m[k].itype) ? c->cur.m[k].nodes : 0;
    struct pit_err e2 = {0};
    /* adopted: healthy, and cleared of what the killed controller's workload left there */
    if (nd->state == PIT_NODE_READY && have < want &&
        c->prov.ops->health(&c->prov, nd, &e2) == 0 && (!c->prov.ops->clear || c->prov.ops->clear(&c->prov, nd, &e2) == 0) &&
        c->nnodes < MAX_NODES) {
      c->nodes[c->nnodes] = *nd;
      c->nodes[c->nnodes].t_start = now_t(c);
      c->nodes[c->nnodes].t_ready = now_t(c);
      c->nodes[c->nnodes].t_stop = NAN;
      c->nnodes++;
      warn(c, "adopted node %s (%s) of a previous controller", nd->id, nd->itype);
      node_record(c, nd, "ready", e);
    } else {
      if (c->prov.ops->stop(&c->prov, nd, &e2) < 0)
        warn(c, "%s", e2.msg);
      else
        warn(c, "stopped node %s a previous controller left", nd->id);
    }
  }
  free(list);
  return 0;
}

/* ---------------- faults: checkpoints lost, the run's end, its directory (issue 28) ---------------- */

/* A test hook (PITSTOP_TEST_KILL=POINT): the controller SIGKILLs itself at
 * POINT, as a kill at that moment would; tests/control/run_finish.sh. */
static void test_kill_point(const char *point) {
  const char *v = getenv("PITSTOP_TEST_KILL");
  if (v && strcmp(v, point) == 0)
    raise(SIGKILL);
}

/* --checkpoint-mirror: the checkpoint just recorded copied there (from its held
 * link when there is one: the workload may rotate its path away). A copy that
 * fails is said once; the run goes on without it. */
static void mirror_ckpt(struct ctl *c, const char *path, int64_t step) {
  if (!c->o->ckpt_mirror)
    return;
  const char *name = strrchr(path, '/');
  struct pit_err e2 = {0};
  if (ctl_mirror_copy(c->ckpt_held[0] ? c->ckpt_held : path, name ? name + 1 : path, c->o->ckpt_mirror, step, &e2) <
          0 &&
      !c->mirror_warned) {
    c->mirror_warned = 1;
    warn(c, "the checkpoint mirror misses step %lld: %s", (long long)step, e2.msg);
  }
}

/* What the events file says of the job: *next one past its last iteration,
 * *done 1 when its last generation ended with the job done (an end record
 * "done", or "stopped" because it measured enough, and nothing after it). */
static void events_scan(const struct ctl *c, int64_t *next, int *done) {
  struct pit_runlog log;
  struct pit_err e2 = {0};
  pit_runlog_init(&log);
  int ok = pit_runlog_load(&log, c->events_path, &e2) == 0;
  *next = ok ? pit_runlog_step(&log) + 1 : 0;
  *done = ok && pit_runlog_job_done(&log);
  pit_runlog_release(&log);
}

/* A run that finished before (its state says done, or its events file ends
 * with the job done: a kill between that record and the state) is not run
 * again: what a kill left of it (processes, nodes) is stopped, the state says
 * done, and 1 is returned. 0: the run is not finished. */
static int finished_before(struct ctl *c, struct pit_err *e) {
  struct prev_state ps;
  read_state(c, &ps);
  int64_t next;
  int done;
  events_scan(c, &next, &done);
  if (!(ps.found && ps.done) && !done)
    return 0;
  for (int i = 0; i < ps.npg; i++)
    if (ps.pgids[i] > 1 && kill(-ps.pgids[i], 0) == 0)
      kill(-ps.pgids[i], SIGKILL);
  struct pit_node *list = NULL;
  int n = 0;
  int rc = c->prov.ops->list(&c->prov, &list, &n, e);
  for (int i = 0; rc == 0 && i < n; i++) {
    struct pit_err e2 = {0};
    if (c->prov.ops->stop(&c->prov, &list[i], &e2) < 0)
      warn(c, "%s", e2.msg);
    else
      warn(c, "stopped node %s the finished run left", list[i].id);
  }
  free(list);
  if (rc < 0)
    return rc;
  c->gen = ps.found ? ps.gen : 0;
  c->step_safe = ps.found ? ps.step : 0;
  snprintf(c->ckpt, sizeof c->ckpt, "%s", ps.ckpt);
  c->finished = 1;
  if ((rc = write_state(c, e)) < 0)
    return rc;
  c->step_next = next;
  c->res->already_done = 1;
  warn(c, "run %s is already done (%lld steps; its records: %s): nothing is run again", c->o->run, (long long)next,
       c->events_path);
  return 1;
}

/* A restarted controller of a scheduled run starts on the schedule's membership
 * at the step it resumes from (not the initial one, which the policy would
 * resize back at once: a healthy node stopped and started again). */
static int sched_membership(const struct ctl *c, int64_t step, struct pit_membership *m) {
  const struct pit_policy *pol = &c->o->policy;
  if (pol->kind != PIT_POLICY_SCHEDULE)
    return 0;
  *m = c->o->initial;
  for (int i = 0; i < pol->nsched && pol->sched[i].step <= step; i++)
    *m = pol->sched[i].to;
  return 1;
}

static void resume_membership(struct ctl *c) {
  struct prev_state ps;
  read_state(c, &ps);
  int64_t step = ps.step, ev;
  char tmp[1100];
  if (ps.found && events_last_ckpt(c, &ev, tmp, sizeof tmp) && ev > step)
    step = ev;
  if (ps.found)
    sched_membership(c, step, &c->cur);
}

/* The workload's checkpoint path is a file of this machine: the local
 * provider's nodes are this machine; another provider's only where the file is here. */
static int ckpt_here(const struct ctl *c, const char *path) {
  return strcmp(c->o->provider, "local") == 0 || access(path, F_OK) == 0;
}

/* The checkpoint the next generation resumes from (resume, c->ckpt, c->step_safe):
 * the wanted one when it checks; else the newest older one that does (beside
 * it, held, or the mirror's copy), each damaged file said with its reason; none
 * left: the job starts again from step 0 (--on-lost-checkpoints restart) or the
 * run ends with an error naming them. 0, or the error. */
static int choose_resume(struct ctl *c, char *resume, size_t nres, struct pit_err *e) {
  if (!resume[0])
    return 0;
  struct ctl_resume_in in = {resume,         c->step_safe,     c->state_dir, c->ckpt_dir, c->o->ckpt_mirror,
                             c->events_path, c->o->ckpt_check, ckpt_here(c, resume)};
  struct ctl_resume *r = calloc(1, sizeof *r);
  if (!r)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int rc = ctl_resume_pick(&in, r, e);
  if (rc < 0 || (r->path[0] && strcmp(r->path, resume) == 0)) {
    free(r);
    return rc;
  }
  c->res->lost_checkpoints += r->nbad;
  for (int i = 0; i < r->nbad; i++)
    warn(c, "checkpoint '%s' of run %s is damaged: %s", r->bad[i].path, c->o->run, r->bad[i].why);
  int64_t redo = c->step_safe - (r->path[0] ? r->step : 0);
  if (r->path[0]) {
    warn(c, "using the previous checkpoint '%s' (step %lld%s): %lld steps are done again", r->path,
         (long long)r->step, r->from_mirror ? ", the mirror's copy" : "", (long long)redo);
    c->step_safe = r->step;
    snprintf(c->ckpt, sizeof c->ckpt, "%s", r->path);
    if (strncmp(r->path, c->state_dir, strlen(c->state_dir)) == 0 && strstr(r->path, "/held-"))
      snprintf(c->ckpt_held, sizeof c->ckpt_held, "%s", r->path);
    else
      hold_ckpt(c, r->step);
    snprintf(resume, nres, "%s", c->ckpt_held[0] ? c->ckpt_held : c->ckpt);
  } else if (c->o->on_lost_fail) {
    rc = pit_err_set(e, PIT_ESTATE, "every checkpoint of run %s is damaged (%d file%s, each said above): the %lld "
                     "steps done cannot be continued", c->o->run, r->nbad, r->nbad == 1 ? "" : "s",
                     (long long)c->step_safe);
    pit_err_hint(e, "--on-lost-checkpoints restart (the default) starts the job again from step 0");
    free(r);
    return rc;
  } else {
    warn(c, "every checkpoint of run %s is damaged (%d file%s): the job starts again from step 0 "
         "(--on-lost-checkpoints restart); %lld steps are done again, the events file keeps them once",
         c->o->run, r->nbad, r->nbad == 1 ? "" : "s", (long long)redo);
    c->step_safe = 0;
    c->ckpt[0] = c->ckpt_held[0] = 0;
    resume[0] = 0;
  }
  c->res->lost_steps += redo;
  free(r);
  if ((rc = write_state(c, e)) == 0 && c->ckpt_held[0])
    unhold_older(c);
  /* the steps done again run on the membership the schedule gave them (the same sums) */
  struct pit_membership m;
  if (rc == 0 && sched_membership(c, c->step_safe, &m) && !pit_membership_equal(&m, &c->cur))
    rc = reshape_market(c, &m, "the schedule's membership at the checkpoint resumed from", e);
  return rc < 0 ? rc : 0;
}

/* Where --cleanup RUN finds a run started with --checkpoint-dir elsewhere:
 * ${XDG_STATE_HOME:-$HOME/.local/state}/pitstop/runs/RUN, a symbolic link to
 * the run directory (absolute), made when the run starts. 0 and buf set, or -1. */
static int registry_path(const char *run, char *buf, size_t n) {
  const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  int k = x && *x ? snprintf(buf, n, "%s/pitstop/runs/%s", x, run)
          : home && *home ? snprintf(buf, n, "%s/.local/state/pitstop/runs/%s", home, run) : -1;
  return k < 0 || (size_t)k >= n ? -1 : 0;
}

static void registry_note(const struct ctl *c) {
  char link[1200], dir[1200], target[PATH_MAX], tmp[1300];
  if (registry_path(c->o->run, link, sizeof link) < 0 || !realpath(c->state_dir, target))
    return;
  snprintf(dir, sizeof dir, "%s", link);
  *strrchr(dir, '/') = 0;
  struct pit_err e2 = {0};
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", link, (int)getpid());
  if (pit_mkdir_p(dir, &e2) < 0 || (unlink(tmp), symlink(target, tmp)) < 0 || rename(tmp, link) < 0) {
    unlink(tmp);
    warn(c, "cannot note run %s in '%s' (pitstop run --cleanup %s will need --checkpoint-dir)", c->o->run, dir,
         c->o->run);
  }
}

/* What the generation's log says of its failure: the workload's last error line
 * (a "pitstop: " line, else one with "rror" in it, among the log's last 16 KiB:
 * mpirun's own report comes after it), else the log's last lines. */
static void failure_detail(const struct ctl *c, char *out, size_t n) {
  char path[1100], *buf = malloc(16385);
  snprintf(path, sizeof path, "%s/gen-%d.log", c->state_dir, c->gen);
  out[0] = 0;
  int fd = buf ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  ssize_t k = 0;
  if (fd >= 0) {
    off_t size = lseek(fd, 0, SEEK_END);
    if (size > 16384)
      lseek(fd, size - 16384, SEEK_SET);
    else
      lseek(fd, 0, SEEK_SET);
    k = read(fd, buf, 16384);
    close(fd);
  }
  const char *best = NULL, *err = NULL;
  size_t best_n = 0, err_n = 0;
  for (ssize_t i = 0; k > 0 && i < k;) {
    ssize_t j = i;
    while (j < k && buf[j] != '\n')
      j++;
    ssize_t at = i; /* past the "[NODE out] " / "[NODE err] " tag gen-N.log puts on each line */
    if (at < j && buf[at] == '[') {
      const char *close = memchr(buf + at, ']', (size_t)(j - at));
      if (close && close + 1 < buf + j && close[1] == ' ')
        at = close + 2 - buf;
    }
    size_t len = (size_t)(j - at);
    if (len > 9 && memcmp(buf + at, "pitstop: ", 9) == 0) {
      best = buf + at;
      best_n = len;
    } else if (len && buf[at] != '{' && memmem(buf + at, len, "rror", 4)) {
      err = buf + at;
      err_n = len;
    }
    i = j + 1;
  }
  if (!best) {
    best = err;
    best_n = err_n;
  }
  if (best)
    snprintf(out, n, "; the workload said: %.*s", (int)(best_n < 600 ? best_n : 600), best);
  free(buf);
  if (best)
    return;
  char tail[1024];
  log_tail(c, c->gen, tail, sizeof tail);
  if (tail[0])
    snprintf(out, n, "; its last words: %s", tail);
}

static void disk_hint(const struct ctl *c, const char *detail, struct pit_err *e) {
  if (!strstr(detail, "No space left on device"))
    return;
  struct statvfs sv;
  struct stat st;
  double free_kib = statvfs(c->ckpt_dir, &sv) == 0 ? (double)sv.f_bavail * (double)sv.f_frsize / 1024 : NAN;
  double ck_kib = c->ckpt[0] && stat(c->ckpt, &st) == 0 ? (double)st.st_size / 1024 : NAN;
  pit_err_hint(e, "'%s' is full (%.0f KiB free); two checkpoints of %.0f KiB must fit there at once (the previous "
               "one stays until the new one is complete): give --checkpoint-dir a larger disk",
               c->ckpt_dir, free_kib, ck_kib);
}

/* ---------------- pit_run ---------------- */

/* The types the cost/time policies may use: --types, else the initial
 * membership's; price and relative speed (CPUs × quota) from the catalog. */
static int policy_types(struct ctl *c, struct pit_err *e) {
  const struct pit_run_opts *o = c->o;
  if (o->policy.kind != PIT_POLICY_COST && o->policy.kind != PIT_POLICY_TIME)
    return 0;
  if (!c->have_cat)
    return pit_err_set(e, PIT_EARG, "--policy %s needs a catalog (prices)", pit_policy_name(&o->policy));
  char buf[1024] = "";
  struct pit_membership bare;
  pit_membership_bare(&o->initial, &bare);
  if (o->types)
    snprintf(buf, sizeof buf, "%s", o->types);
  else
    for (int i = 0; i < bare.n; i++)
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "," : "", bare.m[i].itype);
  int rc = pit_policy_types(&c->cat, o->catalog, buf, c->types, &c->ntypes, e);
  /* the spot layer: a deadline to meet, a provider with a spot market, a type with a spot price */
  const struct pit_provider_ops *ops = pit_provider_find(o->provider);
  for (int i = 0; rc == 0 && i < c->ntypes; i++) {
    const struct pit_itype *t = pit_catalog_find(&c->cat, c->types[i].itype);
    c->spot.on |= o->policy.kind == PIT_POLICY_COST && isfinite(o->policy.deadline_s) && ops && ops->spot_market &&
                  t && isfinite(t->spot_price_h);
  }
  return rc;
}

/* What the provider is told of the run (c->o and c->state_dir set). */
static void provider_conf(const struct ctl *c, struct pit_provider_conf *pc) {
  const struct pit_run_opts *o = c->o;
  memset(pc, 0, sizeof *pc);
  pc->run = o->run;
  pc->state_dir = c->state_dir;
  pc->catalog = c->have_cat ? &c->cat : NULL;
  pc->self_exe = o->self_exe;
  pc->slots = o->ranks_per_node;
  pc->warn = o->warn;
  pc->warn_ctx = o->ctx;
  pc->launcher = o->launcher;
  pc->exe = o->cmd ? o->cmd[0] : o->self_exe;
  pc->hostfile = o->hostfile;
  pc->ssh_opts = o->ssh_opts;
  pc->partition = o->partition;
  pc->config = o->provider_config;
}

/* A membership entry's type: on a market the provider has (cat NULL:
 * checked before anything is created), and in the catalog (cat set). */
static int check_type(const struct ctl *c, const struct pit_catalog *cat, const char *itype, const char *where,
                      struct pit_err *e) {
  char base[PIT_NAME_MAX];
  int mk = pit_itype_market(itype, base, sizeof base, e);
  if (mk < 0)
    return mk;
  const struct pit_provider_ops *ops = pit_provider_find(c->o->provider);
  if (!cat && mk == PIT_MARKET_SPOT && ops && !ops->spot_market) {
    pit_err_set(e, PIT_EARG, "%s names '%s', but provider '%s' has no spot market", where, itype, ops->name);
    pit_err_hint(e, "spot nodes come from a cloud: --provider command (docs/providers.md)");
    return PIT_EARG;
  }
  if (cat && !pit_catalog_find(cat, base))
    return pit_err_set(e, PIT_ENOTFOUND, "%s: instance type '%s' is not in the catalog '%s'", where, base,
                       c->o->catalog);
  return 0;
}

/* check_type on every membership the run names (initial, schedule). */
static int check_types(const struct ctl *c, const struct pit_catalog *cat, struct pit_err *e) {
  const struct pit_run_opts *o = c->o;
  for (int s = -1; s < o->policy.nsched; s++) {
    const struct pit_membership *m = s < 0 ? &o->initial : &o->policy.sched[s].to;
    for (int i = 0; i < m->n; i++) {
      int rc = check_type(c, cat, m->m[i].itype, s < 0 ? "the membership" : "the schedule", e);
      if (rc < 0)
        return rc;
    }
  }
  return 0;
}

static int setup(struct ctl *c, const struct pit_run_opts *o, struct pit_err *e) {
  c->o = o;
  c->lock_fd = -1;
  c->t0 = pit_now();
  ctl_spot_init(&c->spot);
  ctl_stop_init(&c->stop);
  c->have_prog = ctl_progress_init(&c->prog) == 0;
  c->have_snap = o->resume_by_restart && ctl_snap_init(&c->snap, o->snapshot) == 0;
  c->save_every = -1;
  c->first_iter_t = NAN;
  if (!o->run || !*o->run || !o->run_dir || !o->self_exe)
    return pit_err_set(e, PIT_EARG, "a run needs an id, a directory and the pitstop binary");
  for (const char *p = o->run; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
          *p == '_'))
      return pit_err_set(e, PIT_EARG, "run id '%s': use letters, digits, '-' and '_' only", o->run);
  int rc;
  if ((rc = check_types(c, NULL, e)) < 0)
    return rc;
  snprintf(c->state_dir, sizeof c->state_dir, "%s", o->run_dir);
  snprintf(c->ckpt_dir, sizeof c->ckpt_dir, "%s/checkpoints", o->run_dir);
  if ((rc = pit_mkdir_p(c->state_dir, e)) < 0 || (rc = pit_mkdir_p(c->ckpt_dir, e)) < 0)
    return rc;
  if (o->catalog) {
    if ((rc = pit_catalog_load(&c->cat, o->catalog, e)) < 0)
      return rc;
    c->have_cat = 1;
  }
  if (c->have_cat && (rc = check_types(c, &c->cat, e)) < 0)
    return rc;
  ctl_obs_init(&c->obs);
  for (int i = 0; i < o->nprior && c->obs.nmeas < PIT_POLICY_MEAS_MAX; i++)
    c->obs.meas[c->obs.nmeas++] = o->prior[i];
  if ((rc = policy_types(c, e)) < 0)
    return rc;
  int n0 = pit_membership_nodes(&o->initial);
  if (o->nmax > 0 && o->nmin > o->nmax)
    return pit_err_set(e, PIT_EARG, "--nnodes %d:%d: MIN is above MAX", o->nmin, o->nmax);
  if (n0 < o->nmin || (o->nmax > 0 && n0 > o->nmax))
    return pit_err_set(e, PIT_EARG, "the initial membership has %d nodes, outside --nnodes %d:%d", n0, o->nmin,
                       o->nmax);
  if (o->total_steps > 0)
    for (int s = 0; s < o->policy.nsched; s++)
      if (o->policy.sched[s].step >= o->total_steps)
        return pit_err_set(e, PIT_EARG, "schedule step %lld is beyond the job's %lld iterations",
                           (long long)o->policy.sched[s].step, (long long)o->total_steps);
  if ((rc = take_lock(c, e)) < 0)
    return rc;
  registry_note(c);
  struct pit_provider_conf pc;
  provider_conf(c, &pc);
  if ((rc = pit_provider_open(&c->prov, o->provider, &pc, e)) < 0)
    return rc;
  snprintf(c->events_path, sizeof c->events_path, "%s", o->events ? o->events : "");
  if (!o->events)
    snprintf(c->events_path, sizeof c->events_path, "%s/events.jsonl", c->state_dir);
  if ((rc = pit_events_open_mode(&c->ev, c->events_path, 1, e)) < 0)
    return rc;
  c->ev_open = 1;
  if (o->db && (rc = pit_store_open(&c->store, o->db, e)) < 0)
    return rc;
  c->g = calloc(1, sizeof *c->g);
  if (!c->g)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  return 0;
}

static void teardown(struct ctl *c) {
  ctl_obs_release(&c->obs);
  if (c->have_prog)
    ctl_progress_release(&c->prog);
  if (c->have_snap)
    ctl_snap_release(&c->snap);
  if (c->g) {
    ctl_gen_kill(c->g, 2.0);
    ctl_gen_release(c->g);
    free(c->g);
  }
  if (c->prov.ops)
    stop_all_nodes(c);
  drop_held(c);
  free(c->held);
  struct pit_err e2 = {0};
  if (c->ev_open) {
    pit_events_flush(&c->ev, &e2);
    pit_events_release(&c->ev);
    if (pit_run_result_price(c->res, c->have_cat ? &c->cat : NULL, &e2) < 0)
      warn(c, "the run's bill from its records: %s", e2.msg);
  }
  if (c->store && pit_store_close(c->store, &e2) < 0)
    warn(c, "%s", e2.msg);
  pit_provider_close(&c->prov);
  if (c->have_cat)
    pit_catalog_release(&c->cat);
  if (c->lock_fd >= 0)
    close(c->lock_fd);
}

/* A run continued after a controller stop (its state found): the next
 * generation, the restarts, the steps written and the checkpoint to resume
 * from (the events file's when newer than the state's: a kill after the
 * events file took the checkpoint, before the state did). */
static void continue_run(struct ctl *c, struct prev_state *ps, char *resume, size_t n) {
  int64_t ev_step;
  char ev_ckpt[1100];
  if (events_last_ckpt(c, &ev_step, ev_ckpt, sizeof ev_ckpt) && ev_step > ps->step) {
    ps->step = ev_step;
    snprintf(ps->ckpt, sizeof ps->ckpt, "%s", ev_ckpt);
  }
  c->gen = ps->gen + 1;
  /* restarts spent by a controller that ended with an error are not held against this one */
  c->res->restarts = ps->failed ? 0 : ps->restarts;
  int done_ev;
  events_scan(c, &c->step_written, &done_ev);
  c->step_safe = ps->step;
  snprintf(c->ckpt, sizeof c->ckpt, "%s", ps->ckpt);
  snprintf(resume, n, "%s", ps->ckpt);
  warn(c, "run %s continues after a controller stop: generation %d from step %lld", c->o->run, c->gen,
       (long long)c->step_safe);
}

/* The job done (a workload without end records, one that speaks no
 * protocol, finished: its steps are done): held records out, the state says
 * done, the generation's report entry. */
static int end_done(struct ctl *c, struct pit_err *e) {
  struct pit_run_result *res = c->res;
  int rc;
  if ((rc = release_held(c, -1, e)) < 0 || (rc = out_flush(c, e)) < 0)
    return rc;
  test_kill_point("after-end");
  c->finished = 1; /* a kill from here on leaves a run that is said done, not run again */
  if ((rc = write_state(c, e)) < 0)
    return rc;
  test_kill_point("after-done-state");
  if (isnan(c->first_iter_t)) { /* it ended without one progress line pitstop reads: nothing measured */
    res->no_progress = 1;
    res->out_lines = c->out_lines;
    gen_entry(c, "no progress");
    status(c, "no progress", 1);
    return 0;
  }
  gen_entry(c, "done");
  status(c, "done", 1);
  return 0;
}

/* A generation stopped for a resize: its report entry, the next generation's
 * number and nodes (the market layer's reshape; after a reclaim, without the
 * reclaimed node). */
static int end_resized(struct ctl *c, struct pit_err *e) {
  struct pit_run_result *res = c->res;
  if (c->restart_stopping) { /* the steps since the snapshot are redone by the next generation */
    c->redo_below = c->step_next;
    drop_held(c);
  }
  gen_entry(c, "resized");
  struct pit_run_gen *ge = &res->gens[res->ngens - 1];
  double t_exit = now_t(c);
  ge->exit_s = t_exit - c->t_stop_req;
  struct pit_membership want = c->pending.act == PIT_ACT_RESIZE ? c->pending.to : c->cur;
  c->gen++;
  int rc;
  if (c->spot.on && c->reclaim_stop) /* the job restarts without the reclaimed node: which market now */
    rc = stop_reclaimed(c, e) < 0 ? e->code : spot_reshape(c, &want, PIT_SPOT_IDLE, c->pending.reason, e);
  else
    rc = reshape_market(c, &want, c->pending.reason, e);
  if (rc < 0)
    return rc;
  ge->nodes_s = now_t(c) - t_exit;
  return rc;
}

int pit_run(const struct pit_run_opts *o, struct pit_run_result *res, struct pit_err *e) {
  memset(res, 0, sizeof *res);
  struct ctl c;
  memset(&c, 0, sizeof c);
  c.res = res;
  c.cur = o->initial;
  c.total_steps = o->total_steps;
  int rc = setup(&c, o, e);
  snprintf(res->events, sizeof res->events, "%s", c.events_path);
  struct prev_state ps;
  memset(&ps, 0, sizeof ps);
  int done = rc == 0 ? finished_before(&c, e) : 0;
  if (done < 0)
    rc = done;
  if (rc == 0 && !done)
    resume_membership(&c);
  if (rc == 0 && !done)
    rc = reconcile(&c, &ps, e);
  char resume[1100] = "";
  if (rc == 0 && ps.found)
    continue_run(&c, &ps, resume, sizeof resume);
  if (rc == 0 && !done)
    rc = c.spot.on && !ps.found ? spot_initial(&c, e) : 0;
  if (rc == 0 && !done)
    rc = reshape_market(&c, &c.cur, "the initial membership", e);
  int consecutive_fail = 0;
  while (rc == 0 && !done) {
    char why[1024];
    if ((rc = choose_resume(&c, resume, sizeof resume, e)) < 0)
      break;
    enum gen_end end = run_generation(&c, resume, why, sizeof why, e);
    if (end == GEN_INTERRUPTED) {
      rc = end_interrupted(&c, e);
      break;
    }
    if (end == GEN_FATAL) {
      gen_entry(&c, "failed");
      rc = e->code ? e->code : PIT_ESTATE;
      break;
    }
    if (end == GEN_DONE) {
      rc = end_done(&c, e);
      break;
    }
    if (end == GEN_STOPPED) {
      consecutive_fail = 0;
      if ((rc = end_resized(&c, e)) < 0)
        break;
      snprintf(resume, sizeof resume, "%s", c.ckpt);
      continue;
    }
    /* failed */
    int64_t lost = drop_held(&c);
    res->lost_steps += lost;
    gen_entry(&c, "failed");
    if (c.gen_iters == 0 && c.gen == 0 && !c.ckpt[0]) {
      char tail[1024];
      log_tail(&c, c.gen, tail, sizeof tail);
      rc = pit_err_set(e, PIT_ESTATE, "%s before its first iteration%s%s", why, tail[0] ? "; its last words: " : "",
                       tail);
      pit_err_hint(e, "the whole output is in %s/gen-0.log", c.state_dir);
      break;
    }
    struct pit_err ce = {0};
    if (c.gen_iters == 0 && resume[0] && ckpt_here(&c, resume) && ctl_ckpt_check(resume, o->ckpt_check, &ce) < 0) {
      /* the workload could not read its checkpoint: no restart spent, no node set aside (the next
       * generation resumes from an older one) */
      warn(&c, "generation %d failed (%s) on a damaged checkpoint: %s", c.gen, why, ce.msg);
      c.gen++;
      continue;
    }
    if (res->restarts >= o->max_restarts) {
      char detail[1100];
      failure_detail(&c, detail, sizeof detail);
      rc = pit_err_set(e, PIT_ESTATE, "generation %d failed (%s) and --max-restarts %d is used up%s", c.gen, why,
                       o->max_restarts, detail);
      pit_err_hint(e, "its output is in %s/gen-%d.log", c.state_dir, c.gen);
      disk_hint(&c, detail, e);
      break;
    }
    res->restarts++;
    consecutive_fail++;
    char said[1100];
    failure_detail(&c, said, sizeof said);
    if (c.ckpt[0])
      warn(&c, "generation %d failed (%s): it restarts from the checkpoint at step %lld (%s), %lld step%s since "
               "it redone; restart %d of %d%s",
           c.gen, why, (long long)c.step_safe, c.ckpt, (long long)lost, lost == 1 ? "" : "s", res->restarts,
           o->max_restarts, said);
    else
      warn(&c, "generation %d failed (%s): there is no checkpoint or snapshot, so the job starts again from step "
               "0 (%lld step%s redone); restart %d of %d%s",
           c.gen, why, (long long)lost, lost == 1 ? "" : "s", res->restarts, o->max_restarts, said);
    /* nodes that fail a health check are replaced (on their market; a spot node
     * gone with the spot layer on: the spot policy chooses the market) */
    int spot_lost = 0;
    for (int i = c.nnodes - 1; i >= 0; i--) {
      struct pit_err e2 = {0};
      if (c.prov.ops->health(&c.prov, &c.nodes[i], &e2) < 0 || consecutive_fail >= 2) {
        char itype[PIT_NAME_MAX + 16];
        snprintf(itype, sizeof itype, "%s%s", c.nodes[i].itype, c.nodes[i].spot ? "@spot" : "@on-demand");
        warn(&c, "node %s set aside: %s", c.nodes[i].id, e2.msg[0] ? e2.msg : "it failed twice in a row");
        char why2[96];
        snprintf(why2, sizeof why2, "replaces %.40s (set aside)", c.nodes[i].id);
        if (c.spot.on && c.nodes[i].spot) {
          ctl_spot_down(&c.spot, now_t(&c), spot_retry_s(&c));
          spot_lost = 1;
          if ((rc = stop_node_at(&c, i, "lost", e)) < 0)
            break;
          continue;
        }
        if ((rc = stop_node_at(&c, i, "lost", e)) < 0 || (rc = start_node(&c, itype, why2, e)) < 0)
          break;
      }
    }
    if (rc == 0 && spot_lost)
      rc = spot_reshape(&c, &c.cur, PIT_SPOT_IDLE, "replaces a spot node gone", e);
    if (rc < 0)
      break;
    snprintf(resume, sizeof resume, "%s", c.ckpt);
    c.step_safe = c.ckpt[0] ? c.step_safe : 0;
    c.gen++;
    status(&c, "restarting", 1);
  }
  res->steps = c.step_next;
  res->total_s = now_t(&c);
  res->resizable = c.resizable || !o->cmd || o->resume_by_restart;
  res->by_restart = o->resume_by_restart && !c.resizable;
  struct pit_err e2 = {0};
  if (rc == 0)
    rc = out_flush(&c, e);
  else if (c.ev_open)
    out_flush(&c, &e2);
  char spath[1100];
  snprintf(spath, sizeof spath, "%s/state", c.state_dir);
  if (rc != 0 && c.lock_fd >= 0 && access(spath, F_OK) == 0) {
    c.failed_exit = 1; /* kept for a resume; its restarts are not held against the next controller */
    write_state(&c, &e2);
  }
  teardown(&c);
  res->waste_s = c.prov.waste_s;
  res->waste_usd = c.prov.waste_usd;
  res->cost += res->waste_usd;
  return rc;
}

int pit_run_cleanup(const struct pit_run_opts *o, int *stopped, struct pit_err *e) {
  struct ctl c;
  memset(&c, 0, sizeof c);
  struct pit_run_result res;
  memset(&res, 0, sizeof res);
  c.res = &res;
  c.o = o;
  c.lock_fd = -1;
  *stopped = 0;
  snprintf(c.state_dir, sizeof c.state_dir, "%s", o->run_dir);
  int rc = 0;
  struct stat st;
  if (stat(c.state_dir, &st) < 0) { /* started with --checkpoint-dir elsewhere: the run's note */
    char link[1200], target[PATH_MAX];
    if (registry_path(o->run, link, sizeof link) == 0 && realpath(link, target) &&
        strlen(target) < sizeof c.state_dir) {
      snprintf(c.state_dir, sizeof c.state_dir, "%s", target);
      warn(&c, "run %s: its directory is '%s'", o->run, c.state_dir);
    } else {
      pit_err_set(e, PIT_ENOTFOUND, "run %s has no directory '%s', and no other is noted for it", o->run, o->run_dir);
      pit_err_hint(e, "give --checkpoint-dir DIR, the directory the run was started with");
      return PIT_ENOTFOUND;
    }
  }
  if (rc == 0)
    rc = take_lock(&c, e);
  struct pit_provider_conf pc;
  provider_conf(&c, &pc);
  if (rc == 0)
    rc = pit_provider_open(&c.prov, o->provider, &pc, e);
  struct prev_state ps;
  if (rc == 0) {
    read_state(&c, &ps);
    for (int i = 0; i < ps.npg; i++)
      if (ps.pgids[i] > 1)
        kill(-ps.pgids[i], SIGKILL);
    /* a node whose processes were still exiting (its cgroup busy) is listed again and
     * stopped in a later pass; what still fails in the last pass is the error */
    struct pit_err last = {0};
    for (int pass = 0; rc == 0 && pass < 3; pass++) {
      struct pit_node *list = NULL;
      int n = 0;
      if ((rc = c.prov.ops->list(&c.prov, &list, &n, e)) < 0 || n == 0) {
        free(list);
        pit_err_clear(&last);
        break;
      }
      if (pass > 0)
        usleep(1000000);
      pit_err_clear(&last);
      for (int i = 0; i < n; i++) {
        struct pit_err e2 = {0};
        if (c.prov.ops->stop(&c.prov, &list[i], &e2) == 0)
          (*stopped)++;
        else if (!last.code)
          last = e2;
      }
      free(list);
    }
    if (rc == 0 && last.code) {
      *e = last;
      rc = last.code;
    }
    pit_provider_close(&c.prov);
  }
  if (c.lock_fd >= 0)
    close(c.lock_fd);
  return rc;
}
