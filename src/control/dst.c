/* dst.c — the deterministic simulation of the controller (docs/dst.md): the real
 * pit_run (controller.c and ctl_*.c, unchanged but for the world seam of world.h)
 * driven by a simulated clock, a simulated provider and a simulated workload, all
 * drawn from one PRNG seeded by the seed. No real process runs and nothing sleeps:
 * the workload's lines reach the controller through real pipes, its checkpoints
 * and the run's files are real small files under the seed's directory.
 *
 * Faults (a seed draws 0 to 6 of them): provider start failures and hangs, list
 * failures, slow stops, reclaims with and without notice (nodes lost), workloads
 * that crash, hang or exit 0 at any step, in the stop agreement and in the
 * checkpoint write, the controller killed before any effect (and run again by the
 * harness, as a user runs the same command again: it reconciles from its state
 * file while the nodes it started live on), a disk full for a while (every write
 * of the controller and of the workload fails with ENOSPC), and forward jumps of
 * the clock.
 *
 * Invariants checked after each seed (dst_check.c): every step once; the sample
 * digests and losses equal an uninterrupted run's; iteration records only where a
 * checkpoint or the job's end covers them (the held-record rule); no node started
 * twice, none left running, each node's billed seconds (the run log priced by
 * catalog/cost.c) equal to its life; the run ends done or with one clear error,
 * never done with steps missing; no hang.
 *
 * Invariants of the simulation: a seed alone decides everything (the trace and its
 * digest are the same at every run of a seed); one workload runs at a time (a
 * dead controller's dies with it: its stdout pipe has no reader). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/dst_impl.h"

/* ---------------- the PRNG and the trace ---------------- */

uint64_t dst_rand(struct dst *d) {
  uint64_t z = (d->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
double dst_unif(struct dst *d, double lo, double hi) {
  return lo + (hi - lo) * (double)(dst_rand(d) >> 11) * 0x1p-53;
}

int dst_pick(struct dst *d, int n) { return n > 0 ? (int)(dst_rand(d) % (uint64_t)n) : 0; }

void dst_trace(struct dst *d, const char *fmt, ...) {
  char line[1536];
  int k = snprintf(line, sizeof line, "%.6f ", d->now);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + k, sizeof line - (size_t)k, fmt, ap);
  va_end(ap);
  for (const char *p = line; *p; p++) {
    d->hash ^= (unsigned char)*p;
    d->hash *= 0x100000001b3ull;
  }
  d->hash ^= '\n';
  d->hash *= 0x100000001b3ull;
  if (d->trace)
    fprintf(d->trace, "%s\n", line);
}

/* ---------------- effects: the controller's kill, the disk full ---------------- */

int dst_disk_full(const struct dst *d) { return d->now >= d->full_from && d->now < d->full_to; }

int dst_fx(struct dst *d, const char *what) {
  if (d->dead)
    return CTL_EFFECT_DEAD;
  d->neff++;
  if (d->kill_at > 0 && d->neff >= d->kill_at) {
    d->kill_at = 0;
    d->dead = 1;
    dst_trace(d, "controller %d killed before effect %" PRId64 " (%s)", d->ncontrollers, d->neff, what);
    if (d->nlaunch > 0 && d->wk.gen >= 0 && d->wk.gen < DST_MAX_GENS) /* its lines may still be unread */
      d->gen_killed[d->wk.gen] = 1;
    for (int i = 0; i < d->nnodes; i++) { /* its start record (and ready) never written */
      if (d->neff - d->nodes[i].start_fx <= 2)
        d->nodes[i].unrecordable = 1;
      if (d->nodes[i].stop_fx > 0 && d->neff - d->nodes[i].stop_fx <= 1)
        d->nodes[i].stop_unrecorded = 1;
    }
    dst_work_die(d, 128 + SIGPIPE, "its controller is gone (SIGPIPE)");
    return CTL_EFFECT_DEAD;
  }
  int write = strncmp(what, "write", 5) == 0 || strncmp(what, "link", 4) == 0;
  if (write && dst_disk_full(d)) {
    for (int i = 0; i < d->nnodes; i++)
      if (d->nodes[i].alive || d->nodes[i].t_end >= d->full_from)
        d->nodes[i].unrecordable = 1;
    dst_trace(d, "effect %" PRId64 " %s: No space left on device", d->neff, what);
    return -ENOSPC;
  }
  dst_trace(d, "effect %" PRId64 " %s", d->neff, what);
  return 0;
}

/* ---------------- the world's ops ---------------- */

static struct dst *of(struct ctl_world *w) { return w->impl; }

static double w_now(struct ctl_world *w) { return of(w)->now; }

static int w_effect(struct ctl_world *w, const char *what) { return dst_fx(of(w), what); }

static void w_wait(struct ctl_world *w, struct ctl_gen *g, double timeout_s) {
  (void)g;
  struct dst *d = of(w);
  double until = d->now + timeout_s;
  if (d->now > d->t_limit) { /* no end in sight: a hang, said by the checks */
    if (!d->hung) {
      d->hung = 1;
      dst_trace(d, "hang: the simulated clock passed %.0f s", d->t_limit);
    }
    d->kill_at = d->neff + 1;
    dst_fx(d, "hang");
    return;
  }
  if (d->jump_at > 0 && until >= d->jump_at) {
    if (d->jump_at > d->now) /* a hung provider call may have passed it: the clock never goes back */
      d->now = d->jump_at;
    d->jump_at = 0;
    d->now += d->jump_s;
    dst_trace(d, "clock jumps forward %.1f s", d->jump_s);
    until = d->now;
  }
  double next = dst_work_next(d);
  if (next < until)
    until = next;
  if (until > d->now)
    d->now = until;
  dst_work_run(d);
}

static int w_poll(struct ctl_world *w, struct ctl_proc *p) {
  struct dst *d = of(w);
  if (p->exited)
    return 1;
  if (d->wk.pid == p->pid && !d->wk.exited)
    return 0;
  p->exited = 1;
  p->status = d->wk.pid == p->pid ? d->wk.status : 137;
  dst_trace(d, "pid %d reaped: status %d", (int)p->pid, p->status);
  return 1;
}

static void w_kill_gen(struct ctl_world *w, struct ctl_gen *g, double grace_s) {
  struct dst *d = of(w);
  (void)grace_s;
  int any = 0;
  for (int i = 0; i < g->nproc; i++)
    any |= !g->proc[i].exited && d->wk.pid == g->proc[i].pid && !d->wk.exited;
  if (any && dst_fx(d, "kill workload") == 0)
    dst_work_die(d, d->wk.hang ? 128 + SIGKILL : 128 + SIGTERM, "killed by its controller");
  for (int i = 0; i < g->nproc; i++)
    w_poll(w, &g->proc[i]);
}

static int w_signal_catchers(struct ctl_world *w, pid_t pgid, int sig) {
  struct dst *d = of(w);
  if (d->wk.pid != pgid || d->wk.exited)
    return 0;
  if (dst_fx(d, "signal workload") != 0)
    return 1; /* a dead controller's signal never arrives; it believes it was sent */
  dst_work_signal(d, sig);
  return 1;
}

static int w_kill_group(struct ctl_world *w, pid_t pgid, int sig) {
  struct dst *d = of(w);
  if (d->wk.pid != pgid || d->wk.exited) {
    errno = ESRCH;
    return -1;
  }
  if (sig == 0)
    return 0;
  if (dst_fx(d, "kill process group") == 0)
    dst_work_die(d, 128 + sig, "its process group killed");
  return 0;
}

static const struct ctl_world_ops world_ops = {
    .now = w_now,
    .wait = w_wait,
    .launch = dst_work_launch,
    .poll = w_poll,
    .kill_gen = w_kill_gen,
    .signal_catchers = w_signal_catchers,
    .kill_group = w_kill_group,
    .effect = w_effect,
};

/* ---------------- one seed ---------------- */

static void rm_tree(const char *path) {
  DIR *dir = opendir(path);
  if (!dir) {
    unlink(path);
    return;
  }
  struct dirent *de;
  while ((de = readdir(dir))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", path, de->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
      rm_tree(p);
    else
      unlink(p);
  }
  closedir(dir);
  rmdir(path);
}

void pit_dst_remove(const char *dir) { rm_tree(dir); }

void pit_dst_scratch(char *buf, size_t n) {
  const char *tmp = getenv("TMPDIR");
  snprintf(buf, n, "%s/pit-dst-%d", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp",
           (int)getpid());
}

/* The seed's job and faults, drawn in a fixed order from its PRNG. */
static void plan(struct dst *d, int faults) {
  d->total = 30 + dst_pick(d, 150);
  d->ckpt_every = 4 + dst_pick(d, 17);
  d->step_s = dst_unif(d, 0.5, 2.0);
  d->init_s = dst_unif(d, 1, 8);
  d->boot_s = dst_unif(d, 1, 20);
  d->two_phase = dst_pick(d, 10) < 7; /* 1 → 2 → 1 nodes by a schedule; else 1 or 2 nodes throughout */
  d->nodes0 = 1 + dst_pick(d, 2);
  d->sched_a = d->total / 4 + dst_pick(d, (int)(d->total / 4));
  d->sched_b = d->total / 2 + dst_pick(d, (int)(d->total / 3));
  if (!faults)
    return;
  int nf = dst_pick(d, 7);
  for (int i = 0; i < nf; i++) {
    int kind = dst_pick(d, 10);
    d->nfaults++;
    switch (kind) {
    case 0: /* the controller killed before an effect */
    case 1:
      d->kills_left++;
      break;
    case 2: /* a start fails (or hangs first) */
      if (d->nstart_fail < DST_MAX_PLAN)
        d->start_fail[d->nstart_fail++] = dst_pick(d, 6) * 2 + dst_pick(d, 2); /* odd: a hang */
      break;
    case 3:
      if (d->nlist_fail < DST_MAX_PLAN)
        d->list_fail[d->nlist_fail++] = dst_pick(d, 4);
      break;
    case 4: /* a node reclaimed, with notice (even) or without (odd: a node lost) */
    case 5:
      if (d->nreclaim < DST_MAX_PLAN) {
        d->reclaim_start[d->nreclaim] = dst_pick(d, 5);
        d->reclaim_after[d->nreclaim] = dst_unif(d, 5, 40 * d->step_s + 30);
        d->reclaim_notice[d->nreclaim++] = kind == 4;
      }
      break;
    case 6: /* a workload fault in a generation */
    case 7:
      if (d->nwfault < DST_MAX_PLAN) {
        d->wfault_launch[d->nwfault] = dst_pick(d, 5);
        d->wfault_kind[d->nwfault] = 1 + dst_pick(d, DST_WF_KINDS - 1);
        d->wfault_step[d->nwfault++] = dst_pick(d, 40);
      }
      break;
    case 8: /* the disk full for a while */
      d->full_from = d->now + dst_unif(d, 0, 60 * d->step_s + 60);
      d->full_to = d->full_from + dst_unif(d, 1, 200);
      break;
    default: /* a clock jump, or a slow stop */
      if (dst_pick(d, 2)) {
        d->jump_at = d->now + dst_unif(d, 0, 60 * d->step_s + 60);
        d->jump_s = dst_unif(d, 5, 900);
      } else {
        d->slow_stop = 1 + dst_pick(d, 6);
      }
      break;
    }
  }
  if (d->kills_left)
    d->kill_at = 1 + dst_pick(d, 300);
}

static void opts_fill(struct dst *d, struct pit_run_opts *o, char **cmd) {
  pit_run_opts_init(o);
  o->run = "dst";
  o->run_dir = d->run_dir;
  o->self_exe = "pitstop";
  o->provider = "local"; /* its name only: the world's provider runs it; a checkpoint path is a file here */
  o->deftype = "sim-1";
  pit_membership_add(&o->initial, "sim-1", d->two_phase ? 1 : d->nodes0, 1, NULL);
  o->ranks_per_node = 1;
  o->max_restarts = 40;
  o->start_timeout_s = 60;
  o->stop_timeout_s = 40;
  o->hang_timeout_s = 300;
  o->grace_s = 10;
  o->cmd = cmd; /* a protocol workload; the world launches it, not a process */
  if (d->two_phase) {
    o->policy.kind = PIT_POLICY_SCHEDULE;
    o->policy.nsched = 2;
    o->policy.sched[0].step = d->sched_a;
    pit_membership_add(&o->policy.sched[0].to, "sim-1", 2, 1, NULL);
    o->policy.sched[1].step = d->sched_b;
    pit_membership_add(&o->policy.sched[1].to, "sim-1", 1, 1, NULL);
  }
  o->world = &d->world;
}

static void on_warn(void *ctx, const struct pit_err *w) {
  struct dst *d = ctx;
  dst_trace(d, "warn: %s", w->msg);
}

int pit_dst_run(const struct pit_dst_opts *po, struct pit_dst_result *r, struct pit_err *e) {
  memset(r, 0, sizeof *r);
  struct dst *d = calloc(1, sizeof *d);
  if (!d)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int rc = 0;
  d->rng = po->seed * 0xD1B54A32D192ED03ull + 1;
  d->hash = 0xcbf29ce484222325ull;
  d->trace = po->trace;
  d->now = 1000;
  d->t_limit = 1000 + 2e5;
  d->wk.exited = 1;
  d->wk.wfd = -1;
  d->world.ops = &world_ops;
  d->world.provider = &dst_provider;
  d->world.impl = d;
  d->world.broken_held = po->broken_held;
  snprintf(d->dir, sizeof d->dir, "%s", po->dir);
  snprintf(d->run_dir, sizeof d->run_dir, "%s/run", po->dir);
  rm_tree(d->dir);
  if ((rc = pit_mkdir_p(d->run_dir, e)) < 0) {
    free(d);
    return rc;
  }
  plan(d, po->faults);
  dst_trace(d, "seed %" PRIu64 ": %" PRId64 " steps, checkpoint every %d, %s, %d faults", po->seed, d->total,
            d->ckpt_every, d->two_phase ? "1 -> 2 -> 1 nodes" : d->nodes0 == 1 ? "1 node" : "2 nodes", d->nfaults);
  char *cmd[] = {"dst-workload", NULL};
  int done = 0;
  struct pit_err last = {0};
  for (int attempt = 0; attempt < 40 && !done; attempt++) {
    struct pit_run_opts o;
    opts_fill(d, &o, cmd);
    o.warn = on_warn;
    o.ctx = d;
    struct pit_run_result *res = calloc(1, sizeof *res);
    if (!res) {
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
      break;
    }
    struct pit_err e2 = {0};
    d->ncontrollers++;
    dst_trace(d, "controller %d starts", d->ncontrollers);
    int prc = pit_run(&o, res, &e2);
    dst_trace(d, "controller %d returns %d%s%s", d->ncontrollers, prc, e2.msg[0] ? ": " : "", e2.msg);
    if (d->dead) { /* run again, as the user runs the same command again */
      r->kills++;
      d->dead = 0;
      if (--d->kills_left > 0)
        d->kill_at = d->neff + 1 + dst_pick(d, 300);
    } else if (prc == 0) {
      done = 1;
      r->steps = res->steps;
    } else {
      last = e2;
      if (!e2.msg[0])
        snprintf(r->violation, sizeof r->violation, "controller %d failed (%d) without a message", d->ncontrollers,
                 prc);
      if (dst_disk_full(d)) { /* the user makes room, then runs it again */
        d->now = d->full_to;
        dst_trace(d, "the disk has room again");
      }
    }
    free(res);
    if (r->violation[0] || d->hung)
      break;
  }
  if (rc == 0) {
    r->ended_error = !done;
    snprintf(r->error, sizeof r->error, "%s", last.msg);
    r->controllers = d->ncontrollers;
    r->faults = d->nfaults;
    r->sim_s = d->now - 1000;
    if (!r->violation[0])
      dst_check(d, done, r);
    r->ok = r->violation[0] == 0;
    dst_trace(d, "seed %" PRIu64 " %s%s", po->seed, r->ok ? "ok" : "VIOLATION: ", r->violation);
    r->digest = d->hash;
  }
  dst_work_close(d);
  free(d);
  return rc;
}
