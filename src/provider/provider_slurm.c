/* provider_slurm.c — the `slurm` provider: a node is a one-node Slurm
 * allocation. start = `salloc --immediate=S --no-shell -N1 -J pitstop-RUN-TAG
 * [-p PARTITION]` (TAG: the run directory's, pit_run_tag; never a request
 * that pends: Slurm refuses it unless it can run now), the job id parsed from salloc's "Granted job allocation ID";
 * stop = `scancel ID`; list = `squeue --name pitstop-RUN-TAG` joined with the
 * node files; health = the allocation's squeue state (RUNNING, or lost:
 * cancelled, preempted, failed, gone); poll = the same squeue every
 * SL_POLL_S: an allocation of a node file no longer RUNNING is reported gone
 * (its srun may have exited 0: srun says "Node failure" and exits 0 when
 * Slurm sets the node DOWN, and a surviving torchrun waits 300 s at its exit
 * barrier for it); wrap = `srun --jobid=ID -N1 -n1
 * --overlap --` (ranks and per-node commands are job steps of the
 * allocation; srun passes the environment on); clear = SIGKILL to the
 * allocation's job steps (what a killed controller's srun left running). An instance type maps to a
 * partition: --partition for every type, else the partition named as the
 * type when Slurm has one, else Slurm's default partition.
 *
 * With the mpi launcher, mpirun runs on this machine (host "localhost") and
 * each rank is an srun step of its node's allocation, which connects back to
 * this machine's mpirun: that works while the allocations' nodes share this
 * machine (the tests' emulated nodes); docs/run.md says so.
 *
 * State: a node file (node_files.c) "itype jobid nodename host price" per
 * allocation, written before start returns and removed after scancel, so a
 * restarted controller lists exactly the run's allocations (squeue's job
 * name pitstop-RUN-TAG finds one a crash left without its file). Every command is
 * argv with a time-out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/provider_impl.h"

/* Seconds between two polls' squeue (a lost allocation is told within this) */
#define SL_POLL_S 2.0
/* Allocations a poll reports gone, each once */
#define SL_REPORTED_MAX 64

struct slurm {
  char jobname[PIT_NAME_MAX + 16];
  double timeout_s;
  char wrap_job[64];
  double last_poll;                          /* pit_now() of the last poll's squeue */
  struct pit_err poll_err;                   /* its error, repeated until the next squeue */
  char reported[SL_REPORTED_MAX][PIT_NAME_MAX]; /* node ids reported gone */
  int nreported;
};

static int sl_open(struct pit_provider *p, struct pit_err *e) {
  struct slurm *s = calloc(1, sizeof *s);
  if (!s)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  char tag[9];
  pit_run_tag(p->conf.state_dir, tag); /* two runs of one name in two directories: two job names */
  snprintf(s->jobname, sizeof s->jobname, "pitstop-%s-%s", p->conf.run, tag);
  s->timeout_s = p->conf.timeout_s > 0 ? p->conf.timeout_s : 20;
  p->impl = s;
  return 0;
}

static void sl_close(struct pit_provider *p) {
  free(p->impl);
  p->impl = NULL;
}

/* The last non-empty line of text, without "salloc: " style prefixes. */
static const char *last_line(char *text) {
  size_t len = strlen(text);
  while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
    text[--len] = 0;
  char *l = strrchr(text, '\n');
  l = l ? l + 1 : text;
  const char *pre[] = {"salloc: error: ", "salloc: ", "squeue: error: ", "scancel: error: ", "srun: error: "};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (strncmp(l, pre[i], strlen(pre[i])) == 0)
      return l + strlen(pre[i]);
  return l;
}

/* Runs a Slurm client command; 0 and its output when it exits 0. */
static int slurm_cmd(struct slurm *s, char *const argv[], char *out, size_t nout, struct pit_err *e) {
  char err[2048];
  int st = 0;
  int rc = pit_child_capture(argv, s->timeout_s + 10, out, nout, err, sizeof err, &st, e);
  if (rc == PIT_ENOTFOUND) {
    pit_err_set(e, PIT_ENOTFOUND, "the slurm provider needs '%s' (Slurm's client commands)", argv[0]);
    pit_err_hint(e, "install slurm-client, or choose another --provider");
    return PIT_ENOTFOUND;
  }
  if (rc < 0)
    return rc;
  if (st != 0)
    return pit_err_set(e, PIT_ESTATE, "%s: %s", argv[0], *last_line(err) ? last_line(err) : "failed");
  const char *granted = strstr(err, "Granted job allocation");
  if (out && nout && granted) {
    /* salloc speaks on stderr: hand its grant line to the caller */
    size_t len = strcspn(granted, "\n");
    if (len >= nout)
      len = nout - 1;
    memcpy(out, granted, len);
    out[len] = 0;
  }
  return 0;
}

/* The partition of a type: conf.partition, or the type's own name when Slurm has it. */
static void partition_of(struct pit_provider *p, const char *itype, char *out, size_t n) {
  struct slurm *s = p->impl;
  out[0] = 0;
  if (p->conf.partition) {
    snprintf(out, n, "%s", p->conf.partition);
    return;
  }
  char *argv[] = {"sinfo", "-h", "-p", (char *)itype, "-o", "%P", NULL};
  char buf[256];
  struct pit_err e2 = {0};
  if (slurm_cmd(s, argv, buf, sizeof buf, &e2) == 0 && buf[0]) {
    buf[strcspn(buf, "*\n ")] = 0;
    if (strcmp(buf, itype) == 0)
      snprintf(out, n, "%s", itype);
  }
}

/* squeue's state of job id ("" when Slurm no longer lists it). */
static int job_state(struct slurm *s, const char *job, char *state, size_t n, char *node, size_t nn,
                     struct pit_err *e) {
  char jarg[80], out[512];
  snprintf(jarg, sizeof jarg, "--jobs=%s", job);
  char *argv[] = {"squeue", "-h", jarg, "-o", "%T %N", NULL};
  state[0] = 0;
  if (node)
    node[0] = 0;
  struct pit_err e2 = {0};
  int rc = slurm_cmd(s, argv, out, sizeof out, &e2);
  if (rc < 0) {
    if (strstr(e2.msg, "Invalid job id"))
      return 0; /* gone */
    *e = e2;
    return rc;
  }
  char st[64] = "", nd[256] = "";
  if (sscanf(out, "%63s %255s", st, nd) >= 1) {
    snprintf(state, n, "%s", st);
    if (node)
      snprintf(node, nn, "%s", nd);
  }
  return 0;
}

static int read_node(struct pit_provider *p, const char *id, struct pit_node *n, char *job, size_t njob) {
  char buf[512];
  if (ctl_node_file_read(p->conf.state_dir, id, buf, sizeof buf) < 0)
    return -1;
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", id);
  char jb[64], nodename[128];
  if (sscanf(buf, "%63s %63s %127s %127s %lf", n->itype, jb, nodename, n->host, &n->price_h) != 5)
    return -1;
  snprintf(job, njob, "%s", jb);
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->state = PIT_NODE_READY;
  n->t_start = n->t_ready = n->t_stop = NAN;
  return 0;
}

/* Job id of a node id RUN.jID. */
static const char *job_of(const char *id) {
  const char *j = strrchr(id, '.');
  return j && j[1] == 'j' ? j + 2 : "";
}

/* The run's allocations as squeue lists them: "ID STATE" lines into jobs. */
static int run_jobs(struct slurm *s, char *jobs, size_t n, struct pit_err *e) {
  char name[PIT_NAME_MAX + 32];
  snprintf(name, sizeof name, "--name=%s", s->jobname);
  char *argv[] = {"squeue", "-h", name, "-o", "%i %T", NULL};
  return slurm_cmd(s, argv, jobs, n, e);
}

/* 1 when run_jobs' lines list job RUNNING. */
static int job_running(const char *jobs, const char *job) {
  char pat[80];
  snprintf(pat, sizeof pat, "%s RUNNING", job);
  for (const char *at = strstr(jobs, pat); at; at = strstr(at + 1, pat))
    if ((at == jobs || at[-1] == '\n') && (at[strlen(pat)] == '\n' || !at[strlen(pat)]))
      return 1;
  return 0;
}

static int sl_list(struct pit_provider *p, struct pit_node **out, int *nout, struct pit_err *e) {
  struct slurm *s = p->impl;
  *out = NULL;
  *nout = 0;
  char jobs[8192];
  int rc = run_jobs(s, jobs, sizeof jobs, e);
  if (rc < 0)
    return rc;
  struct ctl_node_id *ids;
  int nid;
  if ((rc = ctl_node_files(p->conf.state_dir, &ids, &nid, e)) < 0)
    return rc;
  int cap = nid + 64;
  struct pit_node *v = calloc((size_t)cap, sizeof *v);
  if (!v) {
    free(ids);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  int n = 0;
  /* the node files: READY while squeue says RUNNING, else lost */
  for (int i = 0; i < nid; i++) {
    char job[64];
    if (read_node(p, ids[i].id, &v[n], job, sizeof job) < 0)
      continue;
    v[n].state = job_running(jobs, job) ? PIT_NODE_READY : PIT_NODE_LOST;
    n++;
  }
  /* allocations of the run that no node file names (a crash between salloc and the file) */
  char *save = NULL;
  for (char *l = strtok_r(jobs, "\n", &save); l && n < cap; l = strtok_r(NULL, "\n", &save)) {
    char job[64] = "", st[64] = "";
    if (sscanf(l, "%63s %63s", job, st) < 1)
      continue;
    int known = 0;
    for (int i = 0; i < n; i++)
      known |= strcmp(job_of(v[i].id), job) == 0;
    if (known)
      continue;
    char id[PIT_NAME_MAX];
    snprintf(id, sizeof id, "%.40s.j%.20s", p->conf.run, job);
    ctl_node_orphan(&v[n], id, NULL);
    n++;
  }
  free(ids);
  *out = v;
  *nout = n;
  return 0;
}

/* ops->poll: every SL_POLL_S, the allocations of the node files that squeue no longer lists
 * RUNNING (cancelled, NODE_FAIL, preempted, ended), each reported gone once; between two squeues
 * the last one's error stands. */
static int sl_poll(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e) {
  struct slurm *s = p->impl;
  *nev = 0;
  if (pit_now() - s->last_poll < SL_POLL_S) {
    if (s->poll_err.code && e)
      *e = s->poll_err;
    return s->poll_err.code;
  }
  s->last_poll = pit_now();
  pit_err_clear(&s->poll_err);
  char jobs[8192];
  struct ctl_node_id *ids = NULL;
  int nid = 0;
  if (run_jobs(s, jobs, sizeof jobs, &s->poll_err) < 0 ||
      ctl_node_files(p->conf.state_dir, &ids, &nid, &s->poll_err) < 0) {
    if (e)
      *e = s->poll_err;
    return s->poll_err.code;
  }
  for (int i = 0; i < nid && *nev < cap; i++) {
    struct pit_node n;
    char job[64];
    if (read_node(p, ids[i].id, &n, job, sizeof job) < 0 || job_running(jobs, job))
      continue;
    int k = 0;
    while (k < s->nreported && strcmp(s->reported[k], n.id) != 0)
      k++;
    if (k < s->nreported)
      continue;
    if (s->nreported < SL_REPORTED_MAX)
      snprintf(s->reported[s->nreported++], PIT_NAME_MAX, "%s", n.id);
    memset(&ev[*nev], 0, sizeof ev[*nev]);
    snprintf(ev[*nev].id, sizeof ev[*nev].id, "%s", n.id);
    ev[(*nev)++].kind = PIT_NODE_GONE;
  }
  free(ids);
  return 0;
}

static int sl_stop(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct slurm *s = p->impl;
  const char *job = job_of(n->id);
  if (!*job)
    return pit_err_set(e, PIT_EARG, "node %s is not a Slurm allocation of this run", n->id);
  char *argv[] = {"scancel", (char *)job, NULL};
  struct pit_err e2 = {0};
  int rc = slurm_cmd(s, argv, NULL, 0, &e2);
  if (rc < 0 && !strstr(e2.msg, "Invalid job id") && !strstr(e2.msg, "already completing") &&
      !strstr(e2.msg, "completed")) {
    *e = e2;
    return rc;
  }
  /* gone from squeue (or at least no longer running) within the time-out */
  char st[64] = "";
  double t0 = pit_now();
  do {
    if ((rc = job_state(s, job, st, sizeof st, NULL, 0, e)) < 0)
      return rc;
    if (!st[0] || (strcmp(st, "RUNNING") != 0 && strcmp(st, "PENDING") != 0 && strcmp(st, "CONFIGURING") != 0))
      break;
    usleep(50000);
  } while (pit_now() - t0 < s->timeout_s);
  if (!st[0] || strcmp(st, "RUNNING") != 0)
    return ctl_node_file_remove(p->conf.state_dir, n->id, e);
  return pit_err_set(e, PIT_ESTATE, "allocation %s still RUNNING %.0f s after scancel", job, s->timeout_s);
}

static int sl_start(struct pit_provider *p, const char *itype, enum pit_market mk, struct pit_node *n,
                     struct pit_err *e) {
  (void)mk; /* no spot market: only DEFAULT is asked for */
  struct slurm *s = p->impl;
  char part[PIT_NAME_MAX], imm[32], name[PIT_NAME_MAX + 32], parg[PIT_NAME_MAX + 16];
  partition_of(p, itype, part, sizeof part);
  snprintf(imm, sizeof imm, "--immediate=%d", (int)ceil(s->timeout_s / 2));
  snprintf(name, sizeof name, "--job-name=%s", s->jobname);
  snprintf(parg, sizeof parg, "--partition=%s", part);
  char *argv[] = {"salloc", imm, "--no-shell", "--nodes=1", name, part[0] ? parg : NULL, NULL};
  char out[4096];
  int rc = slurm_cmd(s, argv, out, sizeof out, e);
  if (rc < 0) {
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    pit_err_set(e, PIT_ESTATE, "Slurm cannot give a node of type %s now%s%s (salloc %s): %s", itype,
                part[0] ? " in partition " : "", part, imm, msg);
    pit_err_hint(e, "fewer nodes, another --partition, or a type whose partition has idle nodes (sinfo)");
    return PIT_ESTATE;
  }
  const char *g = strstr(out, "Granted job allocation ");
  long job = g ? strtol(g + 23, NULL, 10) : 0;
  if (job <= 0)
    return pit_err_set(e, PIT_EFORMAT, "salloc said no job id: '%s'", last_line(out));
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%.40s.j%ld", p->conf.run, job);
  snprintf(n->itype, sizeof n->itype, "%s", itype);
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  const struct pit_itype *t = p->conf.catalog ? pit_catalog_find(p->conf.catalog, itype) : NULL;
  n->price_h = t ? t->price_h : 0;
  n->state = PIT_NODE_READY;
  char jobs[32], st[64], nodename[128] = "";
  snprintf(jobs, sizeof jobs, "%ld", job);
  rc = job_state(s, jobs, st, sizeof st, nodename, sizeof nodename, e);
  if (rc == 0 && strcmp(st, "RUNNING") != 0)
    rc = pit_err_set(e, PIT_ESTATE, "allocation %ld is %s, not RUNNING, right after salloc", job, st[0] ? st : "gone");
  /* where the node's ranks are reached: mpirun stays on this machine; per-node, the node's address */
  snprintf(n->host, sizeof n->host, "localhost");
  if (rc == 0 && p->conf.launcher == PIT_LAUNCH_PER_NODE) {
    char narg[160], sc[1024];
    snprintf(narg, sizeof narg, "%s", nodename);
    char *argv2[] = {"scontrol", "show", "node", narg, NULL};
    if (slurm_cmd(s, argv2, sc, sizeof sc, e) == 0) {
      const char *a = strstr(sc, "NodeAddr=");
      if (a)
        sscanf(a + 9, "%127s", n->host);
    }
  }
  char text[512];
  snprintf(text, sizeof text, "%s %ld %s %s %.9g\n", n->itype, job, nodename[0] ? nodename : "?", n->host,
           n->price_h);
  if (rc == 0)
    rc = ctl_node_file_write(p->conf.state_dir, n->id, text, e);
  if (rc < 0) {
    struct pit_err e2 = {0};
    sl_stop(p, n, &e2); /* never leave an allocation nobody knows */
    return rc;
  }
  return 0;
}

static int sl_health(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct slurm *s = p->impl;
  char st[64];
  int rc = job_state(s, job_of(n->id), st, sizeof st, NULL, 0, e);
  if (rc < 0)
    return rc;
  if (strcmp(st, "RUNNING") == 0)
    return 0;
  return pit_err_set(e, PIT_ESTATE, "node %s: its allocation %s is %s", n->id, job_of(n->id),
                     st[0] ? st : "gone (cancelled, preempted or failed)");
}

/* The job steps of job (squeue -s: "JOB.STEP" words, numeric steps only) into buf; how many. */
static int job_steps(struct slurm *s, const char *job, char *buf, size_t n, struct pit_err *e) {
  char jarg[80], out[4096];
  snprintf(jarg, sizeof jarg, "--jobs=%s", job);
  char *argv[] = {"squeue", "-h", "-s", jarg, "-o", "%i", NULL};
  int rc = slurm_cmd(s, argv, out, sizeof out, e);
  if (rc < 0)
    return rc;
  int k = 0;
  size_t at = 0;
  buf[0] = 0;
  char *save = NULL;
  for (char *w = strtok_r(out, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
    const char *dot = strchr(w, '.');
    if (!dot || dot[1] < '0' || dot[1] > '9' || at + strlen(w) + 2 > n)
      continue; /* "JOB.extern", "JOB.batch": not the workload's */
    at += (size_t)snprintf(buf + at, n - at, "%s%s", k ? " " : "", w);
    k++;
  }
  return k;
}

/* Kills the run's job steps in n's allocation (a killed controller's ranks: Slurm ends the
 * steps of a killed srun, but not before a restarted controller may launch beside them), the
 * allocation kept: SIGKILL to each step, then until squeue lists none (the time-out). */
static int sl_clear(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  struct slurm *s = p->impl;
  const char *job = job_of(n->id);
  char steps[2048];
  int k = job_steps(s, job, steps, sizeof steps, e);
  char *save = NULL;
  for (char *w = k > 0 ? strtok_r(steps, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save)) {
    char *argv[] = {"scancel", "--signal=KILL", "--quiet", w, NULL};
    struct pit_err e2 = {0};
    slurm_cmd(s, argv, NULL, 0, &e2); /* a step that ended meanwhile is no error */
  }
  for (double t0 = pit_now(); k > 0 && pit_now() - t0 < s->timeout_s; usleep(100000))
    k = job_steps(s, job, steps, sizeof steps, e);
  if (k < 0)
    return k;
  if (k > 0)
    return pit_err_set(e, PIT_ESTATE, "allocation %s: job steps %s still run %.0f s after SIGKILL", job, steps,
                       s->timeout_s);
  return 0;
}

static int sl_wrap(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *nout,
                   struct pit_err *e) {
  struct slurm *s = p->impl;
  if (cap < 7)
    return pit_err_set(e, PIT_EARG, "%s:%d: wrap needs 7 slots", __FILE__, __LINE__);
  snprintf(s->wrap_job, sizeof s->wrap_job, "--jobid=%s", job_of(n->id));
  int k = 0;
  argv[k++] = "srun";
  argv[k++] = s->wrap_job;
  argv[k++] = "--nodes=1";
  argv[k++] = "--ntasks=1";
  argv[k++] = "--overlap";
  argv[k++] = "--quiet";
  argv[k++] = "--";
  *nout = k;
  return 0;
}

const struct pit_provider_ops pit_provider_slurm = {
    PIT_PROVIDER_OPS(sl, "slurm",
                     "nodes are Slurm allocations (salloc --immediate), ranks srun steps"),
    .poll = sl_poll,
    .clear = sl_clear,
};
