/* controller.c — pit_run(): the elastic controller's generations, and
 * pit_run_cleanup(). The parts it calls are cut by concern into ctl_*.c
 * (ctl_impl.h lists them); this file holds the run's set-up, its generations one
 * after another, what a failed one says, and the tear-down.
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
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "control/ctl_impl.h"
#include "control/said.h"

void pit_run_opts_init(struct pit_run_opts *o) {
  memset(o, 0, sizeof *o);
  o->provider = "local";
  o->deftype = "local-1";
  o->nmin = 1;
  o->nmax = 0;
  o->ranks_per_node = 1;
  o->max_restarts = 3;
  o->total_steps = -1;
  o->start_steps = -1;
  o->start_timeout_s = 120;
  o->lost_wait_s = 120;
  o->stop_timeout_s = 60;
  o->hang_timeout_s = 1800;
  o->grace_s = 30;
}

/* Last lines of a generation's log, for a message. */
static void log_tail(const struct ctl *c, int gen, char *out, size_t n) {
  char path[1100], buf[8192];
  snprintf(path, sizeof path, "%s/gen-%d.log", c->state_dir, gen);
  out[0] = 0;
  if (ctl_read_small(path, buf, sizeof buf) < 0)
    return;
  /* the last 3 lines, node-exec's warnings left out (of what the workload may not need: the
   * GLOO_SOCKET_IFNAME it could not set), '|' between them */
  const char *pick[3];
  int npick = 0;
  for (char *end = buf + strlen(buf); end > buf && npick < 3;) {
    while (end > buf && end[-1] == '\n')
      *--end = 0;
    char *start = end;
    while (start > buf && start[-1] != '\n')
      start--;
    if (start < end && !strstr(start, "pitstop: warning: "))
      pick[npick++] = start;
    end = start;
  }
  for (int k = npick - 1; k >= 0; k--) {
    size_t at = strlen(out);
    snprintf(out + at, n - at, "%s%s", at ? "|" : "", pick[k]);
  }
}

/* The run stopped by the user's signal: the records a checkpoint covers are
 * kept (a program that speaks no protocol: every measured step, it has no
 * checkpoint to redo them from), the rest dropped, as a failure drops them;
 * the state is left without processes, so the same command continues from
 * the last checkpoint. */
static int end_interrupted(struct ctl *c, struct pit_err *e) {
  struct pit_run_result *res = c->res;
  int protocol = c->resizable || !c->o->cmd;
  int rc = ctl_release_held(c, protocol ? c->step_safe : -1, e);
  ctl_drop_held(c);
  if (c->g->nproc > 0) /* a generation that was launched */
    ctl_gen_entry(c, "interrupted");
  res->interrupted = c->stop.sig > 0 ? c->stop.sig : 0;
  res->measured = c->stop.sig == CTL_STOP_MEASURED;
  snprintf(res->stop_how, sizeof res->stop_how, "%s",
           c->g->nproc == 0                 ? "not started"
           : c->stop.how == CTL_STOP_AGREED ? "checkpoint" : c->stop.how == CTL_STOP_TERM ? "sigterm" : "killed");
  res->stop_s = c->stop.how == CTL_STOP_NONE ? 0 : now_t(c) - c->stop.t_signal;
  res->stop_ckpt_step = c->ckpt[0] ? c->step_safe : -1;
  ctl_status(c, "stopped", 1);
  if (rc == 0)
    rc = ctl_write_state(c, e);
  return rc;
}

/* ---------------- what a failed generation says ---------------- */

/* The last 16 KiB of this generation's log into buf (16385 bytes): how many bytes (0: none). */
static size_t gen_log_tail(const struct ctl *c, char *buf) {
  char path[1100];
  snprintf(path, sizeof path, "%s/gen-%d.log", c->state_dir, c->gen);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t k = 0;
  if (fd >= 0) {
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, size > 16384 ? size - 16384 : 0, SEEK_SET);
    k = read(fd, buf, 16384);
    close(fd);
  }
  buf[k > 0 ? k : 0] = 0;
  return k > 0 ? (size_t)k : 0;
}

/* What the generation's log says of its failure: the line ctl_failure_said picks
 * among the log's last 16 KiB (mpirun's and torchrun's own reports come after the
 * workload's error), else the log's last lines. A node's process killed from outside
 * (gen_fail_sig: SIGKILL, SIGTERM) has its cause said: only a pitstop line or torchrun's
 * report of a rank a signal ended add to it, not the survivors' after-effects (a
 * torchrun SIGKILLed on one node read "the workload said: File \".../errors/
 * __init__.py\", line 346, in wrapper", or the other rank's "Connection closed by
 * peer"). A process that aborted or faulted (SIGABRT, SIGSEGV) keeps its words. */
static void failure_detail(const struct ctl *c, char *out, size_t n) {
  char *buf = malloc(16385);
  out[0] = 0;
  size_t k = buf ? gen_log_tail(c, buf) : 0;
  char said[700];
  int kind = ctl_failure_said(buf ? buf : "", k, said, sizeof said);
  free(buf);
  int outside = c->gen_fail_sig == SIGKILL || c->gen_fail_sig == SIGTERM; /* not its own abort or fault */
  if (outside && kind != CTL_SAID_PITSTOP && kind != CTL_SAID_SIGNAL)
    return;
  if (said[0]) {
    snprintf(out, n, "; the workload said: %s", said);
    return;
  }
  char tail[1024];
  log_tail(c, c->gen, tail, sizeof tail);
  if (tail[0])
    snprintf(out, n, "; its last words: %s", tail);
}

/* 1: the per-node launcher's generation failed before its first step because the rendezvous port
 * was taken on node 0's host between its choice and torch's bind (torch: "failed to bind to
 * [::]:PORT (errno: 98 - Address already in use)"): the next generation gets another port. */
static int port_taken(const struct ctl *c) {
  if (c->o->launcher != PIT_LAUNCH_PER_NODE || c->gen_iters > 0 || c->g->port <= 0)
    return 0;
  char *buf = malloc(16385);
  if (!buf)
    return 0;
  gen_log_tail(c, buf);
  char at[32];
  snprintf(at, sizeof at, ":%d ", c->g->port); /* the bind of this port, not one of the script's own */
  int taken = strstr(buf, "Address already in use") && strstr(buf, at);
  free(buf);
  return taken;
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

/* gloo's ranks on several nodes connecting to loopback addresses: each bound to what its node's own
 * name resolves to, a loopback address on a stock Debian host (127.0.1.1), unless GLOO_SOCKET_IFNAME
 * names an interface (the ssh provider's node-exec sets it; a cloud's wrap or Slurm does not) */
static void loopback_hint(const struct ctl *c, const char *detail, struct pit_err *e) {
  if (!strstr(detail, "connect [127.") || c->nnodes < 2)
    return;
  pit_err_hint(e, "a rank connected to a loopback address: on several nodes gloo needs GLOO_SOCKET_IFNAME set to "
               "the network interface they share, where a node's own name resolves to 127.0.1.1 or to nothing "
               "(the output is in %s/gen-%d.log)",
               c->state_dir, c->gen);
}

/* torchrun's default --redirects 0 fails at once on Debian's torch 1.13 under Python 3.11
 * (Std.from_str("0") finds no member: IntFlag's iteration skips 0), so a user's plain torchrun
 * line fails before its first step: the cure is named (detail: failure_detail's quote). */
static void redirects_hint(const struct ctl *c, const char *detail, struct pit_err *e) {
  if (!strstr(detail, "'NoneType' object has no attribute 'get'") || ctl_said_torchrun_restarts(c->o->cmd) < 0)
    return;
  pit_err_hint(e, "torchrun's default --redirects 0 fails this way with Debian's torch 1.13 on Python 3.11: give "
               "torchrun --redirects 2 --tee 2 (docs/own-script.md; the output is in %s/gen-%d.log)",
               c->state_dir, c->gen);
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
static int check_type(const struct ctl *c, const struct pit_catalog *cat, const struct pit_member *m, const char *where,
                      struct pit_err *e) {
  const struct pit_provider_ops *ops = pit_provider_find(c->o->provider);
  if (!cat && m->market == PIT_MARKET_SPOT && ops && !ops->spot_market) {
    char name[PIT_NAME_MAX + 16];
    pit_itype_market_format(m->itype, m->market, name, sizeof name);
    pit_err_set(e, PIT_EARG, "%s names '%s', but provider '%s' has no spot market", where, name, ops->name);
    pit_err_hint(e, "spot nodes come from a cloud: --provider command (docs/providers.md)");
    return PIT_EARG;
  }
  if (cat && !pit_catalog_find(cat, m->itype))
    return pit_err_set(e, PIT_ENOTFOUND, "%s: instance type '%s' is not in the catalog '%s'", where, m->itype,
                       c->o->catalog);
  return 0;
}

/* check_type on every membership the run names (initial, schedule). */
static int check_types(const struct ctl *c, const struct pit_catalog *cat, struct pit_err *e) {
  const struct pit_run_opts *o = c->o;
  for (int s = -1; s < o->policy.nsched; s++) {
    const struct pit_membership *m = s < 0 ? &o->initial : &o->policy.sched[s].to;
    for (int i = 0; i < m->n; i++) {
      int rc = check_type(c, cat, &m->m[i], s < 0 ? "the membership" : "the schedule", e);
      if (rc < 0)
        return rc;
    }
  }
  return 0;
}

/* The run's provider: the one it names, or its world's (world.h). */
static int open_provider(struct ctl *c, const struct pit_provider_conf *pc, struct pit_err *e) {
  struct ctl_world *w = c->o->world;
  if (!w || !w->provider)
    return pit_provider_open(&c->prov, c->o->provider, pc, e);
  memset(&c->prov, 0, sizeof c->prov);
  c->prov.ops = w->provider;
  c->prov.conf = *pc;
  c->prov.impl = w->impl; /* the world's provider is the world's */
  int rc = c->prov.ops->open(&c->prov, e);
  if (rc < 0)
    c->prov.ops = NULL;
  return rc;
}

static int setup(struct ctl *c, const struct pit_run_opts *o, struct pit_err *e) {
  c->o = o;
  c->lock_fd = -1;
  c->t0 = ctl_clock(c);
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
  if ((rc = ctl_take_lock(c, e)) < 0)
    return rc;
  ctl_registry_note(c);
  struct pit_provider_conf pc;
  provider_conf(c, &pc);
  if ((rc = open_provider(c, &pc, e)) < 0)
    return rc;
  ctl_zones_init(c);
  snprintf(c->events_path, sizeof c->events_path, "%s", o->events ? o->events : "");
  if (!o->events)
    snprintf(c->events_path, sizeof c->events_path, "%s/events.jsonl", c->state_dir);
  if ((rc = pit_events_open_mode(&c->ev, c->events_path, 1, e)) < 0)
    return rc;
  if (c->ev.dropped > 0) /* a controller killed in the middle of a record */
    warn(c, "%s ended in an unfinished record (%lld bytes, a writer killed mid-line): cut off", c->events_path,
         (long long)c->ev.dropped);
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
    ctl_w_kill_gen(c->o->world, c->g, 2.0);
    ctl_gen_release(c->g);
    free(c->g);
  }
  if (c->prov.ops)
    ctl_stop_all_nodes(c);
  ctl_drop_held(c);
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
  if (c->reached_open)
    close(c->reached_fd);
}

/* The steps the previous controller's last generation did past the step this
 * one resumes from (RUN_DIR/reached): done again, though no record of the
 * events file keeps them when its records were held (a script with no
 * checkpoint: every step). With --resume-by-restart they are measured where the
 * restarted script's progress lines say it resumed (ctl_on_record, redo_below);
 * else the generation starts at step_safe, and they are counted now. */
static void redone_after_stop(struct ctl *c) {
  int gen;
  int64_t reached;
  if (!ctl_read_reached(c, &gen, &reached) || gen >= c->gen || reached <= c->step_safe)
    return;
  if (c->o->resume_by_restart) {
    if (reached > c->redo_below)
      c->redo_below = reached;
    return;
  }
  int64_t redo = reached - c->step_safe;
  c->res->lost_steps += redo;
  warn(c, "generation %d had reached step %lld: the %lld step%s from step %lld are done again", gen,
       (long long)reached, (long long)redo, redo == 1 ? "" : "s", (long long)c->step_safe);
}

/* The run brought to its first generation: set up; a run finished before is
 * said done (*done 1); else the nodes and workload a killed controller left are
 * reconciled, its state taken over (resume: the checkpoint the next generation
 * resumes from) and the initial membership's nodes started. */
static int run_begin(struct ctl *c, const struct pit_run_opts *o, char *resume, size_t nres, int *done,
                     struct pit_err *e) {
  struct pit_run_result *res = c->res;
  int rc = setup(c, o, e);
  snprintf(res->events, sizeof res->events, "%s", c->events_path);
  struct prev_state ps;
  memset(&ps, 0, sizeof ps);
  *done = rc == 0 ? ctl_finished_before(c, e) : 0;
  if (*done < 0)
    rc = *done;
  if (rc == 0 && !*done)
    ctl_resume_membership(c);
  if (rc == 0 && !*done)
    rc = ctl_reconcile(c, &ps, e);
  int64_t ev_step;
  char ev_ckpt[1100];
  if (rc == 0 && ps.found && ctl_events_last_ckpt(c, &ev_step, ev_ckpt, sizeof ev_ckpt) && ev_step > ps.step) {
    ps.step = ev_step; /* killed after the events file took the checkpoint, before the state did */
    snprintf(ps.ckpt, sizeof ps.ckpt, "%s", ev_ckpt);
  }
  if (rc == 0 && !*done)
    c->state_owned = 1;
  if (rc == 0 && ps.found) {
    /* past every generation of the events file too: a state the disk did not take lags it */
    c->gen = ctl_next_gen(&ps);
    /* restarts spent by a controller that ended with an error are not held against this one */
    res->restarts = ps.failed ? 0 : ps.restarts;
    res->node_restarts = ps.failed ? 0 : ps.node_restarts;
    res->continued = ps.stops + 1;
    int done_ev;
    ctl_events_scan(c, &c->step_written, &done_ev);
    c->step_safe = ps.step;
    snprintf(c->ckpt, sizeof c->ckpt, "%s", ps.ckpt);
    snprintf(resume, nres, "%s", ps.ckpt);
    warn(c, "run %s continues after a controller stop: generation %d from step %lld", o->run, c->gen,
         (long long)c->step_safe);
    if (c->total_steps <= 0) /* the job's length as the killed controller's init records gave it */
      c->total_steps = ctl_events_planned(c);
    redone_after_stop(c);
  }
  /* a new run's state before its first node starts: a kill in its first start leaves the run's
   * time 0 for the next controller (DST seed 1940: its clock continued from the last record) */
  if (rc == 0 && !*done && !ps.found)
    rc = ctl_write_state(c, e);
  if (rc == 0 && !*done && !ps.found)
    rc = ctl_prior_initial(c, e);
  if (rc == 0 && !*done)
    rc = c->spot.on && !ps.found ? ctl_spot_initial(c, e) : 0;
  if (rc == 0 && !*done)
    rc = ctl_reshape_market(c, &c->cur, c->first_why[0] ? c->first_why : "the initial membership", e);
  return rc;
}

/* The job is done (GEN_DONE): the held records out, the state "end done" before
 * any node stops, the generation's report line. */
static int run_done(struct ctl *c, struct pit_err *e) {
  struct pit_run_result *res = c->res;
  int rc;
  /* a workload without end records (one that speaks no protocol) finished: its steps are done */
  if ((rc = ctl_release_held(c, -1, e)) < 0)
    return rc;
  /* every step recorded: those of a job an orphan finished unseen too (its resumed script printed
   * no progress, only that it resumed at the end: ctl_loop.c) */
  int all = c->total_steps > 0 && c->step_next >= c->total_steps && c->o->resume_by_restart;
  if (!c->end_status[0] && (!isnan(c->first_iter_t) || all)) {
    /* it exited 0 after progress pitstop read and wrote no end record: the controller writes it,
     * saying so (detail "by": "controller"), so the run log, status and the store say the job is
     * done, not "stopped", and pitstop predict takes the job for what it ran (docs/own-script.md) */
    struct pit_record r;
    ctl_base_record(c, &r, PIT_REC_END);
    r.step = c->step_next;
    r.total_s = r.t - c->t_launch;
    snprintf(r.status, sizeof r.status, "done");
    r.detail = strdup("{\"by\":\"controller\",\"why\":\"the workload exited 0 and wrote no end record\"}");
    rc = r.detail ? ctl_out_record(c, &r, e) : pit_err_set(e, PIT_ENOMEM, "out of memory");
    pit_record_release(&r);
    if (rc < 0)
      return rc;
  }
  if ((rc = ctl_out_flush(c, e)) < 0)
    return rc;
  ctl_test_kill_point("after-end");
  c->finished = 1; /* a kill from here on leaves a run that is said done, not run again */
  if ((rc = ctl_write_state(c, e)) < 0)
    return rc;
  ctl_test_kill_point("after-done-state");
  if (isnan(c->first_iter_t) && !all) { /* it ended without one progress line pitstop reads: nothing measured */
    res->no_progress = 1;
    res->out_lines = c->out_lines;
    ctl_gen_entry(c, "no progress");
    ctl_status(c, "no progress", 1);
    return 0;
  }
  ctl_gen_entry(c, "done");
  ctl_status(c, "done", 1);
  return 0;
}

/* A generation stopped for a resize (GEN_STOPPED): the nodes reshaped to the
 * decision's membership, the next generation resumes from the checkpoint. */
static int run_resized(struct ctl *c, char *resume, size_t nres, struct pit_err *e) {
  struct pit_run_result *res = c->res;
  int rc;
  if (c->restart_stopping) { /* the steps since the snapshot are redone by the next generation */
    c->redo_below = c->step_next;
    ctl_drop_held(c);
  }
  ctl_gen_entry(c, "resized");
  struct pit_run_gen *ge = &res->gens[res->ngens - 1];
  double t_exit = now_t(c);
  ge->exit_s = t_exit - c->t_stop_req;
  struct pit_membership want = c->pending.act == PIT_ACT_RESIZE ? c->pending.to : c->cur;
  c->gen++;
  /* the next generation starts at the checkpoint: what the market's decisions weigh from now on (a
   * script that cannot resume, reclaimed at step 152 of 200, starts again at 0: the spot policy
   * weighed 2.4 s of work left where 10 s were, and waited for spot with the slack that was not there) */
  c->step_next = c->step_safe;
  if (c->spot.on && c->reclaim_stop) /* the job restarts without the reclaimed node: which market now */
    rc = ctl_stop_reclaimed(c, e) < 0 ? e->code : ctl_spot_reshape(c, &want, PIT_SPOT_IDLE, c->pending.reason, e);
  else
    rc = ctl_reshape_market(c, &want, c->pending.reason, e);
  if (rc < 0)
    return rc;
  ge->nodes_s = now_t(c) - t_exit;
  snprintf(resume, nres, "%s", c->ckpt);
  return 0;
}

/* A generation failed (why): its uncovered steps dropped; an error when it never
 * started, or --max-restarts is used up; else a restart from the last checkpoint,
 * nodes that fail a health check (or after two failures in a row, all) replaced.
 * The health checks come first: a node lost is named as the cause, and when the
 * generation had saved a checkpoint of its own before, the restart is the
 * infrastructure's (a reclaim without notice, an allocation cancelled, a host gone
 * silent): counted in res->node_restarts, not against --max-restarts, and no
 * "failure in a row" (before, a run of 16 spot nodes ended at the 4th node lost
 * over days, and at the 2nd every healthy node was replaced too). */
static int run_failed(struct ctl *c, const char *why, char *resume, size_t nres, int *consecutive_fail,
                      struct pit_err *e) {
  struct pit_run_result *res = c->res;
  const struct pit_run_opts *o = c->o;
  int rc = 0;
  int64_t lost = ctl_drop_held(c);
  res->lost_steps += lost;
  ctl_gen_entry(c, "failed");
  if (c->port_retries < 3 && port_taken(c)) {
    /* not the workload's fault nor a node's: no restart spent, no node set aside */
    c->port_retries++;
    warn(c, "generation %d failed (%s): its rendezvous port %d was taken on node %s's host before torch could "
            "listen on it (Address already in use); it starts again with another port, not counted against "
            "--max-restarts",
         c->gen, why, c->g->port, c->nodes[0].id);
    c->gen++;
    ctl_status(c, "restarting", 1);
    return 0;
  }
  if (c->gen_iters == 0 && c->gen == 0 && !c->ckpt[0]) {
    char said[1100]; /* its own error line (node-exec's "cannot run 'X'") before mpirun's report, else the tail */
    failure_detail(c, said, sizeof said);
    rc = pit_err_set(e, PIT_ESTATE, "%s before its first iteration%s", why, said);
    pit_err_hint(e, "the whole output is in %s/gen-0.log", c->state_dir);
    redirects_hint(c, said, e);
    return rc;
  }
  struct pit_err ce = {0};
  if (c->gen_iters == 0 && resume[0] && ctl_ckpt_here(c, resume) && ctl_ckpt_check(resume, o->ckpt_check, &ce) < 0) {
    /* the workload could not read its checkpoint: no restart spent, no node set aside (the next
     * generation resumes from an older one) */
    warn(c, "generation %d failed (%s) on a damaged checkpoint: %s", c->gen, why, ce.msg);
    c->gen++;
    return 0;
  }
  /* health[i].code != 0: node i failed its health check (health[i].msg says how) */
  struct pit_err *health = calloc((size_t)(c->nnodes > 0 ? c->nnodes : 1), sizeof *health);
  if (!health)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int nlost = 0, first = -1;
  for (int i = 0; i < c->nnodes; i++)
    if (c->prov.ops->health(&c->prov, &c->nodes[i], &health[i]) < 0) {
      if (!health[i].code)
        health[i].code = PIT_ESTATE;
      if (!health[i].msg[0])
        snprintf(health[i].msg, sizeof health[i].msg, "its health check failed");
      nlost++;
      first = first < 0 ? i : first;
    }
  /* the infrastructure's doing: a node lost, or the network to one (its ssh session ended with 255,
   * the host answering again by now: a link down for 20 s, tried 2026-11-30) */
  int by_node = (nlost > 0 || c->gen_link_lost) && c->step_safe > c->gen_step0;
  char cause[1200];
  if (nlost > 0 && !strstr(why, c->nodes[first].id)) /* else the cause names it already (gone, ssh 255) */
    snprintf(cause, sizeof cause, "node %s lost%s, then %s", c->nodes[first].id,
             nlost > 1 ? " with others" : "", why);
  else
    snprintf(cause, sizeof cause, "%s", why);
  if (!by_node && res->restarts - res->node_restarts >= o->max_restarts) {
    char detail[1100];
    failure_detail(c, detail, sizeof detail);
    rc = pit_err_set(e, PIT_ESTATE, "generation %d failed (%s) and --max-restarts %d is used up%s", c->gen, cause,
                     o->max_restarts, detail);
    pit_err_hint(e, "its output is in %s/gen-%d.log", c->state_dir, c->gen);
    disk_hint(c, detail, e);
    loopback_hint(c, detail, e);
    redirects_hint(c, detail, e);
    free(health);
    return rc;
  }
  res->restarts++;
  if (by_node)
    res->node_restarts++;
  else
    (*consecutive_fail)++;
  char said[1100], count[160];
  failure_detail(c, said, sizeof said);
  if (by_node)
    snprintf(count, sizeof count, "a node%s lost after a checkpoint of this generation: not counted against "
                                  "--max-restarts (%d of %d used)",
             nlost ? "" : "'s network", res->restarts - res->node_restarts, o->max_restarts);
  else
    snprintf(count, sizeof count, "restart %d of %d", res->restarts - res->node_restarts, o->max_restarts);
  if (c->ckpt[0])
    warn(c, "generation %d failed (%s): it restarts from the checkpoint at step %lld (%s), %lld step%s since "
            "it redone; %s%s",
         c->gen, cause, (long long)c->step_safe, c->ckpt, (long long)lost, lost == 1 ? "" : "s", count, said);
  else
    warn(c, "generation %d failed (%s): there is no checkpoint or snapshot, so the job starts again from step "
            "0 (%lld step%s redone); %s%s",
         c->gen, cause, (long long)lost, lost == 1 ? "" : "s", count, said);
  /* the next generation starts at the checkpoint, or at step 0 without one: what the market's
   * decisions below weigh */
  c->step_safe = c->ckpt[0] ? c->step_safe : 0;
  c->step_next = c->step_safe;
  /* nodes that fail a health check are replaced (on their market; a spot node
   * gone with the spot layer on: the spot policy chooses the market) */
  int spot_lost = 0;
  for (int i = c->nnodes - 1; i >= 0; i--) {
    if (!health[i].code && *consecutive_fail < 2)
      continue;
    char itype[PIT_NAME_MAX];
    snprintf(itype, sizeof itype, "%s", c->nodes[i].itype);
    enum pit_market mk = c->nodes[i].spot ? PIT_MARKET_SPOT : PIT_MARKET_ON_DEMAND;
    warn(c, "node %s set aside: %s", c->nodes[i].id, health[i].code ? health[i].msg : "it failed twice in a row");
    char why2[96];
    snprintf(why2, sizeof why2, "replaces %.40s (set aside)", c->nodes[i].id);
    if (c->spot.on && c->nodes[i].spot) {
      ctl_zones_spot_down(c, c->nodes[i].zone, 1);
      ctl_spot_down(&c->spot, now_t(c), ctl_spot_retry_s(c));
      spot_lost = 1;
      if ((rc = ctl_stop_node_at(c, i, "lost", e)) < 0) /* a stop that cannot reach it is said, not fatal */
        break;
      continue;
    }
    if ((rc = ctl_stop_node_at(c, i, "lost", e)) < 0 || (rc = ctl_start_node(c, itype, mk, why2, e)) < 0)
      break;
  }
  free(health);
  if (rc == 0 && spot_lost)
    rc = ctl_spot_reshape(c, &c->cur, PIT_SPOT_IDLE, "replaces a spot node gone", e);
  if (rc < 0)
    return rc;
  snprintf(resume, nres, "%s", c->ckpt);
  c->gen++;
  ctl_status(c, "restarting", 1);
  return 0;
}

/* The run's result completed, the events file flushed, the state kept for a
 * resume after an error, everything released: rc, or the flush's error. */
static int run_end(struct ctl *c, int rc, struct pit_err *e) {
  struct pit_run_result *res = c->res;
  const struct pit_run_opts *o = c->o;
  res->steps = c->step_next;
  res->total_s = now_t(c);
  res->resizable = c->resizable || !o->cmd || o->resume_by_restart;
  res->by_restart = o->resume_by_restart && !c->resizable;
  struct pit_err e2 = {0};
  if (rc == 0)
    rc = ctl_out_flush(c, e);
  else if (c->ev_open)
    ctl_out_flush(c, &e2);
  char spath[1100];
  snprintf(spath, sizeof spath, "%s/state", c->state_dir);
  /* a controller that failed before it took the state over (its reconcile: the provider's list
   * failed) leaves it as it is: it wrote its blank one (generation 0, no checkpoint, none of the
   * killed controller's process groups), and the next one reused generation numbers (DST seed 147) */
  if (rc != 0 && c->lock_fd >= 0 && c->state_owned && access(spath, F_OK) == 0) {
    c->failed_exit = 1; /* kept for a resume; its restarts are not held against the next controller */
    ctl_write_state(c, &e2);
  }
  teardown(c);
  res->waste_s = c->prov.waste_s;
  res->waste_usd = c->prov.waste_usd;
  res->cost += res->waste_usd;
  return rc;
}

int pit_run(const struct pit_run_opts *o, struct pit_run_result *res, struct pit_err *e) {
  memset(res, 0, sizeof *res);
  struct ctl c;
  memset(&c, 0, sizeof c);
  c.res = res;
  c.cur = o->initial;
  c.total_steps = o->total_steps;
  char resume[1100] = "";
  int done = 0;
  int rc = run_begin(&c, o, resume, sizeof resume, &done, e);
  int consecutive_fail = 0;
  while (rc == 0 && !done) {
    char why[1024];
    if ((rc = ctl_choose_resume(&c, resume, sizeof resume, e)) < 0)
      break;
    enum gen_end end = ctl_run_generation(&c, resume, why, sizeof why, e);
    if (end == GEN_INTERRUPTED) {
      rc = end_interrupted(&c, e);
      break;
    }
    if (end == GEN_FATAL) {
      ctl_gen_entry(&c, "failed");
      rc = e->code ? e->code : PIT_ESTATE;
      break;
    }
    if (end == GEN_DONE) {
      rc = run_done(&c, e);
      break;
    }
    if (end == GEN_STOPPED) {
      consecutive_fail = 0;
      rc = run_resized(&c, resume, sizeof resume, e);
      continue;
    }
    rc = run_failed(&c, why, resume, sizeof resume, &consecutive_fail, e);
  }
  return run_end(&c, rc, e);
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
    if (ctl_registry_path(o->run, link, sizeof link) == 0 && realpath(link, target) &&
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
    rc = ctl_take_lock(&c, e);
  struct pit_provider_conf pc;
  provider_conf(&c, &pc);
  if (rc == 0)
    rc = pit_provider_open(&c.prov, o->provider, &pc, e);
  struct prev_state ps;
  if (rc == 0) {
    ctl_read_state(&c, &ps);
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
