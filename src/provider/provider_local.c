/* provider_local.c — the `local` provider: nodes are CPU sets of this machine.
 * A node of type T gets T's `cpus` CPUs (from the catalog; CPUs this process
 * may run on, not used by another node of the run, and first those no node of
 * another run on this machine runs on) and, where cgroups can be
 * written, a cgroup of its own: CPU limit cpus × cpu_quota cores' worth
 * (cpus × 100% for a full-speed type), so a slower instance type is emulated
 * by the kernel's scheduler, never by the workload sleeping, and every node —
 * full or slow — is one scheduling entity with the same weight (NODE_SHARES,
 * above the default, so the other load of the machine disturbs it less).
 * Ranks join a node through `pitstop node-exec` (pin + join cgroup, then exec).
 *
 * State: one file per live node in STATE_DIR/nodes/ID.node ("itype cpus quota
 * cgroup price"), written atomically before start returns and removed after
 * the node is stopped, so a restarted controller lists exactly what exists;
 * cgroups are named pitstop.RUN.K.TAG, TAG the run directory's (pit_run_tag),
 * so one a crash left without its file is listed too (as a node to stop), and
 * two runs given one name (--run) in two directories never share a cgroup
 * (until 2026-11-29 the name had no TAG: both runs' node 0 joined one cgroup,
 * and the first to stop its node killed the other's workload); a cgroup that
 * exists with processes in it is never joined. Without root or a cgroup CPU controller the
 * provider says quotas are unavailable (once) and runs without them.
 * The machine's register (REG = $PITSTOP_LOCAL_REGISTRY, else /tmp/pitstop-local-nodes, mode
 * 1777): one symbolic link per live node of any run, REG/TAG.ID → its state file, made with
 * the choice of its CPUs under REG/.lock (flock), removed when the node stops; so two runs
 * starting nodes at one instant see each other's CPUs before any process runs there (until
 * 2026-11-29 only the processes in other runs' cgroups were seen, and two runs started
 * together could take one CPU). A link whose state file is gone is stale and removed. The
 * register is best effort: a start goes on without it (then as before). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider/provider_impl.h"

#define CG_V1 "/sys/fs/cgroup/cpu"
#define CG_V2 "/sys/fs/cgroup"
/* weight of every node's cgroup: 4× the default of v1 cpu.shares (1024) and of
 * v2 cpu.weight (100), so a node competes with the rest of the machine as four
 * ordinary processes would (docs/run.md) */
#define NODE_SHARES_V1 "4096"
#define NODE_WEIGHT_V2 "400"
/* the CPU limit's period: 10 ms, so a 40% node runs 4 ms of every 10 — a step
 * of a few milliseconds is slowed evenly, where the kernel's default 100 ms
 * lets most steps run at full speed and a few wait 60 ms (bimodal step
 * times whose mean takes several times longer to measure; docs/run.md) */
#define NODE_PERIOD_US 10000

struct local {
  int ncpu;
  int cpu[CPU_SETSIZE];
  int cg;                /* 0 none, 1 cgroup v1 cpu controller, 2 cgroup v2 */
  int warned;
  char tag[9];           /* this run's state directory's CRC-32, in its cgroups' names */
  char wrap_cpus[64], wrap_cg[256];
};

/* The length of name without ".TAG" when it ends in this run directory's tag, else 0. */
static size_t own_tag(const struct local *l, const char *name) {
  size_t len = strlen(name), lt = strlen(l->tag);
  return len > lt + 1 && name[len - lt - 1] == '.' && strcmp(name + len - lt, l->tag) == 0 ? len - lt - 1 : 0;
}

static int cg_detect(void) {
  if (geteuid() != 0)
    return 0;
  if (access(CG_V1 "/cgroup.procs", W_OK) == 0 && access(CG_V1 "/cpu.cfs_quota_us", F_OK) == 0)
    return 1;
  char buf[256];
  if (ctl_read_small(CG_V2 "/cgroup.subtree_control", buf, sizeof buf) == 0 && strstr(buf, "cpu"))
    return 2;
  return 0;
}

static int l_open(struct pit_provider *p, struct pit_err *e) {
  struct local *l = calloc(1, sizeof *l);
  if (!l)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) < 0) {
    free(l);
    return pit_err_errno(e, PIT_EIO, "cannot read this process's CPU affinity");
  }
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set))
      l->cpu[l->ncpu++] = c;
  l->cg = cg_detect();
  p->impl = l;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/nodes", p->conf.state_dir);
  int rc = pit_mkdir_p(dir, e);
  if (rc < 0)
    return rc;
  pit_run_tag(p->conf.state_dir, l->tag); /* the directory exists: made above */
  return 0;
}

static void l_close(struct pit_provider *p) {
  free(p->impl);
  p->impl = NULL;
}

/* cpus and CPU limit of a local type: the catalog's cpus and cpu_quota columns
 * (limit in cores' worth: cpus × cpu_quota, cpus when the type has no quota). */
static int local_spec(struct pit_provider *p, const char *itype, int *cpus, double *quota, double *price,
                      struct pit_err *e) {
  const struct pit_itype *t = p->conf.catalog ? pit_catalog_find(p->conf.catalog, itype) : NULL;
  if (!t)
    return pit_err_set(e, PIT_ENOTFOUND, "instance type '%s' is not in the catalog", itype);
  if (t->cpus < 1) {
    pit_err_set(e, PIT_EARG, "instance type '%s' cannot be emulated by the local provider", itype);
    pit_err_hint(e, "the catalog's cpus (and cpu_quota) columns say how a local type is emulated");
    return PIT_EARG;
  }
  *cpus = t->cpus;
  *quota = isnan(t->cpu_quota) || t->cpu_quota >= 1 ? t->cpus : t->cpu_quota * t->cpus;
  *price = t->price_h;
  return 0;
}

static void node_path(struct pit_provider *p, const char *id, char *buf, size_t n) {
  snprintf(buf, n, "%s/nodes/%s.node", p->conf.state_dir, id);
}

static int read_node(struct pit_provider *p, const char *id, struct pit_node *n) {
  char path[1024], buf[1024];
  node_path(p, id, path, sizeof path);
  if (ctl_read_small(path, buf, sizeof buf) < 0)
    return -1;
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%s", id);
  char cg[256] = "";
  if (sscanf(buf, "%63s %63s %lf %255s %lf", n->itype, n->cpus, &n->cpu_quota, cg, &n->price_h) != 5)
    return -1;
  if (strcmp(cg, "-") != 0)
    snprintf(n->cgroup, sizeof n->cgroup, "%s", cg);
  snprintf(n->host, sizeof n->host, "localhost");
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->state = PIT_NODE_READY;
  n->t_start = n->t_ready = n->t_stop = NAN;
  return 0;
}

static int l_list(struct pit_provider *p, struct pit_node **out, int *nout, struct pit_err *e) {
  *out = NULL;
  *nout = 0;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/nodes", p->conf.state_dir);
  int n = 0;
  size_t cap = 0;
  struct pit_node *v = NULL;
  DIR *d = opendir(dir);
  if (!d)
    return errno == ENOENT ? 0 : pit_err_errno(e, PIT_EIO, "cannot list '%s'", dir);
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 5, ".node") != 0 || len - 5 >= PIT_NAME_MAX)
      continue;
    char id[PIT_NAME_MAX];
    snprintf(id, sizeof id, "%.*s", (int)(len - 5), de->d_name);
    if (PIT_GROW(v, n + 1, cap)) {
      closedir(d);
      free(v);
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    if (read_node(p, id, &v[n]) == 0)
      n++;
  }
  closedir(d);
  /* cgroups of this run that no state file names (a crash between mkdir and the file) */
  struct local *l = p->impl;
  if (l->cg) {
    const char *root = l->cg == 1 ? CG_V1 : CG_V2;
    char prefix[PIT_NAME_MAX + 16];
    snprintf(prefix, sizeof prefix, "pitstop.%s.", p->conf.run);
    size_t lp = strlen(prefix);
    if ((d = opendir(root))) {
      while ((de = readdir(d))) {
        size_t len = own_tag(l, de->d_name); /* pitstop.RUN.K.TAG of this run's directory only */
        if (len <= lp || len - 8 >= PIT_NAME_MAX || strncmp(de->d_name, prefix, lp) != 0)
          continue;
        char cg[512];
        snprintf(cg, sizeof cg, "%s/%s", root, de->d_name);
        int known = 0;
        for (int i = 0; i < n; i++)
          known |= strcmp(v[i].cgroup, cg) == 0;
        if (known)
          continue;
        if (PIT_GROW(v, n + 1, cap))
          break;
        char id[PIT_NAME_MAX];
        snprintf(id, sizeof id, "%.*s", (int)(len - 8), de->d_name + 8); /* RUN.K */
        ctl_node_orphan(&v[n], id, NULL);
        snprintf(v[n].cgroup, sizeof v[n].cgroup, "%.255s", cg);
        n++;
      }
      closedir(d);
    }
  }
  *out = v;
  *nout = n;
  return 0;
}

static int write_file(const char *path, const char *text, struct pit_err *e) {
  FILE *f = fopen(path, "w");
  if (!f)
    return pit_err_errno(e, PIT_EIO, "cannot open '%s'", path);
  int bad = fputs(text, f) < 0;
  bad |= fclose(f) != 0;
  return bad ? pit_err_errno(e, PIT_EIO, "cannot write '%s'", path) : 0;
}

static int make_cgroup(struct local *l, const char *dir, double quota, struct pit_err *e) {
  if (mkdir(dir, 0755) < 0) {
    if (errno != EEXIST)
      return pit_err_errno(e, PIT_EIO, "cannot create the cgroup '%s'", dir);
    char procs[512], buf[64];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
    if (ctl_read_small(procs, buf, sizeof buf) != 0 || buf[0]) /* not readable, or processes in it */
      return pit_err_set(e, PIT_ESTATE, "the cgroup '%s' exists with processes in it: another controller of this "
                                        "run directory?", dir);
  }
  char path[512], val[64];
  long q = lround(quota * NODE_PERIOD_US);
  int rc;
  if (l->cg == 1) {
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    snprintf(val, sizeof val, "%d", NODE_PERIOD_US);
    rc = write_file(path, val, e);
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    snprintf(val, sizeof val, "%ld", q);
    if (rc == 0)
      rc = write_file(path, val, e);
    snprintf(path, sizeof path, "%s/cpu.shares", dir);
    if (rc == 0)
      rc = write_file(path, NODE_SHARES_V1, e);
    return rc;
  }
  snprintf(path, sizeof path, "%s/cpu.max", dir);
  snprintf(val, sizeof val, "%ld %d", q, NODE_PERIOD_US);
  rc = write_file(path, val, e);
  snprintf(path, sizeof path, "%s/cpu.weight", dir);
  if (rc == 0)
    rc = write_file(path, NODE_WEIGHT_V2, e);
  return rc;
}

/* Sets set[c] for every CPU c of a node's list ("0,2"); others are left. */
static void mark_cpus(const char *list, char *set) {
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%s", list);
  char *save = NULL;
  for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int c = atoi(t);
    if (c >= 0 && c < CPU_SETSIZE)
      set[c] = 1;
  }
}

/* ---- the machine's register of local nodes (see the top) ---- */

static const char *reg_dir(void) {
  const char *d = getenv("PITSTOP_LOCAL_REGISTRY");
  return d && d[0] ? d : "/tmp/pitstop-local-nodes";
}

static void reg_link(const struct local *l, const char *id, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s.%s", reg_dir(), l->tag, id);
}

/* Takes the register's lock: its fd, or -1 (no register: the start goes on). */
static int reg_lock(void) {
  const char *d = reg_dir();
  if (mkdir(d, 01777) == 0)
    chmod(d, 01777); /* past the umask: every user's runs share it */
  char path[600];
  snprintf(path, sizeof path, "%s/.lock", d);
  int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0666); /* flock needs no write access: any user's */
  if (fd >= 0 && flock(fd, LOCK_EX) < 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

static void reg_unlock(int fd) {
  if (fd >= 0)
    close(fd); /* releases the flock */
}

/* Marks in busy the CPUs of the registered nodes of other runs (their state
 * files' cpus); removes the links whose state file is gone. */
static void reg_cpus(const struct local *l, char *busy) {
  DIR *d = opendir(reg_dir());
  if (!d)
    return;
  size_t lt = strlen(l->tag);
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.' || (strncmp(de->d_name, l->tag, lt) == 0 && de->d_name[lt] == '.'))
      continue; /* the lock, or a node of this run (its own state files say its CPUs) */
    char link[600], buf[512], itype[64], cpus[64];
    snprintf(link, sizeof link, "%s/%s", reg_dir(), de->d_name);
    if (ctl_read_small(link, buf, sizeof buf) < 0) {
      if (errno == ENOENT)
        unlink(link); /* its node's file is gone: stale */
      continue;
    }
    if (sscanf(buf, "%63s %63s", itype, cpus) == 2)
      mark_cpus(cpus, busy);
  }
  closedir(d);
}

/* Registers node id, whose state file is path (best effort). */
static void reg_add(const struct local *l, const char *id, const char *path) {
  char link[600], *abs = realpath(path, NULL);
  if (!abs)
    return;
  reg_link(l, id, link, sizeof link);
  unlink(link);
  (void)!symlink(abs, link);
  free(abs);
}

static int l_stop(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  int rc = 0;
  if (n->cgroup[0]) {
    char procs[512];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", n->cgroup);
    if (ctl_kill_listed(procs, 2.0) > 0)
      rc = pit_err_set(e, PIT_ESTATE, "node %s: processes in '%s' survive SIGKILL", n->id, n->cgroup);
    for (int i = 0; i < 250 && rmdir(n->cgroup) < 0 && errno == EBUSY; i++)
      usleep(20000);
    if (access(n->cgroup, F_OK) == 0 && rc == 0)
      rc = pit_err_errno(e, PIT_EIO, "node %s: cannot remove the cgroup '%s'", n->id, n->cgroup);
  }
  char path[1024];
  node_path(p, n->id, path, sizeof path);
  if (unlink(path) < 0 && errno != ENOENT && rc == 0)
    rc = pit_err_errno(e, PIT_EIO, "cannot remove '%s'", path);
  reg_link(p->impl, n->id, path, sizeof path);
  unlink(path);
  return rc;
}

/* Marks in busy the CPUs the nodes of other runs on this machine run on: the
 * affinity of the processes in their cgroups (pitstop.RUN.K.TAG of another
 * TAG; the local provider pins every rank to its node's CPUs), and the CPUs of
 * the nodes in the machine's register (those with no process yet too). */
static void others_cpus(const struct local *l, char *busy) {
  reg_cpus(l, busy);
  DIR *d = l->cg ? opendir(l->cg == 1 ? CG_V1 : CG_V2) : NULL;
  if (!d)
    return;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (strncmp(de->d_name, "pitstop.", 8) != 0 || own_tag(l, de->d_name))
      continue; /* not a node's cgroup, or one of this run's */
    char procs[600];
    snprintf(procs, sizeof procs, "%s/%s/cgroup.procs", l->cg == 1 ? CG_V1 : CG_V2, de->d_name);
    FILE *f = fopen(procs, "re");
    int pid;
    while (f && fscanf(f, "%d", &pid) == 1) {
      cpu_set_t set;
      CPU_ZERO(&set);
      if (sched_getaffinity((pid_t)pid, sizeof set, &set) < 0)
        continue;
      for (int c = 0; c < CPU_SETSIZE; c++)
        busy[c] |= CPU_ISSET(c, &set) != 0;
    }
    if (f)
      fclose(f);
  }
  closedir(d);
}

static int start_node(struct pit_provider *p, const char *itype, struct pit_node *n, struct pit_err *e) {
  struct local *l = p->impl;
  int cpus = 1;
  double quota = 0, price = 0;
  int rc = local_spec(p, itype, &cpus, &quota, &price, e);
  if (rc < 0)
    return rc;
  struct pit_node *live;
  int nlive;
  if ((rc = l_list(p, &live, &nlive, e)) < 0)
    return rc;
  /* free CPUs and the first free index */
  char used[CPU_SETSIZE] = {0};
  int taken_idx[1024] = {0};
  for (int i = 0; i < nlive; i++) {
    mark_cpus(live[i].cpus, used);
    const char *dot = strrchr(live[i].id, '.');
    int k = dot ? atoi(dot + 1) : -1;
    if (k >= 0 && k < 1024)
      taken_idx[k] = 1;
  }
  free(live);
  /* this run's free CPUs, first those no other run's node uses (two runs on one machine spread
   * out; until 2026-11-29 both took CPU 0), then the rest (shared, as a machine with more nodes
   * than CPUs must) */
  char busy[CPU_SETSIZE] = {0}, pick[CPU_SETSIZE] = {0};
  others_cpus(l, busy);
  char list[64] = "";
  int got = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < l->ncpu && got < cpus; i++) {
      int c = l->cpu[i];
      if (used[c] || pick[c] || (pass == 0 && busy[c]))
        continue;
      pick[c] = 1;
      got++;
    }
  for (int c = 0, k = 0; c < CPU_SETSIZE && k < got; c++) /* in CPU order */
    if (pick[c]) {
      size_t at = strlen(list);
      snprintf(list + at, sizeof list - at, "%s%d", k++ ? "," : "", c);
    }
  if (got < cpus) {
    int nfree = 0;
    for (int i = 0; i < l->ncpu; i++)
      nfree += !used[l->cpu[i]];
    pit_err_set(e, PIT_ESTATE,
                "the local provider cannot start a node of type %s: it needs %d CPU(s), %d of the %d this "
                "process may use are free",
                itype, cpus, nfree, l->ncpu);
    pit_err_hint(e, "fewer nodes, or a type with fewer CPUs (see the catalog's cpus column)");
    return PIT_ESTATE;
  }
  int k = 0;
  while (k < 1023 && taken_idx[k])
    k++;
  memset(n, 0, sizeof *n);
  snprintf(n->id, sizeof n->id, "%.40s.%d", p->conf.run, k);
  snprintf(n->itype, sizeof n->itype, "%s", itype);
  snprintf(n->host, sizeof n->host, "localhost");
  snprintf(n->cpus, sizeof n->cpus, "%s", list);
  n->cpu_quota = l->cg ? quota : 0;
  n->price_h = price;
  n->slots = p->conf.slots > 0 ? p->conf.slots : 1;
  n->state = PIT_NODE_READY;
  if (l->cg) {
    snprintf(n->cgroup, sizeof n->cgroup, "%s/pitstop.%s.%s", l->cg == 1 ? CG_V1 : CG_V2, n->id, l->tag);
    if ((rc = make_cgroup(l, n->cgroup, quota, e)) < 0) {
      if (rc != PIT_ESTATE) /* (one with processes in it is not ours to remove) */
        rmdir(n->cgroup);
      return rc;
    }
  } else if (quota < cpus && !l->warned && p->conf.warn) {
    l->warned = 1;
    struct pit_err w;
    pit_err_clear(&w);
    pit_err_set(&w, PIT_ESTATE, "CPU quotas are unavailable here (they need root and a cgroup cpu controller): "
                                "slower local types run at full speed");
    p->conf.warn(p->conf.warn_ctx, &w);
  }
  char path[1024], text[512];
  node_path(p, n->id, path, sizeof path);
  snprintf(text, sizeof text, "%s %s %.9g %s %.9g\n", n->itype, n->cpus, n->cpu_quota,
           n->cgroup[0] ? n->cgroup : "-", n->price_h);
  if ((rc = pit_file_write_atomic(path, text, strlen(text), e)) < 0) {
    if (n->cgroup[0])
      rmdir(n->cgroup);
    return rc;
  }
  reg_add(l, n->id, path);
  return 0;
}

/* The CPUs are chosen and the node registered under the register's lock. */
static int l_start(struct pit_provider *p, const char *itype, enum pit_market mk, struct pit_node *n,
                   struct pit_err *e) {
  (void)mk; /* no spot market: only DEFAULT is asked for */
  int lk = reg_lock();
  int rc = start_node(p, itype, n, e);
  reg_unlock(lk);
  return rc;
}

static int l_health(struct pit_provider *p, const struct pit_node *n, struct pit_err *e) {
  if (n->cgroup[0] && access(n->cgroup, F_OK) < 0)
    return pit_err_set(e, PIT_ESTATE, "node %s: its cgroup '%s' is gone", n->id, n->cgroup);
  (void)p;
  return 0;
}

static int l_wrap(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *nout,
                  struct pit_err *e) {
  struct local *l = p->impl;
  if (cap < 7)
    return pit_err_set(e, PIT_EARG, "%s:%d: wrap needs 7 slots", __FILE__, __LINE__);
  snprintf(l->wrap_cpus, sizeof l->wrap_cpus, "%s", n->cpus);
  snprintf(l->wrap_cg, sizeof l->wrap_cg, "%s", n->cgroup);
  int k = 0;
  argv[k++] = p->conf.self_exe;
  argv[k++] = "node-exec";
  argv[k++] = "--cpus";
  argv[k++] = l->wrap_cpus;
  if (n->cgroup[0]) {
    argv[k++] = "--cgroup";
    argv[k++] = l->wrap_cg;
  }
  argv[k++] = "--";
  *nout = k;
  return 0;
}

/* Every rank of a local run is on this host, so Open MPI's point-to-point
 * layer is ob1 over shared memory (vader), the one it picks here anyway; named,
 * mpirun skips probing the cm layer's network libraries (libfabric, PSM,
 * PSM2), which took 0.2 s of every rank's MPI_Init on this machine (0.25 →
 * 0.05 s; docs/run.md), paid at every start and resize. Left to the user when
 * OMPI_MCA_pml is set. */
static int l_mpi_args(struct pit_provider *p, const char **argv, int cap, int *nout, struct pit_err *e) {
  (void)p;
  *nout = 0;
  if (getenv("OMPI_MCA_pml"))
    return 0;
  if (cap < 3)
    return pit_err_set(e, PIT_EARG, "%s:%d: mpi_args needs 3 slots", __FILE__, __LINE__);
  argv[0] = "--mca";
  argv[1] = "pml";
  argv[2] = "ob1";
  *nout = 3;
  return 0;
}

/* A node's cgroup lists a process: 1; none: 0; no cgroup, or it cannot be
 * read: -1 (then nothing is shrunk in place). */
static int l_busy(struct pit_provider *p, const struct pit_node *n) {
  (void)p;
  if (!n->cgroup[0])
    return -1;
  char path[512], buf[64];
  snprintf(path, sizeof path, "%s/cgroup.procs", n->cgroup);
  if (ctl_read_small(path, buf, sizeof buf) < 0)
    return access(n->cgroup, F_OK) == 0 ? -1 : 0; /* a cgroup gone holds nothing */
  return buf[0] != 0 && buf[0] != '\n';
}

const struct pit_provider_ops pit_provider_local = {
    PIT_PROVIDER_OPS(l, "local",
                     "nodes are CPU sets of this machine; slower types are cgroup CPU quotas"),
    .mpi_args = l_mpi_args,
    .busy = l_busy,
};

int pit_node_enter(const char *cpus, const char *cgroup, struct pit_err *e) {
  if (cpus && *cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", cpus);
    char *save = NULL;
    for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      int64_t c;
      if (pit_parse_i64(t, &c) < 0 || c < 0 || c >= CPU_SETSIZE)
        return pit_err_set(e, PIT_EARG, "'%s' is not a CPU list", cpus);
      CPU_SET((int)c, &set);
    }
    if (sched_setaffinity(0, sizeof set, &set) < 0)
      return pit_err_errno(e, PIT_EIO, "cannot pin to CPUs %s", cpus);
  }
  if (cgroup && *cgroup) {
    char path[512], pid[32];
    snprintf(path, sizeof path, "%s/cgroup.procs", cgroup);
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
      return pit_err_errno(e, PIT_EIO, "cannot join the cgroup '%s'", cgroup);
    int bad = fputs(pid, f) < 0;
    bad |= fclose(f) != 0;
    if (bad)
      return pit_err_errno(e, PIT_EIO, "cannot join the cgroup '%s'", cgroup);
  }
  return 0;
}
