/* dst_work.c — the simulated workload of the deterministic simulation (dst.c): one
 * process per generation, in simulated time, speaking the real protocol
 * (docs/protocol.md) on a real pipe the controller reads: an init record, one
 * iteration record per step (its loss from the workload's state, its sample
 * digest of the step's global samples), checkpoint files and records every few
 * steps, the agreed stop (SIGUSR1 or SIGTERM: checkpoint at the next step
 * boundary, then end "stopped"), end "done" at the last step.
 *
 * Invariants:
 *  - its state after n steps is dst_params_after(n) whatever the generations, when
 *    it resumes from a checkpoint of its own (the file holds the step and the
 *    state): a resume from a wrong file shows in the losses;
 *  - a checkpoint file is complete before its record is printed (temp file,
 *    rename), then all but the newest two are removed; a disk full makes the write
 *    fail (the workload says so and exits 1);
 *  - it can crash, hang or exit at any step, in the stop agreement and in the
 *    checkpoint write, when the seed's plan says so. */
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
#include <unistd.h>

#include "control/dst_impl.h"
#include "pitstop/record.h"

#define BATCH 8

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t step_params(uint64_t p, int64_t s) { return mix(p ^ (uint64_t)s * 0x2545F4914F6CDD1Dull); }

uint64_t dst_params_after(int64_t n) {
  uint64_t p = 0x5EED;
  for (int64_t s = 0; s < n; s++)
    p = step_params(p, s);
  return p;
}

/* Six decimals: the events file's %.9g keeps them exactly. */
double dst_loss(uint64_t params) { return (double)(params >> 44) / 1e6; }

void dst_samples(int64_t step, char out[17]) {
  int64_t idx[BATCH];
  for (int k = 0; k < BATCH; k++)
    idx[k] = step * BATCH + k;
  pit_samples_digest(idx, BATCH, out);
}

/* One line onto the pipe (the controller reads it at its next pass). */
static void say(struct dst *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct dst *d, const char *fmt, ...) {
  struct dst_work *w = &d->wk;
  char line[1400];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof line - 1)
    return;
  dst_trace(d, "workload gen %d: %s", w->gen, line);
  line[n++] = '\n';
  if (w->wfd >= 0 && write(w->wfd, line, (size_t)n) != n)
    dst_trace(d, "workload gen %d: its pipe is full", w->gen);
}

static double age(const struct dst *d) { return d->now - d->wk.t_launch; }

void dst_work_die(struct dst *d, int status, const char *why) {
  struct dst_work *w = &d->wk;
  if (w->exited)
    return;
  w->exited = 1;
  w->status = status;
  w->t_next = INFINITY;
  if (w->wfd >= 0)
    close(w->wfd);
  w->wfd = -1;
  dst_trace(d, "workload gen %d (pid %d) exits %d: %s", w->gen, (int)w->pid, status, why);
}

void dst_work_close(struct dst *d) {
  if (d->wk.wfd >= 0)
    close(d->wk.wfd);
  d->wk.wfd = -1;
}

static void ckpt_path(const struct dst *d, int64_t step, char *buf, size_t n) {
  snprintf(buf, n, "%s/checkpoints/checkpoint-%012" PRId64 ".pit", d->run_dir, step);
}

/* Reads a checkpoint of ours: 0 with its step and state, else -1 and why. */
static int ckpt_read(const char *path, int64_t *step, uint64_t *params, char *why, size_t n) {
  char buf[512];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, n, "%s", strerror(errno));
    return -1;
  }
  ssize_t k = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[k > 0 ? k : 0] = 0;
  unsigned long long want, sum;
  long long s;
  unsigned long long p;
  char *nl = strchr(buf, '\n');
  if (!nl || sscanf(buf, "PITSTOP-CKPT 1 %llu %llx", &want, &sum) != 2) {
    snprintf(why, n, "bad header");
    return -1;
  }
  const char *pay = nl + 1;
  if (strlen(pay) != want || sscanf(pay, "step %lld params %llx", &s, &p) != 2) {
    snprintf(why, n, "truncated (%zu of %llu payload bytes)", strlen(pay), want);
    return -1;
  }
  *step = s;
  *params = p;
  return 0;
}

/* Rank 0's checkpoint of the state after step-1 (steps done = step): 0, or -1
 * when the workload died in it (a fault) or could not write it (disk full). */
static int ckpt_write(struct dst *d, int64_t step) {
  struct dst_work *w = &d->wk;
  char path[1200], tmp[1300], payload[128], head[128];
  ckpt_path(d, step, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s/checkpoints/.tmp-%d", d->run_dir, (int)w->pid);
  int np = snprintf(payload, sizeof payload, "step %" PRId64 " params %016" PRIx64 "\n", step, w->params);
  int nh = snprintf(head, sizeof head, "PITSTOP-CKPT 1 %d %016" PRIx64 "\n", np, w->params ^ (uint64_t)step);
  if (dst_disk_full(d)) {
    say(d, "pitstop: cannot write checkpoint '%s': No space left on device", path);
    dst_work_die(d, 1, "disk full");
    return -1;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    dst_work_die(d, 1, "cannot create its temp file");
    return -1;
  }
  int half = w->fault == DST_WF_CKPT_TMP && step - w->step0 >= w->fault_step;
  int ok = write(fd, head, (size_t)nh) == nh && write(fd, payload, half ? (size_t)np / 2 : (size_t)np) > 0;
  close(fd);
  if (half || !ok) {
    dst_work_die(d, 128 + SIGKILL, "killed in its checkpoint write (a half temp file left)");
    return -1;
  }
  if (rename(tmp, path) < 0) {
    dst_work_die(d, 1, "cannot rename its checkpoint");
    return -1;
  }
  d->ckpts_written++;
  if (w->gen >= 0 && w->gen < DST_MAX_GENS && step > d->gen_ckpt[w->gen])
    d->gen_ckpt[w->gen] = step;
  dst_trace(d, "workload gen %d: checkpoint of step %" PRId64 " written", w->gen, step);
  /* all but the newest two removed */
  char dir[1200];
  snprintf(dir, sizeof dir, "%s/checkpoints", d->run_dir);
  DIR *dd = opendir(dir);
  struct dirent *de;
  long long s;
  while (dd && (de = readdir(dd)))
    if (sscanf(de->d_name, "checkpoint-%lld.pit", &s) == 1 && s < step && s != w->prev_ckpt) {
      char p[1500];
      snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
      unlink(p);
    }
  if (dd)
    closedir(dd);
  w->prev_ckpt = step;
  if (w->fault == DST_WF_CKPT_NOREC && step - w->step0 >= w->fault_step) {
    dst_work_die(d, 128 + SIGKILL, "killed after its checkpoint's rename, before its record");
    return -1;
  }
  say(d, "PITSTOP {\"type\":\"checkpoint\",\"run\":\"dst\",\"gen\":%d,\"t\":%.6f,\"step\":%" PRId64
         ",\"path\":\"%s\",\"bytes\":%d,\"ckpt_s\":0.01}",
      w->gen, age(d), step, path, nh + np);
  return 0;
}

int dst_work_launch(struct ctl_world *wo, const struct ctl_launch *L, struct ctl_gen *g, struct pit_err *e) {
  struct dst *d = wo->impl;
  struct dst_work *w = &d->wk;
  if (g->logfd < 0 && (g->logfd = open(g->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
    return pit_err_errno(e, PIT_EIO, "cannot create the generation's log '%s'", g->log);
  int fx = dst_fx(d, "launch");
  if (fx != 0)
    return pit_err_set(e, PIT_EIO, "cannot launch the workload (%s)", fx > 0 ? "the controller is gone" : strerror(-fx));
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
    return pit_err_errno(e, PIT_EIO, "pipe");
  dst_work_close(d);
  memset(w, 0, sizeof *w);
  w->wfd = fds[1];
  w->pid = (pid_t)(0x40000000 + d->next_pid++); /* above any pid_max: never a real process */
  w->gen = L->gen;
  w->launch = d->nlaunch++;
  w->t_launch = d->now;
  w->t_next = d->now + d->init_s;
  w->prev_ckpt = -1;
  w->nnodes = L->nnodes < 8 ? L->nnodes : 8;
  for (int i = 0; i < w->nnodes; i++)
    snprintf(w->nodes[i], sizeof w->nodes[i], "%.31s", L->nodes[i].id);
  snprintf(w->resume, sizeof w->resume, "%s", L->resume);
  for (int i = 0; i < d->nwfault; i++)
    if (d->wfault_launch[i] == w->launch) {
      w->fault = (enum dst_wfault)d->wfault_kind[i];
      w->fault_step = d->wfault_step[i];
    }
  struct ctl_proc *p = &g->proc[0];
  memset(p, 0, sizeof *p);
  pit_child_init(&p->ch);
  p->pid = w->pid;
  p->fd = fds[0];
  p->efd = -1;
  p->node = -1;
  p->status = -1;
  snprintf(p->label, sizeof p->label, "dst");
  g->nproc = 1;
  dst_trace(d, "launch gen %d (pid %d) on %d node%s, resume '%s', fault %d at +%" PRId64, w->gen, (int)w->pid,
            L->nnodes, L->nnodes == 1 ? "" : "s", L->resume, (int)w->fault, w->fault_step);
  return pit_follower_open_fd(&p->out, p->fd, 0, "the workload's output", 0, e);
}

double dst_work_next(struct dst *d) {
  double t = d->wk.exited ? INFINITY : d->wk.t_next;
  for (int i = 0; i < d->nnodes; i++) {
    const struct dst_node *n = &d->nodes[i];
    if (n->alive && isfinite(n->notice_t) && !n->notice_said && n->notice_t < t)
      t = n->notice_t;
    if (n->alive && isfinite(n->gone_t) && n->gone_t < t)
      t = n->gone_t;
  }
  return t;
}

void dst_work_signal(struct dst *d, int sig) {
  struct dst_work *w = &d->wk;
  dst_trace(d, "workload gen %d gets signal %d%s", w->gen, sig, w->hang ? " (hung: ignored)" : "");
  if (w->hang || w->exited)
    return;
  if (sig == SIGUSR1 || sig == SIGTERM) {
    if (!w->stop)
      w->stop_sig = sig;
    w->stop = 1;
  } else {
    dst_work_die(d, 128 + sig, "a signal");
  }
}

/* The end of a generation on a stop: checkpoint, its record, end "stopped". */
static void agreed_stop(struct dst *d) {
  struct dst_work *w = &d->wk;
  if (w->fault == DST_WF_STOP_CRASH) {
    dst_work_die(d, 128 + SIGKILL, "killed in the stop agreement, before its checkpoint");
    return;
  }
  if (w->fault == DST_WF_STOP_HANG) {
    w->hang = 1;
    w->t_next = INFINITY;
    dst_trace(d, "workload gen %d hangs in the stop agreement", w->gen);
    return;
  }
  if (ckpt_write(d, w->step) < 0)
    return;
  if (w->fault == DST_WF_STOP_NOEND) {
    dst_work_die(d, 128 + SIGKILL, "killed in the stop agreement, after its checkpoint record");
    return;
  }
  say(d, "PITSTOP {\"type\":\"end\",\"run\":\"dst\",\"gen\":%d,\"t\":%.6f,\"total_s\":%.6f,\"status\":\"stopped\","
         "\"stop\":\"%s\"}",
      w->gen, age(d), age(d), w->stop_sig == SIGTERM ? "SIGTERM" : "SIGUSR1");
  dst_work_die(d, 0, "stopped at an agreed step");
}

/* Boot: the checkpoint read, the init record. */
static void boot(struct dst *d) {
  struct dst_work *w = &d->wk;
  w->step = 0;
  w->params = dst_params_after(0);
  if (w->resume[0]) {
    char why[256];
    if (ckpt_read(w->resume, &w->step, &w->params, why, sizeof why) < 0) {
      say(d, "pitstop: checkpoint '%s': %s; no usable checkpoint to resume from", w->resume, why);
      dst_work_die(d, 2, "no usable checkpoint");
      return;
    }
  }
  w->step0 = w->step;
  w->phase = 1;
  int ranks = w->nnodes > 0 ? w->nnodes : 1;
  say(d, "PITSTOP {\"type\":\"init\",\"run\":\"dst\",\"gen\":%d,\"t\":%.6f,\"init_s\":%.6f,\"ranks\":%d,\"nodes\":%d,"
         "\"config\":{\"planned_iters\":%" PRId64 ",\"batch\":%d,\"start_step\":%" PRId64 "}}",
      w->gen, age(d), age(d), ranks, ranks, d->total, BATCH, w->step);
  w->t_next = d->now + d->step_s / ranks;
  if (w->step >= d->total) { /* resumed from the job's last checkpoint: nothing left to do */
    say(d, "PITSTOP {\"type\":\"end\",\"run\":\"dst\",\"gen\":%d,\"t\":%.6f,\"total_s\":%.6f,\"status\":\"done\"}",
        w->gen, age(d), age(d));
    dst_work_die(d, 0, "done (nothing left)");
  }
}

/* One step: the faults planned before it, its record, a checkpoint when due, the end. */
static void one_step(struct dst *d) {
  struct dst_work *w = &d->wk;
  int64_t rel = w->step - w->step0;
  if (w->stop) {
    agreed_stop(d);
    return;
  }
  if (rel == w->fault_step)
    switch (w->fault) {
    case DST_WF_CRASH:
      dst_work_die(d, 128 + SIGKILL, "crashed");
      return;
    case DST_WF_EXIT1:
      say(d, "pitstop: simulated failure at step %" PRId64, w->step);
      dst_work_die(d, 1, "failed");
      return;
    case DST_WF_EXIT0:
      dst_work_die(d, 0, "exited 0 without an end record");
      return;
    case DST_WF_HANG:
      w->hang = 1;
      w->t_next = INFINITY;
      dst_trace(d, "workload gen %d hangs", w->gen);
      return;
    default:
      break;
    }
  int ranks = w->nnodes > 0 ? w->nnodes : 1;
  char dig[17];
  dst_samples(w->step, dig);
  say(d, "PITSTOP {\"type\":\"iter\",\"run\":\"dst\",\"gen\":%d,\"t\":%.6f,\"epoch\":0,\"iter\":%" PRId64
         ",\"step\":%" PRId64 ",\"batch\":%d,\"step_s\":%.6f,\"loss\":%.17g,\"samples_digest\":\"%s\"}",
      w->gen, age(d), w->step, w->step, BATCH, d->step_s / ranks, dst_loss(w->params), dig);
  w->params = step_params(w->params, w->step);
  w->step++;
  if (w->step >= d->total) {
    if (ckpt_write(d, w->step) < 0)
      return;
    say(d, "PITSTOP {\"type\":\"end\",\"run\":\"dst\",\"gen\":%d,\"t\":%.6f,\"total_s\":%.6f,\"status\":\"done\"}",
        w->gen, age(d), age(d));
    dst_work_die(d, 0, "done");
    return;
  }
  if (w->stop) { /* asked during this step: the agreed step is the next boundary, now */
    agreed_stop(d);
    return;
  }
  if (w->step % d->ckpt_every == 0 && ckpt_write(d, w->step) < 0)
    return;
  w->t_next = d->now + d->step_s / ranks;
}

/* Everything due at the simulated now: the provider's reclaims, the workload's
 * steps (a few lines at most per call, so the pipe never fills). */
void dst_work_run(struct dst *d) {
  dst_prov_tick(d);
  struct dst_work *w = &d->wk;
  for (int k = 0; k < 16 && !w->exited && w->t_next <= d->now; k++) {
    if (w->phase == 0)
      boot(d);
    else
      one_step(d);
  }
}
