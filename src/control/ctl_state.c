/* ctl_state.c — the run's directory between controllers: RUN_DIR/state, the lock,
 * the checkpoints held for a restart, reconciliation with what a killed controller
 * left, a run found finished before, the checkpoint a generation resumes from, and
 * the registry note that lets --cleanup find a run directory elsewhere.
 *
 * Invariants:
 *  - RUN_DIR/state is written atomically at each change and names the generation,
 *    the last checkpoint and the workload's process groups; once the job is done it
 *    says "end done" before any node stops, so a kill after the end record never
 *    runs the job twice;
 *  - RUN_DIR/lock is held (flock) while a controller runs the run: two controllers
 *    never start a node twice;
 *  - a restart resumes from the newer of the state's checkpoint and the events
 *    file's last one, each held by a hard link RUN_DIR/held-<step>.ckpt that the
 *    workload's rotation cannot remove (the newest two held);
 *  - a generation resumes from a checkpoint that checks (resume.c); damaged ones are
 *    said and skipped, and with none left the job starts at step 0 or the run ends
 *    with an error naming them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "control/ctl_impl.h"

int ctl_write_state(struct ctl *c, struct pit_err *e) {
  char path[1100], text[4096], mem[256];
  snprintf(path, sizeof path, "%s/state", c->state_dir);
  pit_membership_format(&c->cur, mem, sizeof mem);
  int at = snprintf(text, sizeof text, "gen %d\nstep %lld\nckpt %s\nrestarts %d\nmembership %s\npgids", c->gen,
                    (long long)c->step_safe, c->ckpt_held[0] ? c->ckpt_held : c->ckpt[0] ? c->ckpt : "-",
                    c->res->restarts, mem);
  for (int i = 0; c->g && i < c->g->nproc && at < (int)sizeof text - 32; i++)
    if (!c->g->proc[i].exited)
      at += snprintf(text + at, sizeof text - (size_t)at, " %d", (int)c->g->proc[i].pid);
  /* run time 0 on the monotonic clock; the controller stops the run was continued across */
  at += snprintf(text + at, sizeof text - (size_t)at, "\nt0 %.9f\nstops %d\nnode_restarts %d", c->t0,
                 c->res->continued, c->res->node_restarts);
  snprintf(text + at, sizeof text - (size_t)at, "\n%s", c->finished ? "end done\n" : c->failed_exit ? "end failed\n" : "");
  int fx = ctl_fx(c, "write state");
  if (fx < 0)
    return pit_err_set(e, PIT_EIO, "cannot write '%s': %s", path, strerror(-fx));
  return fx == CTL_EFFECT_DEAD ? 0 : pit_file_write_atomic(path, text, strlen(text), e);
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

void ctl_hold_ckpt(struct ctl *c, int64_t step) {
  char held[1100];
  struct pit_err e2 = {0};
  c->ckpt_held[0] = 0;
  if (step < 0)
    return;
  held_path(c, step, held, sizeof held);
  int fx = ctl_fx(c, "link held checkpoint");
  if (fx == CTL_EFFECT_DEAD || (fx == 0 && pit_atomic_link(c->ckpt, held, &e2) == 0))
    snprintf(c->ckpt_held, sizeof c->ckpt_held, "%s", held);
}

/* Once the state names c->ckpt_held: the other held links go but the newest
 * one below it, so a damaged newest checkpoint has an older one beside it
 * whatever the workload's rotation removed (resume.c falls back to it). */
void ctl_unhold_older(struct ctl *c) {
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
        if (ctl_fx(c, "unlink held checkpoint") == 0)
          unlink(p);
      }
    }
  }
  closedir(d);
}

int64_t ctl_events_planned(const struct ctl *c) {
  struct pit_runlog log;
  struct pit_err e2 = {0};
  pit_runlog_init(&log);
  int64_t n = pit_runlog_load(&log, c->events_path, &e2) == 0 ? log.planned_iters : -1;
  pit_runlog_release(&log);
  return n > 0 ? n : -1;
}

/* The newest checkpoint record of the events file (the durable log, which a
 * kill between its flush and the state's write leaves ahead of the state):
 * 1 with *step and its path (held link if there, else the workload's), 0 if none. */
int ctl_events_last_ckpt(const struct ctl *c, int64_t *step, char *path, size_t n) {
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

void ctl_read_state(struct ctl *c, struct prev_state *ps) {
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
  const char *t0 = strstr(text, "\nt0 ");
  ps->t0 = t0 ? strtod(t0 + 4, NULL) : NAN;
  const char *mem = strstr(text, "\nmembership ");
  char mtext[256];
  if (mem && sscanf(mem + 12, "%255[^\n]", mtext) == 1)
    ps->have_m = pit_membership_parse(&ps->m, mtext, NULL) == 0;
  const char *stops = strstr(text, "\nstops "); /* absent in a state written before it: 0 */
  ps->stops = stops ? atoi(stops + 7) : 0;
  const char *nr = strstr(text, "\nnode_restarts "); /* absent before it: 0 */
  ps->node_restarts = nr ? atoi(nr + 15) : 0;
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

void ctl_note_reached(struct ctl *c) {
  if (c->o->world) /* a simulated world (world.h) keeps no such file */
    return;
  if (!c->reached_open) {
    char path[1100];
    snprintf(path, sizeof path, "%s/reached", c->state_dir);
    c->reached_fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    c->reached_open = c->reached_fd >= 0;
    if (!c->reached_open)
      return; /* best effort: without it a killed controller's redone steps go uncounted */
  }
  char text[64];
  int n = snprintf(text, sizeof text, "gen %d step %-20lld\n", c->gen, (long long)c->step_next);
  if (pwrite(c->reached_fd, text, (size_t)n, 0) != n) { /* fixed width: each write covers the last */
    close(c->reached_fd);
    c->reached_open = 0;
  }
}

int ctl_read_reached(const struct ctl *c, int *gen, int64_t *step) {
  char path[1100], text[128];
  long long st;
  snprintf(path, sizeof path, "%s/reached", c->state_dir);
  if (ctl_read_small(path, text, sizeof text) < 0 || sscanf(text, "gen %d step %lld", gen, &st) != 2)
    return 0;
  *step = st;
  return 1;
}

int ctl_take_lock(struct ctl *c, struct pit_err *e) {
  char path[1100];
  snprintf(path, sizeof path, "%s/lock", c->state_dir);
  c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (c->lock_fd < 0)
    return pit_err_errno(e, PIT_EIO, "cannot open '%s'", path);
  if (flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
    char who[64] = "";
    ctl_read_small(path, who, sizeof who);
    who[strcspn(who, "\r\n")] = '\0'; /* the file holds "PID\n" */
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

/* A restarted controller's run seconds continue the run's: the killed one's time 0
 * (the state's t0: the monotonic clock is one for every process of a boot), or,
 * where that cannot be (another boot, an older state, none: a kill before its
 * first write), on from the events file's last record. Before, they began at 0
 * again: a node started by the killed controller and stopped by this one was
 * billed its stop's time less its start's, of two different clocks (DST seed 13,
 * docs/dst.md). */
static void continue_clock(struct ctl *c, struct prev_state *ps, const struct pit_runlog *log) {
  double last = log->t_last;
  ps->log_gens = log->ngens;
  double now = ctl_clock(c);
  if (ps->found && isfinite(ps->t0) && ps->t0 > 0 && ps->t0 <= now && now - ps->t0 >= last)
    c->t0 = ps->t0;
  else if (last > 0)
    c->t0 = now - last;
}

int ctl_next_gen(const struct prev_state *ps) {
  return ps->gen + 1 > ps->log_gens ? ps->gen + 1 : ps->log_gens;
}

/* Nodes the run log holds up that the provider no longer lists (a kill between a
 * node's stop and its stop record) get their stop record now: their bill ends at
 * this restart, not at the run's end (DST seed 801; an overestimate by the time
 * the run had no controller at most). */
/* The run log's entry that holds node id up (started, not stopped; NULL: none):
 * a stop of it is recorded, and an adopted node keeps its start from it. */
static const struct pit_runlog_node *log_up(const struct pit_runlog *log, const char *id) {
  for (int i = log->nnodes - 1; i >= 0; i--)
    if (strcmp(log->nodes[i].id, id) == 0 && isnan(log->nodes[i].t_stop) && !isnan(log->nodes[i].t_start))
      return &log->nodes[i];
  return NULL;
}

static void close_unlisted(struct ctl *c, const struct pit_runlog *log, const struct pit_node *list, int n) {
  struct pit_err e2 = {0};
  for (int i = 0; i < log->nnodes; i++) {
    const struct pit_runlog_node *ln = &log->nodes[i];
    int listed = 0;
    for (int k = 0; k < n && !listed; k++)
      listed = strcmp(list[k].id, ln->id) == 0;
    if (listed || !isnan(ln->t_stop) || isnan(ln->t_start))
      continue;
    struct pit_node nd;
    ctl_node_orphan(&nd, ln->id, ln->itype);
    nd.price_h = ln->price_h;
    warn(c, "node %s is gone, but the run's records did not say so: its bill ends now", ln->id);
    if (ctl_node_record(c, &nd, "stop", &e2) < 0)
      break;
  }
}

/* A node listed by the run's name alone (a cloud tag, no node file here) that this run's records
 * never named may be another live run's, given the same --run: it is neither adopted nor stopped,
 * and the run does not start (a crash between a node's start and its file, the one case where such
 * a node is this run's, is left to `pitstop run --cleanup`, which the message names). Until
 * 2026-11-29 it was stopped as this run's leftover. */
static int foreign_nodes(struct ctl *c, const struct pit_runlog *log, const struct pit_node *list, int n,
                         struct pit_err *e) {
  for (int i = 0; i < n; i++) {
    if (!list[i].name_only)
      continue;
    int named = 0;
    for (int k = 0; k < log->nnodes && !named; k++)
      named = strcmp(log->nodes[k].id, list[i].id) == 0;
    if (named)
      continue; /* this run's: its records started it */
    pit_err_set(e, PIT_ESTATE,
                "run %s: the provider lists node %s (%s) under this run's name, but this run directory's records "
                "never started it: it may belong to another live run given the same name",
                c->o->run, list[i].id, list[i].itype);
    pit_err_hint(e, "give this run another --run NAME; if no other run of that name is live, `pitstop run --cleanup %s "
                    "--checkpoint-dir %s` stops it",
                 c->o->run, c->o->run_dir);
    return PIT_ESTATE;
  }
  return 0;
}

int ctl_reconcile(struct ctl *c, struct prev_state *ps, struct pit_err *e) {
  ctl_read_state(c, ps);
  struct pit_runlog log; /* the run's records so far (none: an empty fold) */
  struct pit_err e2 = {0};
  pit_runlog_init(&log);
  if (pit_runlog_load(&log, c->events_path, &e2) < 0) {
    pit_runlog_release(&log);
    pit_runlog_init(&log);
  }
  continue_clock(c, ps, &log); /* also without a state: a kill before its first write left records */
  if (ps->found) {
    /* the generation this controller starts: the records written here (an adoption's ready, a
     * stop) carry it, not 0 */
    c->gen = ctl_next_gen(ps);
    /* its node records say so from here on (close_unlisted's, an adoption's): the generation before
     * ended by its controller's stop, not a failure of its own, unless that controller ended in an
     * error (a generation that failed past --max-restarts, a fatal one) */
    c->continued_gen = ps->failed ? 0 : c->gen;
    /* the previous controller's workload: kill its process groups */
    for (int i = 0; i < ps->npg; i++)
      if (ps->pgids[i] > 1 && ctl_w_kill_group(c->o->world, ps->pgids[i], 0) == 0) {
        ctl_w_kill_group(c->o->world, ps->pgids[i], SIGKILL);
        warn(c, "stopped the workload (process group %d) a previous controller of run %s left", ps->pgids[i],
             c->o->run);
      }
  }
  struct pit_node *list = NULL;
  int n = 0;
  int rc = c->prov.ops->list(&c->prov, &list, &n, e);
  if (rc == 0)
    close_unlisted(c, &log, list, n);
  if (rc == 0)
    rc = foreign_nodes(c, &log, list, n, e);
  if (rc < 0) {
    free(list);
    pit_runlog_release(&log);
    return rc;
  }
  /* adopt what the wanted membership needs, stop the rest */
  for (int i = 0; i < n; i++) {
    struct pit_node *nd = &list[i];
    int have = 0, want = 0;
    for (int j = 0; j < c->nnodes; j++)
      have += strcmp(c->nodes[j].itype, nd->itype) == 0;
    for (int k = 0; k < c->cur.n; k++)
      want += ctl_node_of(nd, &c->cur.m[k]) ? c->cur.m[k].nodes : 0;
    struct pit_err e2 = {0};
    /* adopted: healthy, and cleared of what the killed controller's workload left there */
    if (nd->state == PIT_NODE_READY && have < want &&
        c->prov.ops->health(&c->prov, nd, &e2) == 0 && (!c->prov.ops->clear || c->prov.ops->clear(&c->prov, nd, &e2) == 0) &&
        c->nnodes < MAX_NODES) {
      /* its start as the run log holds it: it is billed from there (the one accounting), and
       * the report's row said the adoption instead (a 113 s bill on a row starting at 33.3 s of
       * the run, DCGAN trial 2026-11-28); the adoption's time where the log lost it */
      const struct pit_runlog_node *ln = log_up(&log, nd->id);
      c->nodes[c->nnodes] = *nd;
      c->nodes[c->nnodes].t_start = ln && ln->t_start <= now_t(c) ? ln->t_start : now_t(c);
      c->nodes[c->nnodes].t_ready = ln && !isnan(ln->t_ready) && ln->t_ready <= now_t(c) ? ln->t_ready : now_t(c);
      c->nodes[c->nnodes].t_stop = NAN;
      c->nnodes++;
      warn(c, "adopted node %s (%s) of a previous controller", nd->id, nd->itype);
      ctl_node_record(c, nd, "ready", e);
    } else {
      if (c->prov.ops->stop(&c->prov, nd, &e2) < 0) {
        warn(c, "%s", e2.msg);
      } else {
        warn(c, "stopped node %s a previous controller left", nd->id);
        /* its stop recorded where the run log holds it up: before, the run log billed it to the
         * run's end (DST seed 67) */
        if (log_up(&log, nd->id))
          ctl_node_record(c, nd, "stop", e);
      }
    }
  }
  free(list);
  pit_runlog_release(&log);
  return 0;
}

/* A test hook (PITSTOP_TEST_KILL=POINT): the controller SIGKILLs itself at
 * POINT, as a kill at that moment would; tests/control/run_finish.sh. */
void ctl_test_kill_point(const char *point) {
  const char *v = getenv("PITSTOP_TEST_KILL");
  if (v && strcmp(v, point) == 0)
    raise(SIGKILL);
}

void ctl_test_kill_at(const char *point, int64_t step) {
  const char *v = getenv("PITSTOP_TEST_KILL");
  size_t n = strlen(point);
  if (v && strncmp(v, point, n) == 0 && v[n] == ':' && step >= strtoll(v + n + 1, NULL, 10))
    raise(SIGKILL);
}

/* --checkpoint-mirror: the checkpoint just recorded copied there (from its held
 * link when there is one: the workload may rotate its path away). A copy that
 * fails is said once; the run goes on without it. */
void ctl_mirror_ckpt(struct ctl *c, const char *path, int64_t step) {
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
void ctl_events_scan(const struct ctl *c, int64_t *next, int *done) {
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
int ctl_finished_before(struct ctl *c, struct pit_err *e) {
  struct prev_state ps;
  ctl_read_state(c, &ps);
  int64_t next;
  int done;
  ctl_events_scan(c, &next, &done);
  if (!(ps.found && ps.done) && !done)
    return 0;
  struct pit_runlog log;
  struct pit_err e3 = {0};
  pit_runlog_init(&log);
  if (pit_runlog_load(&log, c->events_path, &e3) < 0) {
    pit_runlog_release(&log);
    pit_runlog_init(&log);
  }
  continue_clock(c, &ps, &log);
  for (int i = 0; i < ps.npg; i++)
    if (ps.pgids[i] > 1 && ctl_w_kill_group(c->o->world, ps.pgids[i], 0) == 0)
      ctl_w_kill_group(c->o->world, ps.pgids[i], SIGKILL);
  struct pit_node *list = NULL;
  int n = 0;
  int rc = c->prov.ops->list(&c->prov, &list, &n, e);
  if (rc == 0) /* a kill between the last node's stop and its record (DST seed 16934) */
    close_unlisted(c, &log, list, n);
  for (int i = 0; rc == 0 && i < n; i++) {
    struct pit_err e2 = {0};
    if (c->prov.ops->stop(&c->prov, &list[i], &e2) < 0) {
      warn(c, "%s", e2.msg);
    } else {
      warn(c, "stopped node %s the finished run left", list[i].id);
      if (log_up(&log, list[i].id))
        ctl_node_record(c, &list[i], "stop", e);
    }
  }
  pit_runlog_release(&log);
  free(list);
  if (rc < 0)
    return rc;
  c->gen = ps.found ? ps.gen : 0;
  c->step_safe = ps.found ? ps.step : 0;
  snprintf(c->ckpt, sizeof c->ckpt, "%s", ps.ckpt);
  c->finished = 1;
  if ((rc = ctl_write_state(c, e)) < 0)
    return rc;
  c->step_next = next;
  c->res->already_done = 1;
  warn(c, "run %s is already done (%lld steps; its records: %s): nothing is run again", c->o->run, (long long)next,
       c->events_path);
  return 1;
}

/* A restarted controller of a scheduled run starts on the schedule's membership
 * at the step it resumes from; of a cost/time run, on the membership the state
 * says it last ran (ctl_resume_membership) (not the initial one, which the policy would
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

void ctl_resume_membership(struct ctl *c) {
  struct prev_state ps;
  ctl_read_state(c, &ps);
  int64_t step = ps.step, ev;
  char tmp[1100];
  if (ps.found && ctl_events_last_ckpt(c, &ev, tmp, sizeof tmp) && ev > step)
    step = ev;
  if (!ps.found || sched_membership(c, step, &c->cur))
    return;
  /* cost/time chose what the previous controller ran (at the start from the store, or at a decision
   * point): not --nodes again, which they would measure and leave again */
  enum pit_policy_kind k = c->o->policy.kind;
  if ((k == PIT_POLICY_COST || k == PIT_POLICY_TIME) && !c->zn.on && ps.have_m)
    c->cur = ps.m;
}

/* The workload's checkpoint path is a file of this machine: the local
 * provider's nodes are this machine; another provider's only where the file is here. */
int ctl_ckpt_here(const struct ctl *c, const char *path) {
  return strcmp(c->o->provider, "local") == 0 || access(path, F_OK) == 0;
}

/* The checkpoint the next generation resumes from (resume, c->ckpt, c->step_safe):
 * the wanted one when it checks; else the newest older one that does (beside
 * it, held, or the mirror's copy), each damaged file said with its reason; none
 * left: the job starts again from step 0 (--on-lost-checkpoints restart) or the
 * run ends with an error naming them. 0, or the error. */
int ctl_choose_resume(struct ctl *c, char *resume, size_t nres, struct pit_err *e) {
  if (!resume[0])
    return 0;
  struct ctl_resume_in in = {resume,         c->step_safe,     c->state_dir, c->ckpt_dir, c->o->ckpt_mirror,
                             c->events_path, c->o->ckpt_check, ctl_ckpt_here(c, resume)};
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
      ctl_hold_ckpt(c, r->step);
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
  if ((rc = ctl_write_state(c, e)) == 0 && c->ckpt_held[0])
    ctl_unhold_older(c);
  /* the steps done again run on the membership the schedule gave them (the same sums) */
  struct pit_membership m;
  if (rc == 0 && sched_membership(c, c->step_safe, &m) && !pit_membership_equal(&m, &c->cur))
    rc = ctl_reshape_market(c, &m, "the schedule's membership at the checkpoint resumed from", e);
  return rc < 0 ? rc : 0;
}

/* Where --cleanup RUN finds a run started with --checkpoint-dir elsewhere:
 * ${XDG_STATE_HOME:-$HOME/.local/state}/pitstop/runs/RUN, a symbolic link to
 * the run directory (absolute), made when the run starts. 0 and buf set, or -1. */
int ctl_registry_path(const char *run, char *buf, size_t n) {
  const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  int k = x && *x ? snprintf(buf, n, "%s/pitstop/runs/%s", x, run)
          : home && *home ? snprintf(buf, n, "%s/.local/state/pitstop/runs/%s", home, run) : -1;
  return k < 0 || (size_t)k >= n ? -1 : 0;
}

void ctl_registry_note(const struct ctl *c) {
  char link[1200], dir[1200], target[PATH_MAX], tmp[1300];
  if (ctl_registry_path(c->o->run, link, sizeof link) < 0 || !realpath(c->state_dir, target))
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
