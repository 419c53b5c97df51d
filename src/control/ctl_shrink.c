/* ctl_shrink.c — a removal carried out in place: when a decision only removes
 * nodes of the running generation, the ranks on the nodes that stay go on in
 * their processes from the checkpoint at the agreed step, and the others leave.
 * No mpirun exits, none starts, no rank initialises MPI again: the switch costs
 * the checkpoint and the survivors' set-up (about 5 ms for the CNN), where a
 * relaunch cost about 0.3 s here (docs/run.md "In-place shrink").
 *
 * The protocol (pitstop train's side: src/train/shrink.c, src/cli/cmd_train.c):
 *  1. before it asks for the stop (SIGUSR1), the controller writes RUN_DIR/shrink
 *     (atomically): "size=N keep=R,R,..." — the world it is for and the ranks
 *     that stay, those of the nodes ctl_reshape would keep;
 *  2. the workload stops at an agreed step as for any resize (checkpoint, end
 *     record "stopped"); rank 0 reads the request and broadcasts it; the world
 *     is split; the leaving ranks exit 0 without MPI_Finalize (mpirun was told
 *     to allow it: ctl_launch_shrinkable); the others resume from the checkpoint
 *     and print a new init record;
 *  3. that init record, after the end record, is the switch: the stopped
 *     generation is entered as resized (in place), the leaving nodes are stopped
 *     once the provider sees no process on them (busy), the next generation
 *     begins on the same processes with its own log.
 * A workload that does not take the request simply exits after its end record,
 * and the generation ends as any resize: the next one is launched.
 *
 * Invariants: offered only where ctl_launch_shrinkable holds (so never in the
 * deterministic simulation, whose world has no such provider), never for a
 * reclaim, a change of market or zone, or a membership that needs a node
 * started; the request file exists only while a request is pending (removed at
 * every generation's start and at the switch, and withdrawn when the user's stop
 * or a reclaim notice comes first: a workload that read it already still goes on
 * in place, and the switch is taken as it comes). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "control/ctl_impl.h"

static void request_path(const struct ctl *c, char *buf, size_t n) { snprintf(buf, n, "%s/shrink", c->state_dir); }

void ctl_shrink_withdraw(struct ctl *c) {
  char path[1100];
  request_path(c, path, sizeof path);
  unlink(path); /* none there (ENOENT): nothing to withdraw */
}

void ctl_shrink_clear(struct ctl *c) {
  ctl_shrink_withdraw(c);
  c->shrink_pending = 0;
}

void ctl_shrink_offer(struct ctl *c, const struct pit_choice *ch, int node) {
  if (node >= 0 || c->reclaim_stop || c->spot.on || c->zn.on || ch->act != PIT_ACT_RESIZE ||
      !ctl_launch_shrinkable(c->o, &c->prov) || c->nnodes != c->gen_nnodes)
    return;
  int claimed[MAX_NODES], need[PIT_MEMBERS_MAX], kept = 0;
  ctl_claim(c, &ch->to, claimed, need);
  for (int k = 0; k < ch->to.n; k++)
    if (need[k] > 0)
      return; /* a node to start: the next generation is launched */
  for (int i = 0; i < c->nnodes; i++) {
    kept += claimed[i];
    if (!claimed[i] && c->prov.ops->busy(&c->prov, &c->nodes[i]) < 0)
      return; /* the provider cannot tell when the leaving ranks are gone */
  }
  if (kept == 0 || kept == c->nnodes)
    return;
  /* ranks in node order, each node's slots in turn (the launch's app contexts) */
  char keep[3072], text[4096];
  size_t at = 0;
  int rank = 0;
  for (int i = 0; i < c->nnodes; i++)
    for (int s = 0; s < c->nodes[i].slots; s++, rank++)
      if (claimed[i] && at < sizeof keep)
        at += (size_t)snprintf(keep + at, sizeof keep - at, "%s%d", at ? "," : "", rank);
  int n = snprintf(text, sizeof text, "size=%d keep=%s\n", rank, keep);
  if (at >= sizeof keep || n < 0 || (size_t)n >= sizeof text)
    return;
  char path[1100];
  request_path(c, path, sizeof path);
  struct pit_err e2 = {0};
  if (pit_file_write_atomic(path, text, (size_t)n, &e2) < 0) {
    warn(c, "the resize is carried out by a relaunch: %s", e2.msg);
    return;
  }
  c->shrink_pending = 1;
}

int ctl_shrink_due(const struct ctl *c, const struct pit_record *r) {
  return c->shrink_pending && r->type == PIT_REC_INIT && strcmp(c->end_status, "stopped") == 0;
}

/* Waits (up to 2 s) until the provider sees no process on n: the leaving rank exits right after
 * the split, before the ranks that stay set up again, so this is normally at once. */
static void wait_gone(struct ctl *c, const struct pit_node *n) {
  double t0 = now_t(c);
  while (c->prov.ops->busy(&c->prov, n) > 0 && now_t(c) - t0 < 2.0)
    usleep(2000);
}

int ctl_shrink_switch(struct ctl *c, struct pit_err *e) {
  struct pit_membership want = c->pending.to;
  int claimed[MAX_NODES], need[PIT_MEMBERS_MAX];
  ctl_claim(c, &want, claimed, need);
  ctl_shrink_clear(c);
  ctl_gen_entry(c, "resized");
  struct pit_run_gen *ge = &c->res->gens[c->res->ngens - 1];
  double t = now_t(c);
  ge->exit_s = t - c->t_stop_req;
  ge->in_place = 1;
  c->gen++; /* the nodes stop in the next generation, as after a relaunch's exit (run_resized) */
  int rc = 0;
  for (int i = c->nnodes - 1; i >= 0 && rc == 0; i--)
    if (!claimed[i]) {
      wait_gone(c, &c->nodes[i]);
      rc = ctl_stop_node_at(c, i, "stop", e);
    }
  ge->nodes_s = now_t(c) - t;
  if (rc < 0)
    return rc;
  ctl_set_membership(c, &want);
  /* the same processes, the next generation's log */
  struct ctl_gen *g = c->g;
  if (g->logfd >= 0)
    close(g->logfd);
  snprintf(g->log, sizeof g->log, "%s/gen-%d.log", c->state_dir, c->gen);
  unlink(g->log);
  g->logfd = open(g->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ctl_gen_fields_reset(c);
  c->gen_in_place = 1;
  c->gen_nnodes = c->nnodes;
  warn(c, "generation %d goes on in place from the checkpoint at step %lld, %.3f s after the decision: the ranks "
          "of the nodes removed left, the others set up again",
       c->gen, (long long)c->step_safe, ge->exit_s);
  return ctl_write_state(c, e);
}
