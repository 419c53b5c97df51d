/* ctl_loop.c — one generation: launched on the live nodes, then a loop that waits
 * on the workload's output, feeds its lines to the handlers (ctl_handlers.c),
 * polls the provider about the nodes, checks the processes and the time-outs, and
 * says how the generation ended. The loop handles no record itself.
 *
 * Invariants:
 *  - the loop's dealings with the outside are few and named: now_t (the clock),
 *    poll/usleep (the wait), feed (the workload's output), ctl_w_poll and
 *    ctl_w_kill_gen (its processes), provider_events (the provider's poll); each
 *    goes through the world seam (world.h) when the run has a world;
 *  - every generation field of struct ctl is reset by gen_reset before launch;
 *  - a failure (a non-zero exit, a signal, no iteration within the start time-out,
 *    a stop request not honoured, a node gone) kills the workload and reads its
 *    last output before the generation ends; after the end record the records
 *    decide, not the launchers' exit codes. */
#define _GNU_SOURCE
#include <math.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "control/ctl_impl.h"
#include "control/said.h"

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
    if (c->nodes[i].spot) { /* spot capacity is away from now: the spot policy chooses the replacement's market */
      ctl_zones_spot_down(c, c->nodes[i].zone, 1);
      ctl_spot_down(&c->spot, now_t(c), ctl_spot_retry_s(c));
    }
    c->reclaim_stop = 1;
    if (c->shrink_pending)
      ctl_shrink_withdraw(c); /* the node goes: the next generation is launched without it */
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
    int rc = ctl_request_stop(c, &ch, "reclaim", c->o->launcher == PIT_LAUNCH_PER_NODE ? i : -1, e);
    if (rc < 0)
      return rc;
  }
  return 0;
}

struct out_line {
  struct ctl *c;
  struct ctl_proc *p;
};

/* One line of a workload process's stdout: into the generation's log, then to
 * the progress watcher, the parser and the snapshot watcher. */
static int on_out_line(void *ctx, const char *s, size_t n, struct pit_err *e) {
  struct ctl *c = ((struct out_line *)ctx)->c;
  struct ctl_proc *p = ((struct out_line *)ctx)->p;
  int rc;
  ctl_proc_log(c->g, p, s, n, 0);
  c->out_lines++;
  c->t_last_out = now_t(c);
  /* a workload that speaks the protocol (PITSTOP lines, JSON records) stops on SIGUSR1 */
  c->line_protocol = (n >= 8 && memcmp(s, "PITSTOP ", 8) == 0) || (n && s[0] == '{');
  if (c->line_protocol)
    c->resizable = c->gen_protocol = c->run_protocol = 1;
  if (p->node <= 0)
    c->gen_heard0 = 1;
  if (c->gen_protocol && !c->line_protocol) {
    /* its records say it all; a progress print beside them would count its steps twice */
  } else if (!c->line_protocol && !c->gen_heard0) {
    /* another node's print before node 0's first line: whether the workload speaks the protocol
     * is node 0's to say (read as a script without records, it made the controller write its own
     * init record beside the workload's); logged only */
  } else if (c->have_prog && ctl_progress_shape(&c->prog, s, n)) { /* a progress line: timed by its arrival */
    if ((rc = ctl_on_progress_line(c, s, n, e)) < 0)
      return rc;
  } else if ((rc = pit_parser_line(c->parser, s, n, e)) < 0) {
    return rc;
  }
  /* it says it resumes at the job's last epoch: an orphan of a killed controller (or a generation
   * whose last lines were lost) finished the job unseen, and it will print no progress now */
  int64_t at = c->have_snap && c->gen_iters == 0 && c->o->job_epochs > 0 ? ctl_snap_resume_epoch(&c->snap, s, n) : -1;
  if (at >= c->o->job_epochs && c->total_steps > 0 && c->step_safe < c->total_steps &&
      (rc = ctl_unseen_steps(c, c->total_steps, now_t(c), -1, e)) < 0)
    return rc;
  int64_t epoch;
  if (c->have_snap && (rc = ctl_snap_line(&c->snap, s, n, now_t(c), &epoch)) != 0) {
    if ((rc = ctl_on_snapshot(c, epoch, e)) < 0)
      return rc;
  } else if (c->have_snap && epoch >= 0 && c->have_prog) { /* the watched file says when; the epoch is done */
    c->in_snapshot = 1;
    rc = ctl_progress_close(&c->prog, epoch, now_t(c), ctl_on_progress, c, e);
    c->in_snapshot = 0;
    if (rc < 0 || (rc = ctl_decide(c, e)) < 0)
      return rc;
  }
  return 0;
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
  struct out_line x = {c, p};
  return ctl_proc_drain(&p->out, &p->fd, final, on_out_line, &x, e);
}

/* The exit status of the first process of the generation that failed (0: none). */
static int bad_exit(const struct ctl *c) {
  for (int i = 0; i < c->g->nproc; i++)
    if (c->g->proc[i].exited && c->g->proc[i].status != 0)
      return c->g->proc[i].status;
  return 0;
}

/* What stops the run: the user's signal, else the run's own measured stop (ctl_measure.c). */
static const struct pit_run_stop *stop_src(const struct ctl *c) {
  return ctl_stop_signal(c->o->stop) ? c->o->stop : c->measured.sig ? &c->measured : NULL;
}

/* The user's stop, one step (stop.c): a protocol workload past its first
 * iteration is asked for an agreed checkpoint, anything else gets SIGTERM;
 * killed after the grace or at a second signal. 1 while a stop is under way. */
static int user_stop(struct ctl *c) {
  char msg[512];
  int agree = (c->resizable || !c->o->cmd) && c->gen_iters > 0;
  if (ctl_stop_step(&c->stop, stop_src(c), c->o->grace_s, c->g, now_t(c), agree, c->stop_requested, msg, sizeof msg))
    warn(c, "%s", msg);
  return c->stop.how != CTL_STOP_NONE;
}

/* The generation's fields reset for a new launch (its log started afresh). */
static void gen_reset(struct ctl *c) {
  ctl_gen_release(c->g);
  snprintf(c->g->log, sizeof c->g->log, "%s/gen-%d.log", c->state_dir, c->gen);
  unlink(c->g->log);
  c->gen_in_place = 0;
  ctl_gen_fields_reset(c);
}

void ctl_gen_fields_reset(struct ctl *c) {
  ctl_shrink_clear(c);
  c->gen_have_offset = 0;
  c->gen_iters = 0;
  c->gen_fail_sig = 0;
  c->gen_link_lost = 0;
  ctl_obs_gen(&c->obs);
  c->gen_step0 = c->step_safe;
  c->step_next = c->step_safe;
  c->stop_requested = 0;
  c->reclaim_stop = 0;
  c->restart_pending = c->restart_refused = c->restart_stopping = 0;
  c->gen_init = 0;
  c->gen_protocol = c->run_protocol;
  c->gen_heard0 = 0;
  c->snap_step = -1;
  if (c->have_snap)
    ctl_snap_gen(&c->snap);
  c->end_status[0] = 0;
  c->t_end = 0;
  c->t_launch = now_t(c);
  c->t_last_out = c->t_launch;
  if (c->have_prog)
    ctl_progress_gen(&c->prog, c->t_launch);
  c->t_first_iter = NAN;
  c->init_s = NAN;
  memset(&c->pending, 0, sizeof c->pending);
}

/* The workload launched on the live nodes (resume: the checkpoint it resumes
 * from, "" for none) with a parser for its output: 0, or < 0 with why set. */
static int gen_launch(struct ctl *c, const char *resume, char *why, size_t nwhy, struct pit_err *e) {
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
  int rc = pit_parser_new(&c->parser, PIT_PARSE_AUTO, c->o->run, 1, "the workload's output", ctl_on_record,
                          ctl_on_parse_warn, c, e);
  if (rc < 0) {
    snprintf(why, nwhy, "%s", e->msg);
    return rc;
  }
  c->gen_nnodes = c->nnodes;
  if ((rc = ctl_w_launch(c->o->world, &L, c->g, e)) < 0) {
    pit_parser_free(c->parser);
    c->parser = NULL;
    snprintf(why, nwhy, "%s", e->msg);
    return rc;
  }
  return 0;
}

/* What one pass of the generation's loop found. */
struct gen_pass {
  int failed;   /* 1: the generation failed (why says how); 2: the controller's own error: stop */
  int stopping; /* a stop is under way: an exit is waited for, not a failure */
  int alive;    /* a process of the workload, or one of its pipes, is still there */
  int bad;      /* the first process that exited non-zero (-1: none) */
};

/* Waits up to 200 ms for the workload's output and feeds what came. */
static void gen_read(struct ctl *c, struct gen_pass *p, char *why, size_t nwhy, struct pit_err *e) {
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
  if (c->o->world) { /* its clock advances, its workload prints what is due: then read without waiting */
    c->o->world->ops->wait(c->o->world, c->g, np ? 0.2 : 0.02);
    if (np)
      poll(pf, (nfds_t)np, 0);
  } else if (np) {
    poll(pf, (nfds_t)np, 200);
  } else {
    usleep(20000);
  }
  for (int k = 0; k < np && !p->failed; k++)
    if (pf[k].revents && feed(c, &c->g->proc[map[k]], 0, e) < 0) {
      snprintf(why, nwhy, "%s", e->msg);
      p->failed = 2; /* the controller's own error: stop */
    }
}

/* The user's stop, a snapshot file settled, a resize by restart past its grace,
 * the processes' exits, and the provider's news about the nodes. */
static void gen_watch(struct ctl *c, struct gen_pass *p, char *why, size_t nwhy, struct pit_err *e) {
  int rc;
  p->stopping = user_stop(c);
  if (p->stopping && c->shrink_pending)
    ctl_shrink_withdraw(c); /* the user's stop ends the run: nothing goes on in place if not begun */
  if (c->have_snap && !p->failed && ctl_snap_poll(&c->snap, now_t(c), 0.5) && (rc = ctl_on_snapshot(c, -1, e)) < 0) {
    snprintf(why, nwhy, "%s", e->msg);
    p->failed = 2;
  }
  if (c->restart_stopping) { /* killed after the grace */
    p->stopping = 1;
    if (now_t(c) - c->t_stop_req > c->o->grace_s)
      ctl_w_kill_gen(c->o->world, c->g, 0);
  }
  for (int i = 0; i < c->g->nproc; i++) {
    struct ctl_proc *q = &c->g->proc[i];
    ctl_w_poll(c->o->world, q);
    if (!q->exited || q->fd >= 0 || q->efd >= 0)
      p->alive = 1;
    if (q->exited && q->status != 0 && p->bad < 0 && !p->stopping) /* after a stop signal: waited for, not failed */
      p->bad = i;
  }
  if (!p->failed && !c->end_status[0] && (rc = provider_events(c, why, nwhy, e)) != 0) {
    if (rc < 0)
      snprintf(why, nwhy, "%s", e->msg);
    p->failed = rc < 0 ? 2 : 1;
  }
}

/* Seconds a torchrun that said a worker failed is given to exit on its own (its report) */
#define WORKER_FAILED_GRACE_S 30.0

/* The generation judged at run seconds t: the end record's aftermath, a failed
 * process, the start and stop time-outs. */
static void gen_judge(struct ctl *c, struct gen_pass *p, double t, char *why, size_t nwhy) {
  if (c->end_status[0] && c->t_end == 0)
    c->t_end = t;
  /* after the end record the records decide, not launcher exit codes (a torchrun agent
   * exits non-zero after a stop); launchers still there 10 s later are killed */
  if (!p->failed && c->end_status[0]) {
    if (p->alive && t - c->t_end > 10) {
      ctl_w_kill_gen(c->o->world, c->g, 2.0);
      p->alive = 0;
    }
    p->bad = -1;
  }
  if (!p->failed && p->bad >= 0) {
    struct ctl_proc *q = &c->g->proc[p->bad];
    c->gen_fail_sig = q->status > 128 && !(q->status == 255 && q->rnode.host[0]) ? q->status - 128 : 0;
    c->gen_link_lost = q->status == 255 && q->rnode.host[0];
    if (c->gen_link_lost) /* the remote shell reports 128 + a signal: 255 is ssh's own */
      snprintf(why, nwhy, "the ssh session to %s (node %s) ended with 255: the host went silent or unreachable",
               q->rnode.host, q->label);
    else if (q->status > 128)
      snprintf(why, nwhy, "the workload%s was killed by signal %d", q->node >= 0 ? " on a node" : "",
               q->status - 128);
    else
      snprintf(why, nwhy, "the workload exited with status %d", q->status);
    p->failed = 1;
  }
  /* a torchrun left no restarts of its own that said a worker failed waits at its exit barrier (300 s)
   * for the other nodes' agents; their workers may hang (gloo connecting to an address nobody
   * listens at) rather than fail: after WORKER_FAILED_GRACE_S the generation is failed here, not at
   * the start or hang time-out (a trial over two ssh hosts waited 120 s per generation) */
  for (int i = 0; !p->failed && !p->stopping && !c->end_status[0] && c->o->cmd && i < c->g->nproc; i++) {
    struct ctl_proc *q = &c->g->proc[i];
    if (!q->worker_failed || q->exited || ctl_said_torchrun_restarts(c->o->cmd) != 0)
      continue;
    if (q->t_worker_failed <= 0)
      q->t_worker_failed = t;
    else if (t - q->t_worker_failed > WORKER_FAILED_GRACE_S) {
      snprintf(why, nwhy,
               "torchrun on %s said a worker failed and was still there %.0f s later, waiting for the other "
               "nodes at its exit barrier",
               q->node >= 0 ? q->label : "the head", t - q->t_worker_failed);
      p->failed = 1;
    }
  }
  if (!p->failed && !p->stopping && c->gen_iters == 0 && t - c->t_launch > c->o->start_timeout_s) {
    snprintf(why, nwhy, "the workload sent no iteration within %.0f s of its start", c->o->start_timeout_s);
    p->failed = 1;
  }
  /* a workload that hangs between its steps (no request waits on it) prints nothing: before, the
   * controller waited for it for ever (DST seed 6, docs/dst.md) */
  double med = ctl_recent_median(c), hang_s = c->o->hang_timeout_s + 100 * (isfinite(med) ? med : 0);
  if (!p->failed && !p->stopping && !c->stop_requested && c->gen_iters > 0 && c->o->hang_timeout_s > 0 &&
      t - c->t_last_out > hang_s) {
    snprintf(why, nwhy, "the workload printed nothing for %.0f s (hung: the limit is %.0f s and 100 of its steps)",
             t - c->t_last_out, c->o->hang_timeout_s);
    p->failed = 1;
  }
  if (!p->failed && !p->stopping && c->stop_requested && t - c->t_stop_req > c->o->stop_timeout_s) {
    snprintf(why, nwhy, "the workload did not stop within %.0f s of the request", c->o->stop_timeout_s);
    p->failed = 1;
  }
}

/* How the generation ended, once its loop is left (failed: gen_pass's). */
static enum gen_end gen_end(struct ctl *c, int failed, char *why, size_t nwhy, struct pit_err *e) {
  ctl_shrink_clear(c); /* a request the workload did not take (it finished first, or failed) goes with it */
  pit_parser_finish(c->parser, e);
  pit_parser_free(c->parser);
  c->parser = NULL;
  if (!failed && c->have_prog && c->stop.how == CTL_STOP_NONE && bad_exit(c) == 0 &&
      ctl_progress_end(&c->prog, now_t(c), ctl_on_progress, c, e) < 0)
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
  if (c->gen_protocol && !c->end_status[0]) {
    /* a protocol workload ends with its end record: an exit 0 without one is no job done (before,
     * the run said done with the steps after it missing: DST seed 65, docs/dst.md) */
    snprintf(why, nwhy, "the workload exited 0 without its end record, after step %lld",
             (long long)c->step_next - 1);
    return GEN_FAILED;
  }
  return GEN_DONE;
}

/* One generation, from launch to its end: the loop reads the workload's output
 * (gen_read), watches its processes, the user's stop and the provider
 * (gen_watch), and judges it on the clock (gen_judge) until it is gone or failed. */
enum gen_end ctl_run_generation(struct ctl *c, const char *resume, char *why, size_t nwhy,
                                struct pit_err *e) {
  gen_reset(c);
  if (ctl_stop_signal(stop_src(c))) { /* stopped before this generation started: nothing launched */
    user_stop(c);
    return GEN_INTERRUPTED;
  }
  if (gen_launch(c, resume, why, nwhy, e) < 0)
    return GEN_FAILED;
  ctl_write_state(c, e);
  ctl_status(c, "starting", 1);
  int failed = 0;
  why[0] = 0;
  for (;;) {
    struct gen_pass p = {.bad = -1};
    gen_read(c, &p, why, nwhy, e);
    gen_watch(c, &p, why, nwhy, e);
    gen_judge(c, &p, now_t(c), why, nwhy);
    if (p.failed) {
      failed = p.failed;
      ctl_w_kill_gen(c->o->world, c->g, 2.0);
      for (int i = 0; i < c->g->nproc; i++)
        if (c->g->proc[i].fd >= 0 || c->g->proc[i].efd >= 0)
          feed(c, &c->g->proc[i], 1, e);
      break;
    }
    if (!p.alive) {
      for (int i = 0; i < c->g->nproc; i++)
        feed(c, &c->g->proc[i], 1, e);
      break;
    }
    ctl_status(c, c->stop_requested ? "resizing" : "running", 0);
  }
  return gen_end(c, failed, why, nwhy, e);
}
