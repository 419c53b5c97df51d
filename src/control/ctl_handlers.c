/* ctl_handlers.c — what the generation loop (ctl_loop.c) dispatches: each record
 * the workload's output gives (through the parser), its parser's warnings, a
 * snapshot seen (resizable by restart), and the progress lines timed by arrival.
 *
 * Invariants:
 *  - a record gets the run id, the controller's generation and its clock (run
 *    seconds, never ahead of now) before anything else reads it;
 *  - iteration records are held until a checkpoint covers them; a checkpoint
 *    record releases them, is flushed, and only then does the state name it;
 *  - the init record's config names the generation's membership (bare) and its
 *    node count, so the store knows what each run ran on. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/ctl_impl.h"

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
  if (!(c->total_steps > 0) && per > 0 && !c->len_said) { /* a log that gives the epoch's length alone */
    c->len_said = 1;
    warn(c, "the job's length is not known: the workload's log gives %lld steps an epoch but not how many epochs, "
            "so no time or cost left is shown (give pitstop run --epochs N, or --samples S)",
         (long long)per);
  }
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
  cJSON *mj = pit_membership_cjson(&bare); /* encoded once, into the workload's config */
  if (!mj) {
    cJSON_Delete(o);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  cJSON_DeleteItemFromObjectCaseSensitive(o, "membership");
  cJSON_AddItemToObject(o, "membership", mj);
  if (c->gen_in_place) /* no launch of its own: its start is no membership's start (replay.c) */
    cJSON_AddTrueToObject(o, "in_place");
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
  char key[4096]; /* the command itself: a later run of it starts from what this one measured (--db) */
  if (c->o->cmd && !cJSON_GetObjectItemCaseSensitive(o, "command") && pit_command_key(c->o->cmd, key, sizeof key) == 0)
    cJSON_AddStringToObject(o, "command", key);
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
int ctl_measured_enough(const char *detail) {
  cJSON *d = detail ? cJSON_Parse(detail) : NULL;
  const cJSON *why = cJSON_GetObjectItemCaseSensitive(d, "reason");
  int yes = cJSON_IsString(why) && (strcmp(why->valuestring, "steady") == 0 || strcmp(why->valuestring, "cap") == 0);
  cJSON_Delete(d);
  return yes;
}

/* A command whose log has no init line: the controller's own init record
 * before its first iteration (launch → that iteration), so the stored run
 * keeps its membership, type, job length and script (tag_membership). */
static int own_init(struct ctl *c, double now, struct pit_err *e) {
  struct pit_record r;
  ctl_base_record(c, &r, PIT_REC_INIT);
  r.t = now;
  r.init_s = now - c->t_launch;
  r.ranks = 1;
  r.config = strdup("{}");
  int rc = r.config ? on_init(c, &r, e) : pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (rc == 0)
    rc = tag_membership(c, &r, e);
  if (rc == 0)
    rc = ctl_out_record(c, &r, e);
  c->gen_init = 1;
  if (isnan(c->init_s))
    c->init_s = r.init_s;
  pit_record_release(&r);
  return rc;
}

/* A generation resumed by restart at r->step, past the last snapshot the controller saw
 * (step_safe): the steps between were done and saved by a workload it no longer heard (a killed
 * controller's orphan before the next controller stopped it; a workload that went on after its
 * stop signal while its lines were lost). The script's own snapshot covers them, so they are
 * recorded at once, without a step time (none was measured), and the snapshot is where a restart
 * resumes. Before (2026-11-30, the DDP example over ssh) they were never recorded. */
int ctl_unseen_steps(struct ctl *c, int64_t step, double t, int64_t batch, struct pit_err *e) {
  int64_t from = c->step_safe, n = step - from;
  warn(c, "generation %d resumed at step %lld, past the last snapshot this controller saw (step %lld): the %lld "
          "step%s between were done and saved unseen (recorded without a time)",
       c->gen, (long long)step, (long long)from, (long long)n, n == 1 ? "" : "s");
  int rc = 0;
  for (int64_t s = from; s < step && rc == 0; s++) {
    struct pit_record u;
    pit_record_init(&u);
    u.type = PIT_REC_ITER;
    snprintf(u.run, sizeof u.run, "%s", c->o->run);
    u.gen = c->gen;
    u.t = t;
    u.step = s;
    u.batch = batch;
    rc = ctl_out_record(c, &u, e);
  }
  if (rc == 0)
    rc = ctl_out_flush(c, e);
  c->step_safe = c->step_next = step;
  if (rc == 0)
    ctl_note_reached(c);
  return rc;
}

int ctl_on_record(void *ctx, const struct pit_record *in, struct pit_err *e) {
  struct ctl *c = ctx;
  int rc = 0;
  if (ctl_shrink_due(c, in) && (rc = ctl_shrink_switch(c, e)) < 0) /* the next generation's first record */
    return rc;
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
    if (c->o->resume_by_restart && c->gen_iters == 0 && r.step > c->step_safe &&
        (rc = ctl_unseen_steps(c, r.step, r.t, r.batch, e)) < 0)
      break;
    if (c->o->resume_by_restart && r.step >= 0 && r.step < c->step_safe) { /* redone, kept already */
      if (c->gen_iters++ == 0)
        c->t_first_iter = r.t;
      break;
    }
    if (r.step >= 0 && r.step != c->step_next && c->gen_iters == 0)
      c->gen_step0 = r.step;
    if (r.step >= 0) {
      int further = r.step + 1 > c->step_next; /* a step not reached before: RUN_DIR/reached moves on */
      c->step_next = r.step + 1;
      if (further)
        ctl_note_reached(c);
    }
    /* the first iteration's time as its record says (r.t, at most now), not when it was read: the
     * controller may read a record late under load, and the run log (its replay) has only r.t */
    if (c->gen_iters++ == 0)
      c->t_first_iter = r.t;
    if (isnan(c->first_iter_t))
      c->first_iter_t = r.t;
    if (r.step_s > 0 && !(c->t_is_run && c->prog.span_rest > 0)) { /* a span of steps timed by one
                                                                      line is one measurement */
      c->recent[c->nrecent++ % RECENT] = r.step_s;
      if (r.batch > 0)
        c->recent_batch = r.batch;
    }
    rc = ctl_hold(c, &r, e);
    struct pit_membership bare; /* spot and on-demand nodes of a type compute alike */
    pit_membership_bare(&c->cur, &bare);
    if (rc == 0)
      rc = ctl_obs_iter(&c->obs, &bare, &r, e);
    if (rc == 0)
      rc = ctl_decide(c, e);
    if (rc == 0)
      rc = ctl_measure_iter(c, e);
    break;
  case PIT_REC_CHECKPOINT:
    if (!c->line_protocol) /* a script's own "snapshot saved" line: restart.c's (--resume-by-restart), */
      break;               /* not a checkpoint pitstop can resume a generation from */
    if (r.path) {
      snprintf(c->ckpt, sizeof c->ckpt, "%s", r.path);
      c->resizable = 1;
      ctl_hold_ckpt(c, r.step);
    }
    if (r.step >= 0)
      c->step_safe = r.step;
    c->last_ckpt_s = r.ckpt_s;
    if ((rc = ctl_release_held(c, r.step >= 0 ? r.step : -1, e)) == 0 && (rc = ctl_out_record(c, &r, e)) == 0 &&
        (rc = ctl_out_flush(c, e)) == 0 && (rc = ctl_write_state(c, e)) == 0)
      ctl_unhold_older(c);
    if (rc == 0 && r.path && r.step >= 0)
      ctl_mirror_ckpt(c, r.path, r.step);
    if (rc == 0)
      ctl_test_kill_at("after-ckpt", r.step); /* tests: a kill right after a checkpoint is recorded */
    break;
  case PIT_REC_END:
    snprintf(c->end_status, sizeof c->end_status, "%s", r.status[0] ? r.status : "done");
    if (!c->stop_requested && strcmp(c->end_status, "stopped") == 0 && ctl_measured_enough(r.detail))
      snprintf(c->end_status, sizeof c->end_status, "done");
    if ((rc = ctl_release_held(c, -1, e)) == 0)
      rc = ctl_out_record(c, &r, e);
    break;
  case PIT_REC_INIT:
    c->gen_init = 1;
    c->init_s = r.init_s;
    rc = on_init(c, &r, e);
    if (rc == 0)
      rc = tag_membership(c, &r, e);
    if (rc == 0)
      rc = ctl_out_record(c, &r, e);
    break;
  default:
    rc = ctl_hold(c, &r, e);
    break;
  }
  pit_record_release(&r);
  ctl_status(c, c->stop_requested ? "resizing" : "running", 0);
  return rc;
}

void ctl_on_parse_warn(void *ctx, const struct pit_err *w) {
  const struct ctl *c = ctx;
  warn(c, "workload output: %s", w->msg);
}

/* A snapshot was saved (epoch: the epoch it follows, -1 when unknown): a
 * checkpoint record (the steps done so far are safe), and a resize waiting
 * for it is carried out. */
int ctl_on_snapshot(struct ctl *c, int64_t epoch, struct pit_err *e) {
  int rc = 0;
  c->in_snapshot = 1;
  if (epoch >= 0 && c->have_prog)
    rc = ctl_progress_close(&c->prog, epoch, now_t(c), ctl_on_progress, c, e);
  c->in_snapshot = 0;
  if (rc < 0)
    return rc;
  struct pit_record r;
  ctl_base_record(c, &r, PIT_REC_CHECKPOINT);
  r.step = c->step_next;
  r.path = strdup(c->snap.path);
  snprintf(c->ckpt, sizeof c->ckpt, "%s", c->snap.path);
  c->ckpt_held[0] = 0;
  c->step_safe = c->step_next;
  int64_t from = c->snap_step >= 0 ? c->snap_step : c->gen_step0;
  if (c->step_next > from)
    c->save_every = c->step_next - from;
  c->snap_step = c->step_next;
  if ((rc = ctl_release_held(c, c->step_safe, e)) == 0 && (rc = ctl_out_record(c, &r, e)) == 0 && (rc = ctl_out_flush(c, e)) == 0)
    rc = ctl_write_state(c, e);
  pit_record_release(&r);
  c->restart_refused = 0;
  if (rc == 0 && c->total_steps > 0 && c->step_next >= c->total_steps && c->restart_pending) {
    c->restart_pending = 0; /* the job's last snapshot: nothing left to resize for */
    warn(c, "the job's last snapshot: the resize waiting for it is dropped");
  }
  if (rc == 0 && c->restart_pending && !c->stop_requested)
    ctl_restart_stop(c);
  else if (rc == 0 && !c->stop_requested)
    rc = ctl_decide(c, e); /* a resize may be due right after this save */
  return rc;
}

static void progress_total(struct ctl *c);

int ctl_on_progress(void *ctx, const struct pit_record *r, struct pit_err *e) {
  struct ctl *c = ctx;
  if (r->type == PIT_REC_INIT)
    progress_total(c); /* the job's length into the init record's config */
  c->t_is_run = 1;
  int rc = ctl_on_record(c, r, e);
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
int ctl_on_progress_line(struct ctl *c, const char *s, size_t n, struct pit_err *e) {
  if (!c->have_prog)
    return 0;
  int rc = ctl_progress_line(&c->prog, s, n, now_t(c), ctl_on_progress, c, e);
  if (rc > 0)
    progress_total(c);
  return rc < 0 ? rc : 0;
}
