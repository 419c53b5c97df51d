/* node_host.c — the ssh provider's host side: what `pitstop node-check` does
 * on a host reached over ssh. A check (this CPU has every instruction-set
 * extension the binary was compiled to use outside its run-time dispatch, free
 * disk in the run directory, the workload's program runnable) and a release
 * (kill every process the run left on this host: those whose environment
 * holds PITSTOP_RUN=RUN, which the launchers give every workload process, and
 * the Open MPI daemon each runs under), and a signal to those processes (the
 * per-node launcher's stop and checkpoint requests, which a signal to the
 * local ssh client would not carry: it would only end the session), and a TCP
 * port free here (the per-node launcher's rendezvous port, chosen on node 0's host).
 *
 * Invariant: a release touches only processes of the calling process's
 * network namespace (its "host": network-namespace hosts share one PID space)
 * that carry the run's tag (or are the orted/prted parent of one), never the
 * caller itself. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "provider/procs.h"
#include "provider/provider_impl.h"

static int runnable(const char *exe) {
  if (strchr(exe, '/'))
    return access(exe, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path)
    path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path; *p;) {
    const char *c = strchr(p, ':');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    char full[4096];
    snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? p : ".", exe);
    if (access(full, X_OK) == 0)
      return 1;
    p += n + (c ? 1 : 0);
    if (!c)
      break;
  }
  return 0;
}

/* The extensions this binary was compiled to use everywhere (its -march: a
 * PIT_NATIVE build takes the build machine's) that this CPU lacks, as
 * "avx512f avx512bw ..." in out; 0 when none. Code dispatched at run time
 * (target attributes) defines none of these macros and is not counted. */
static int isa_missing(char *out, size_t cap) {
  size_t at = 0;
  int n = 0;
  out[0] = 0;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
#define PIT_NEED(feat)                                                                   \
  do {                                                                                   \
    if (!__builtin_cpu_supports(feat) && at < cap) {                                     \
      at += (size_t)snprintf(out + at, cap - at, "%s%s", n ? " " : "", feat);            \
      n++;                                                                               \
    }                                                                                    \
  } while (0)
#ifdef __SSE4_1__
  PIT_NEED("sse4.1");
#endif
#ifdef __SSE4_2__
  PIT_NEED("sse4.2");
#endif
#ifdef __POPCNT__
  PIT_NEED("popcnt");
#endif
#ifdef __AVX__
  PIT_NEED("avx");
#endif
#ifdef __AVX2__
  PIT_NEED("avx2");
#endif
#ifdef __FMA__
  PIT_NEED("fma");
#endif
#ifdef __BMI__
  PIT_NEED("bmi");
#endif
#ifdef __BMI2__
  PIT_NEED("bmi2");
#endif
#ifdef __AVX512F__
  PIT_NEED("avx512f");
#endif
#ifdef __AVX512CD__
  PIT_NEED("avx512cd");
#endif
#ifdef __AVX512BW__
  PIT_NEED("avx512bw");
#endif
#ifdef __AVX512DQ__
  PIT_NEED("avx512dq");
#endif
#ifdef __AVX512VL__
  PIT_NEED("avx512vl");
#endif
#ifdef __AVX512VNNI__
  PIT_NEED("avx512vnni");
#endif
#ifdef __AVX512BF16__
  PIT_NEED("avx512bf16");
#endif
#ifdef __AVX512IFMA__
  PIT_NEED("avx512ifma");
#endif
#ifdef __AVX512VBMI__
  PIT_NEED("avx512vbmi");
#endif
#ifdef __AVX512VBMI2__
  PIT_NEED("avx512vbmi2");
#endif
#ifdef __AVX512BITALG__
  PIT_NEED("avx512bitalg");
#endif
#ifdef __AVX512VPOPCNTDQ__
  PIT_NEED("avx512vpopcntdq");
#endif
#ifdef __GFNI__
  PIT_NEED("gfni");
#endif
#ifdef __VPCLMULQDQ__
  PIT_NEED("vpclmulqdq");
#endif
#ifdef __VAES__
  PIT_NEED("vaes");
#endif
#undef PIT_NEED
#endif
  (void)at; /* the portable default build requires none of them */
  (void)cap;
  return n;
}

int pit_node_check(const char *dir, const char *exe, double min_free_mb, struct pit_err *e) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  char missing[512];
  if (isa_missing(missing, sizeof missing) > 0) {
    /* one line: the ssh provider reports the last line the host printed */
    return pit_err_set(e, PIT_ESTATE,
                       "host %s: pitstop cannot run there: it was built for %s, which this CPU lacks (a -march=native "
                       "build, PIT_NATIVE=ON, runs only on CPUs like its build machine's; -DPIT_NATIVE=OFF runs on "
                       "every x86-64 node)",
                       host, missing);
  }
  if (dir && *dir) {
    struct statvfs v;
    if (statvfs(dir, &v) < 0)
      return pit_err_errno(e, PIT_ENOTFOUND, "host %s: cannot see the run directory '%s'", host, dir);
    double free_mb = (double)v.f_bavail * (double)v.f_frsize / (1024.0 * 1024.0);
    if (free_mb < min_free_mb)
      return pit_err_set(e, PIT_ESTATE, "host %s: %.0f MiB free in '%s', %.0f needed", host, free_mb, dir,
                         min_free_mb);
  }
  if (exe && *exe && !runnable(exe))
    return pit_err_set(e, PIT_ENOTFOUND, "host %s: cannot run '%s'", host, exe);
  return 0;
}

static int same_netns(pid_t pid, const struct stat *mine) {
  char path[64];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
  return stat(path, &st) == 0 && st.st_ino == mine->st_ino && st.st_dev == mine->st_dev;
}

static int tagged(pid_t pid, const char *tag) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  enum { CAP = 1 << 17 };
  char *buf = malloc(CAP);
  ssize_t n = buf ? read(fd, buf, CAP - 1) : -1;
  close(fd);
  int found = 0;
  if (n > 0) {
    buf[n] = 0;
    size_t tl = strlen(tag);
    for (ssize_t i = 0; i < n && !found;) {
      size_t l = strlen(buf + i);
      found = l == tl && memcmp(buf + i, tag, tl) == 0;
      i += (ssize_t)l + 1;
    }
  }
  free(buf);
  return found;
}

/* /proc/PID/stat's state and parent of pid, and whether it is Open MPI's per-host
 * daemon (orted, prted); 0, or -1 when pid is gone. */
static int proc_stat(pid_t pid, char *state, int *ppid, int *mpi) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f)
    return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *lp = strchr(buf, '('), *rp = strrchr(buf, ')'); /* "pid (comm) state ppid ..." */
  if (!lp || !rp || rp < lp || sscanf(rp + 1, " %c %d", state, ppid) != 2)
    return -1;
  size_t cl = (size_t)(rp - lp - 1);
  *mpi = cl == 5 && (memcmp(lp + 1, "orted", 5) == 0 || memcmp(lp + 1, "prted", 5) == 0);
  return 0;
}

/* The parent of pid if it is Open MPI's per-host daemon, else 0.
 * The daemon mpirun started over ssh carries no run tag (its environment is the
 * ssh session's), and it outlives a killed mpirun for a while: it goes with the
 * run's ranks, and its ssh session ends with it. */
static pid_t mpi_daemon_parent(pid_t pid) {
  char st;
  int ppid = 0, pp, mpi = 0;
  if (proc_stat(pid, &st, &ppid, &mpi) < 0 || ppid <= 1)
    return 0;
  return proc_stat((pid_t)ppid, &st, &pp, &mpi) == 0 && mpi ? (pid_t)ppid : 0;
}

/* The MPI daemons a release signalled: untagged, they cannot be found again once
 * their ranks are gone, so the release remembers them and waits for them too. */
#define DAEMONS_MAX 64
struct daemons {
  pid_t pid[DAEMONS_MAX];
  int n;
};

static void daemons_add(struct daemons *d, pid_t pid) {
  for (int i = 0; i < d->n; i++)
    if (d->pid[i] == pid)
      return;
  if (d->n < DAEMONS_MAX)
    d->pid[d->n++] = pid;
}

/* pid is still an MPI daemon that has not exited (a zombie has; a reused pid is not one) */
static int daemon_alive(pid_t pid) {
  char st = 0;
  int ppid, mpi = 0;
  return proc_stat(pid, &st, &ppid, &mpi) == 0 && mpi && st != 'Z' && st != 'X';
}

/* signals the daemons of d still alive; returns how many */
static int signal_daemons(const struct daemons *d, int sig) {
  int n = 0;
  for (int i = 0; i < d->n; i++)
    if (daemon_alive(d->pid[i]) && kill(d->pid[i], sig) == 0)
      n++;
  return n;
}

/* Signals every process of this namespace tagged with tag (and with tag2, when
 * not NULL) and the MPI daemon it runs under (remembered in seen); returns how many. */
static int signal_tagged(const char *tag, const char *tag2, const struct stat *ns, int sig, struct daemons *seen) {
  DIR *d = opendir("/proc");
  if (!d)
    return 0;
  int n = 0;
  pid_t self = getpid();
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!isdigit((unsigned char)de->d_name[0]))
      continue;
    pid_t pid = (pid_t)atoi(de->d_name);
    if (pid == self || !same_netns(pid, ns) || !tagged(pid, tag) || (tag2 && !tagged(pid, tag2)))
      continue;
    pid_t daemon = mpi_daemon_parent(pid);
    if (daemon > 0 && daemon != self && kill(daemon, sig) == 0) {
      n++;
      daemons_add(seen, daemon);
    }
    if (kill(pid, sig) == 0)
      n++;
  }
  closedir(d);
  return n;
}

struct tags {
  const char *tag, *tag2;
  struct stat ns;
  pid_t self;
};

static int is_tagged(pid_t pid, void *ctx) {
  const struct tags *t = ctx;
  return pid != t->self && same_netns(pid, &t->ns) && tagged(pid, t->tag) && (!t->tag2 || tagged(pid, t->tag2));
}

int pit_node_signal(const char *run, const char *run_tag, int sig, int catchers_only, int *n, struct pit_err *e) {
  *n = 0;
  struct tags t = {.self = getpid()};
  if (stat("/proc/self/ns/net", &t.ns) < 0)
    return pit_err_errno(e, PIT_EIO, "cannot read this process's network namespace");
  char tag[PIT_NAME_MAX + 16], tag2[64];
  snprintf(tag, sizeof tag, "PITSTOP_RUN=%s", run);
  snprintf(tag2, sizeof tag2, "PITSTOP_RUN_TAG=%.40s", run_tag ? run_tag : "");
  t.tag = tag;
  t.tag2 = run_tag ? tag2 : NULL;
  if (catchers_only) {
    *n = ctl_signal_catchers_of(is_tagged, &t, sig);
    return 0;
  }
  DIR *d = opendir("/proc");
  if (!d)
    return pit_err_errno(e, PIT_EIO, "cannot list /proc");
  struct dirent *de;
  while ((de = readdir(d)))
    if (isdigit((unsigned char)de->d_name[0]) && is_tagged((pid_t)atoi(de->d_name), &t) &&
        kill((pid_t)atoi(de->d_name), sig) == 0)
      (*n)++;
  closedir(d);
  return 0;
}

int pit_node_release(const char *run, const char *run_tag, double grace_s, int *killed, struct pit_err *e) {
  *killed = 0;
  struct stat ns;
  if (stat("/proc/self/ns/net", &ns) < 0)
    return pit_err_errno(e, PIT_EIO, "cannot read this process's network namespace");
  char tag[PIT_NAME_MAX + 16], tag2[64];
  snprintf(tag, sizeof tag, "PITSTOP_RUN=%s", run);
  snprintf(tag2, sizeof tag2, "PITSTOP_RUN_TAG=%.40s", run_tag ? run_tag : "");
  const char *t2 = run_tag ? tag2 : NULL;
  struct daemons d = {{0}, 0};
  *killed = signal_tagged(tag, t2, &ns, SIGTERM, &d);
  if (*killed == 0)
    return 0;
  /* the tagged processes and the daemons they ran under, until none is left: an orted
   * that outlived its ranks held the killed generation's ssh session open on the host
   * while the next generation ran (sh_control_run_ssh, CI 2026-11-29) */
  for (double w = 0; w < grace_s; w += 0.05) {
    usleep(50000);
    if (signal_tagged(tag, t2, &ns, 0, &d) + signal_daemons(&d, 0) == 0)
      return 0;
  }
  signal_tagged(tag, t2, &ns, SIGKILL, &d);
  signal_daemons(&d, SIGKILL);
  for (int i = 0; i < 40; i++) {
    usleep(50000);
    if (signal_tagged(tag, t2, &ns, 0, &d) + signal_daemons(&d, 0) == 0)
      return 0;
  }
  return pit_err_set(e, PIT_ESTATE, "%d process(es) of run %s survive SIGKILL", signal_tagged(tag, t2, &ns, 0, &d), run);
}

/* Binds a stream socket of family fam to its wildcard address, port 0: the port the kernel gave, or -1. */
static int bound_port(int fam) {
  int s = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -1;
  struct sockaddr_storage a;
  memset(&a, 0, sizeof a);
  a.ss_family = (sa_family_t)fam;
  socklen_t len = fam == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  int port = -1;
  if (bind(s, (struct sockaddr *)&a, len) == 0 && getsockname(s, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(fam == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port : ((struct sockaddr_in *)&a)->sin_port);
  close(s);
  return port;
}

int pit_node_free_port(int *port, struct pit_err *e) {
  /* IPv6's wildcard takes IPv4's too (unless the host sets bindv6only): free on every address, as
   * torch's store listens ([::] and 0.0.0.0); a host without IPv6 has only IPv4's */
  int p = bound_port(AF_INET6);
  if (p <= 0)
    p = bound_port(AF_INET);
  if (p <= 0)
    return pit_err_errno(e, PIT_EIO, "cannot bind a socket to a free port");
  *port = p;
  return 0;
}
