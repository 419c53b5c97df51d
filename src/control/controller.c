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
 *    so a workload outliving its controller cannot rotate it away;
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control/control_impl.h"
#include "control/launch.h"
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
}

/* ---------------- records out: events file and store ---------------- */

static int out_record(struct ctl *c, const struct pit_record *r, struct pit_err *e) {
  int rc = 0;
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

static int64_t drop_held(struct ctl *c) {
  int64_t lost = 0;
  for (int i = 0; i < c->nheld; i++) {
    lost += c->held[i].type == PIT_REC_ITER;
    pit_record_release(&c->held[i]);
  }
  c->nheld = 0;
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
  const char *action = ch->act == PIT_ACT_RESIZE ? "resize" : keep ? "keep" : "recommend";
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
  text = cJSON_PrintUnformatted(o);
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
  snprintf(text + at, sizeof text - (size_t)at, "\n");
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

/* Once the state names c->ckpt_held: the other held links go. */
static void unhold_older(struct ctl *c) {
  const char *keep = strrchr(c->ckpt_held, '/');
  DIR *d = keep ? opendir(c->state_dir) : NULL;
  if (!d)
    return;
  struct dirent *de;
  while ((de = readdir(d)))
    if (strncmp(de->d_name, "held-", 5) == 0 && strcmp(de->d_name, keep + 1) != 0) {
      char p[1400];
      snprintf(p, sizeof p, "%s/%s", c->state_dir, de->d_name);
      unlink(p);
    }
  closedir(d);
}

/* The newest checkpoint record of the events file (the durable log, which a
 * kill between its flush and the state's write leaves ahead of the state):
 * 1 with *step and its path (held link if there, else the workload's), 0 if none. */
static int events_last_ckpt(const struct ctl *c, int64_t *step, char *path, size_t n) {
  struct pit_record_reader rd;
  struct pit_record r;
  struct pit_err e2 = {0};
  char last[1100] = "";
  *step = -1;
  if (pit_record_reader_open(&rd, c->events_path, &e2) < 0)
    return 0;
  pit_record_init(&r);
  while (pit_record_reader_next(&rd, &r, &e2) == 1) {
    if (r.type == PIT_REC_CHECKPOINT && r.step > *step && r.path) {
      *step = r.step;
      snprintf(last, sizeof last, "%s", r.path);
    }
    pit_record_release(&r);
  }
  pit_record_release(&r);
  pit_record_reader_release(&rd);
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

static int start_node(struct ctl *c, const char *itype, const char *why, struct pit_err *e) {
  if (c->nnodes == MAX_NODES)
    return pit_err_set(e, PIT_EARG, "more than %d nodes", MAX_NODES);
  struct pit_node *n = &c->nodes[c->nnodes];
  double t = now_t(c);
  int rc = c->prov.ops->start(&c->prov, itype, n, e);
  if (rc < 0)
    return rc;
  snprintf(n->why, sizeof n->why, "%s", why);
  n->t_start = t;
  n->t_ready = now_t(c);
  n->t_stop = NAN;
  c->nnodes++;
  if ((rc = node_record(c, n, "start", e)) < 0 || (rc = node_record(c, n, "ready", e)) < 0)
    return rc;
  return 0;
}

static double node_cost(const struct ctl *c, const struct pit_node *n, double until) {
  double t1 = isnan(n->t_stop) ? until : n->t_stop;
  double secs = t1 - n->t_start;
  if (!(secs > 0))
    return 0;
  const struct pit_itype *t = c->have_cat ? pit_catalog_find(&c->cat, n->itype) : NULL;
  double billed = t ? pit_itype_billed_s(t, secs) : secs;
  return n->price_h * billed / 3600.0;
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

/* Nodes to stop and start so that the live nodes match want. */
static int reshape(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e) {
  int rc;
  /* nodes the provider is taking back go first (they are replaced below) */
  for (int r = 0; r < c->nreclaimed; r++)
    for (int i = c->nnodes - 1; i >= 0; i--)
      if (strcmp(c->nodes[i].id, c->reclaimed[r]) == 0 && (rc = stop_node_at(c, i, "lost", e)) < 0)
        return rc;
  c->nreclaimed = 0;
  for (int i = c->nnodes - 1; i >= 0; i--) {
    int have = 0;
    for (int j = 0; j < c->nnodes; j++)
      have += strcmp(c->nodes[j].itype, c->nodes[i].itype) == 0;
    if (have > pit_membership_count(want, c->nodes[i].itype) && (rc = stop_node_at(c, i, "stop", e)) < 0)
      return rc;
  }
  for (int k = 0; k < want->n; k++) {
    int have = 0;
    for (int j = 0; j < c->nnodes; j++)
      have += strcmp(c->nodes[j].itype, want->m[k].itype) == 0;
    for (; have < want->m[k].nodes; have++)
      if ((rc = start_node(c, want->m[k].itype, why, e)) < 0)
        return rc;
  }
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
  st.phase = phase;
  st.resizable = c->resizable || !c->o->cmd;
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
  if (cJSON_IsNumber(p) && p->valuedouble > 0)
    c->total_steps = (int64_t)p->valuedouble;
  cJSON_Delete(o);
  const struct pit_policy *pol = &c->o->policy;
  for (int i = 0; c->total_steps > 0 && i < pol->nsched; i++)
    if (pol->sched[i].step >= c->total_steps)
      return pit_err_set(e, PIT_EARG, "schedule step %lld is beyond the job's %lld iterations",
                         (long long)pol->sched[i].step, (long long)c->total_steps);
  return 0;
}

/* The init record's config names the generation's membership (the store
 * then knows what each run ran on: pitstop profile, the cost policy's prior). */
static int tag_membership(const struct ctl *c, struct pit_record *r, struct pit_err *e) {
  cJSON *o = r->config ? cJSON_Parse(r->config) : cJSON_CreateObject();
  if (!o || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return 0; /* a config that is not an object is left as the workload wrote it */
  }
  char *m = pit_membership_json(&c->cur);
  cJSON *mj = m ? cJSON_Parse(m) : NULL;
  free(m);
  if (!mj) {
    cJSON_Delete(o);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  cJSON_DeleteItemFromObjectCaseSensitive(o, "membership");
  cJSON_AddItemToObject(o, "membership", mj);
  char *text = cJSON_PrintUnformatted(o);
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

static int on_record(void *ctx, const struct pit_record *in, struct pit_err *e) {
  struct ctl *c = ctx;
  struct pit_record r;
  pit_record_init(&r);
  if (pit_record_copy(&r, in) < 0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  snprintf(r.run, sizeof r.run, "%s", c->o->run);
  r.gen = c->gen;
  double now = now_t(c);
  if (!isnan(r.t)) {
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
    if (r.step >= 0 && r.step != c->step_next && c->gen_iters == 0)
      c->gen_step0 = r.step;
    if (r.step >= 0)
      c->step_next = r.step + 1;
    if (c->gen_iters++ == 0)
      c->t_first_iter = now;
    if (r.step_s > 0) {
      c->recent[c->nrecent++ % RECENT] = r.step_s;
      if (r.batch > 0)
        c->recent_batch = r.batch;
    }
    rc = hold(c, &r, e);
    if (rc == 0)
      rc = ctl_obs_iter(&c->obs, &c->cur, &r, e);
    if (rc == 0)
      rc = decide(c, e);
    break;
  case PIT_REC_CHECKPOINT:
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
    break;
  case PIT_REC_END:
    snprintf(c->end_status, sizeof c->end_status, "%s", r.status[0] ? r.status : "done");
    if (!c->stop_requested && strcmp(c->end_status, "stopped") == 0 && measured_enough(r.detail))
      snprintf(c->end_status, sizeof c->end_status, "done");
    if ((rc = release_held(c, -1, e)) == 0)
      rc = out_record(c, &r, e);
    break;
  case PIT_REC_INIT:
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
 * generation's first iteration (mean of the resizes so far; NaN: none yet). */
static double switch_seconds(const struct ctl *c) {
  double sum = 0;
  int n = 0;
  for (int i = 0; i < c->res->ngens; i++) {
    const struct pit_run_gen *g = &c->res->gens[i];
    /* the next generation's first iteration: its entry, or the running one's */
    double first = i + 1 < c->res->ngens ? c->res->gens[i + 1].t_first_iter : c->t_first_iter;
    if (strcmp(g->end, "resized") == 0 && isfinite(g->exit_s) && isfinite(first)) {
      sum += first - (g->t1 - g->exit_s);
      n++;
    }
  }
  return n ? sum / n : NAN;
}

/* The policy's state from what the controller has seen. */
static void policy_state(const struct ctl *c, struct pit_policy_state *s) {
  memset(s, 0, sizeof *s);
  s->gen = c->gen;
  s->step = c->step_next;
  s->total_steps = c->total_steps;
  s->cur = c->cur;
  s->nmin = c->o->nmin;
  s->nmax = c->o->nmax;
  s->resizable = c->resizable || !c->o->cmd;
  s->t = now_t(c);
  s->spent = spent(c, s->t);
  s->since_change = c->step_next - c->gen_step0;
  s->switch_s = switch_seconds(c);
  ctl_obs_state(&c->obs, c->nodes, c->nnodes, c->o->ranks_per_node, s);
  s->ntypes = c->ntypes;
  memcpy(s->types, c->types, (size_t)c->ntypes * sizeof c->types[0]);
}

static int decide(struct ctl *c, struct pit_err *e) {
  if (c->stop_requested)
    return 0;
  static struct pit_policy_state s; /* large; the controller is single-threaded */
  static struct pit_choice ch;
  policy_state(c, &s);
  const char *pol = pit_policy_name(&c->o->policy);
  int rc = pit_policy_decide(&c->o->policy, &s, &ch, e);
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

/* The complete lines p's stdout holds now into the generation's parser; final: p is
 * gone, its unfinished last line counts. The stdout is closed once it has ended. */
static int feed(struct ctl *c, struct ctl_proc *p, int final, struct pit_err *e) {
  for (;;) {
    const char *s;
    size_t n;
    int rc = pit_follower_line(&p->out, &s, &n, e);
    if (rc == PIT_FOLLOW_RECORD) {
      /* a workload that speaks the protocol (PITSTOP lines, JSON records) stops on SIGUSR1 */
      if ((n >= 8 && memcmp(s, "PITSTOP ", 8) == 0) || (n && s[0] == '{'))
        c->resizable = 1;
      if ((rc = pit_parser_line(c->parser, s, n, e)) < 0)
        return rc;
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

enum gen_end { GEN_DONE, GEN_STOPPED, GEN_FAILED, GEN_FATAL };

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
  c->end_status[0] = 0;
  c->t_end = 0;
  c->t_launch = now_t(c);
  c->t_first_iter = NAN;
  c->init_s = NAN;
  memset(&c->pending, 0, sizeof c->pending);
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
    struct pollfd pf[CTL_PROCS_MAX];
    int map[CTL_PROCS_MAX], np = 0;
    for (int i = 0; i < c->g->nproc; i++)
      if (c->g->proc[i].fd >= 0) {
        pf[np].fd = c->g->proc[i].fd;
        pf[np].events = POLLIN;
        map[np++] = i;
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
    int alive = 0, bad = -1;
    for (int i = 0; i < c->g->nproc; i++) {
      struct ctl_proc *p = &c->g->proc[i];
      ctl_proc_poll(p);
      if (!p->exited || p->fd >= 0)
        alive = 1;
      if (p->exited && p->status != 0 && bad < 0)
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
    if (!failed && c->gen_iters == 0 && t - c->t_launch > c->o->start_timeout_s) {
      snprintf(why, nwhy, "the workload sent no iteration within %.0f s of its start", c->o->start_timeout_s);
      failed = 1;
    }
    if (!failed && c->stop_requested && t - c->t_stop_req > c->o->stop_timeout_s) {
      snprintf(why, nwhy, "the workload did not stop within %.0f s of the request", c->o->stop_timeout_s);
      failed = 1;
    }
    if (failed) {
      ctl_gen_kill(c->g, 2.0);
      for (int i = 0; i < c->g->nproc; i++)
        if (c->g->proc[i].fd >= 0)
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
  if (failed == 2)
    return GEN_FATAL;
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
  double cost = 0;
  for (int i = 0; i < c->nnodes; i++) {
    const struct pit_node *n = &c->nodes[i];
    double a = n->t_start > g->t0 ? n->t_start : g->t0;
    double secs = g->t1 - a;
    if (secs > 0)
      cost += n->price_h * secs / 3600.0;
  }
  g->cost = cost;
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
    int have = 0;
    for (int j = 0; j < c->nnodes; j++)
      have += strcmp(c->nodes[j].itype, nd->itype) == 0;
    struct pit_err e2 = {0};
    /* adopted: healthy, and cleared of what the killed controller's workload left there */
    if (nd->state == PIT_NODE_READY && have < pit_membership_count(&c->cur, nd->itype) &&
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
  if (o->types)
    snprintf(buf, sizeof buf, "%s", o->types);
  else
    for (int i = 0; i < o->initial.n; i++)
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "," : "", o->initial.m[i].itype);
  return pit_policy_types(&c->cat, o->catalog, buf, c->types, &c->ntypes, e);
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

static int setup(struct ctl *c, const struct pit_run_opts *o, struct pit_err *e) {
  c->o = o;
  c->lock_fd = -1;
  c->t0 = pit_now();
  if (!o->run || !*o->run || !o->run_dir || !o->self_exe)
    return pit_err_set(e, PIT_EARG, "a run needs an id, a directory and the pitstop binary");
  for (const char *p = o->run; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
          *p == '_'))
      return pit_err_set(e, PIT_EARG, "run id '%s': use letters, digits, '-' and '_' only", o->run);
  snprintf(c->state_dir, sizeof c->state_dir, "%s", o->run_dir);
  snprintf(c->ckpt_dir, sizeof c->ckpt_dir, "%s/checkpoints", o->run_dir);
  int rc;
  if ((rc = pit_mkdir_p(c->state_dir, e)) < 0 || (rc = pit_mkdir_p(c->ckpt_dir, e)) < 0)
    return rc;
  if (o->catalog) {
    if ((rc = pit_catalog_load(&c->cat, o->catalog, e)) < 0)
      return rc;
    c->have_cat = 1;
  }
  for (int i = 0; i < o->initial.n; i++)
    if (c->have_cat && !pit_catalog_find(&c->cat, o->initial.m[i].itype)) {
      pit_err_set(e, PIT_ENOTFOUND, "instance type '%s' is not in the catalog '%s'", o->initial.m[i].itype,
                  o->catalog);
      return PIT_ENOTFOUND;
    }
  for (int s = 0; s < o->policy.nsched; s++)
    for (int i = 0; i < o->policy.sched[s].to.n; i++)
      if (c->have_cat && !pit_catalog_find(&c->cat, o->policy.sched[s].to.m[i].itype))
        return pit_err_set(e, PIT_ENOTFOUND, "the schedule names type '%s', which the catalog '%s' lacks",
                           o->policy.sched[s].to.m[i].itype, o->catalog);
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
  }
  if (c->store && pit_store_close(c->store, &e2) < 0)
    warn(c, "%s", e2.msg);
  pit_provider_close(&c->prov);
  if (c->have_cat)
    pit_catalog_release(&c->cat);
  if (c->lock_fd >= 0)
    close(c->lock_fd);
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
  if (rc == 0)
    rc = reconcile(&c, &ps, e);
  char resume[1100] = "";
  int64_t ev_step;
  char ev_ckpt[1100];
  if (rc == 0 && ps.found && events_last_ckpt(&c, &ev_step, ev_ckpt, sizeof ev_ckpt) && ev_step > ps.step) {
    ps.step = ev_step; /* killed after the events file took the checkpoint, before the state did */
    snprintf(ps.ckpt, sizeof ps.ckpt, "%s", ev_ckpt);
  }
  if (rc == 0 && ps.found) {
    c.gen = ps.gen + 1;
    res->restarts = ps.restarts;
    c.step_safe = ps.step;
    snprintf(c.ckpt, sizeof c.ckpt, "%s", ps.ckpt);
    snprintf(resume, sizeof resume, "%s", ps.ckpt);
    warn(&c, "run %s continues after a controller stop: generation %d from step %lld", o->run, c.gen,
         (long long)c.step_safe);
  }
  if (rc == 0)
    rc = reshape(&c, &c.cur, "the initial membership", e);
  int consecutive_fail = 0;
  while (rc == 0) {
    char why[1024];
    enum gen_end end = run_generation(&c, resume, why, sizeof why, e);
    if (end == GEN_FATAL) {
      gen_entry(&c, "failed");
      rc = e->code ? e->code : PIT_ESTATE;
      break;
    }
    if (end == GEN_DONE) {
      /* a workload without end records (one that speaks no protocol) finished: its steps are done */
      if ((rc = release_held(&c, -1, e)) < 0)
        break;
      gen_entry(&c, "done");
      status(&c, "done", 1);
      break;
    }
    if (end == GEN_STOPPED) {
      consecutive_fail = 0;
      gen_entry(&c, "resized");
      struct pit_run_gen *ge = &res->gens[res->ngens - 1];
      double t_exit = now_t(&c);
      ge->exit_s = t_exit - c.t_stop_req;
      struct pit_membership want = c.pending.act == PIT_ACT_RESIZE ? c.pending.to : c.cur;
      c.gen++;
      if ((rc = reshape(&c, &want, c.pending.reason, e)) < 0)
        break;
      ge->nodes_s = now_t(&c) - t_exit;
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
    if (res->restarts >= o->max_restarts) {
      rc = pit_err_set(e, PIT_ESTATE, "generation %d failed (%s) and --max-restarts %d is used up", c.gen, why,
                       o->max_restarts);
      pit_err_hint(e, "its output is in %s/gen-%d.log", c.state_dir, c.gen);
      break;
    }
    res->restarts++;
    consecutive_fail++;
    warn(&c, "generation %d failed (%s): %lld steps since the last checkpoint are redone; restart %d of %d",
         c.gen, why, (long long)lost, res->restarts, o->max_restarts);
    /* nodes that fail a health check are replaced */
    for (int i = c.nnodes - 1; i >= 0; i--) {
      struct pit_err e2 = {0};
      if (c.prov.ops->health(&c.prov, &c.nodes[i], &e2) < 0 || consecutive_fail >= 2) {
        char itype[PIT_NAME_MAX];
        snprintf(itype, sizeof itype, "%s", c.nodes[i].itype);
        warn(&c, "node %s set aside: %s", c.nodes[i].id, e2.msg[0] ? e2.msg : "it failed twice in a row");
        char why2[96];
        snprintf(why2, sizeof why2, "replaces %.40s (set aside)", c.nodes[i].id);
        if ((rc = stop_node_at(&c, i, "lost", e)) < 0 || (rc = start_node(&c, itype, why2, e)) < 0)
          break;
      }
    }
    snprintf(resume, sizeof resume, "%s", c.ckpt);
    c.step_safe = c.ckpt[0] ? c.step_safe : 0;
    c.gen++;
    status(&c, "restarting", 1);
  }
  res->steps = c.step_next;
  res->total_s = now_t(&c);
  res->resizable = c.resizable || !o->cmd;
  struct pit_err e2 = {0};
  if (rc == 0)
    rc = out_flush(&c, e);
  else if (c.ev_open)
    out_flush(&c, &e2);
  teardown(&c);
  res->waste_s = c.prov.waste_s;
  res->waste_usd = c.prov.waste_usd;
  res->cost += res->waste_usd;
  if (rc == 0) {
    char path[1100];
    snprintf(path, sizeof path, "%s/state", c.state_dir);
    unlink(path);
  }
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
  int rc = take_lock(&c, e);
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
    struct pit_node *list = NULL;
    int n = 0;
    if ((rc = c.prov.ops->list(&c.prov, &list, &n, e)) == 0)
      for (int i = 0; i < n; i++)
        if ((rc = c.prov.ops->stop(&c.prov, &list[i], e)) == 0)
          (*stopped)++;
    free(list);
    pit_provider_close(&c.prov);
  }
  if (c.lock_fd >= 0)
    close(c.lock_fd);
  return rc;
}
