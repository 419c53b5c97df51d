/* procs.c — what the controller needs of processes beyond starting them:
 * signalling the processes of a workload that asked for a signal, killing
 * what a cgroup holds, reading small /proc and /sys files (a short command
 * run with a time-out is util/child.c's pit_child_capture).
 * Invariant: only processes of the given group or file are touched. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/procs.h"

int ctl_read_small(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t at = 0;
  while (at + 1 < n) {
    ssize_t k = read(fd, buf + at, n - 1 - at);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    at += (size_t)k;
  }
  close(fd);
  buf[at] = 0;
  return 0;
}

/* pgrp and parent of pid from /proc/PID/stat (fields 4 and 5, after the parenthesised name); -1: gone or a zombie. */
static pid_t pgrp_of(pid_t pid, pid_t *parent) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if (ctl_read_small(path, buf, sizeof buf) < 0)
    return -1;
  char *p = strrchr(buf, ')');
  int ppid, pgrp;
  char state;
  if (!p || sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) != 3 || state == 'Z')
    return -1;
  *parent = (pid_t)ppid;
  return pgrp;
}

static int catches(pid_t pid, int sig) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  if (ctl_read_small(path, buf, sizeof buf) < 0)
    return 0;
  char *p = strstr(buf, "SigCgt:");
  if (!p)
    return 0;
  unsigned long long mask = strtoull(p + 7, NULL, 16);
  return (int)((mask >> (sig - 1)) & 1);
}

#define CATCHERS_MAX 4096 /* catchers of one group weighed; any more are signalled as top-most */

int ctl_signal_catchers_of(int (*member)(pid_t pid, void *ctx), void *ctx, int sig) {
  DIR *d = opendir("/proc");
  if (!d)
    return 0;
  pid_t pid[CATCHERS_MAX], ppid[CATCHERS_MAX]; /* the members that catch sig (32 KiB) */
  int m = 0, n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!isdigit((unsigned char)de->d_name[0]))
      continue;
    pid_t p = (pid_t)atoi(de->d_name), pp = 0;
    if (pgrp_of(p, &pp) < 0 || !member(p, ctx) || !catches(p, sig))
      continue;
    if (m < CATCHERS_MAX) {
      pid[m] = p;
      ppid[m++] = pp;
    } else if (kill(p, sig) == 0) {
      n++;
    }
  }
  closedir(d);
  /* only the top-most: a catcher below another gets it from that one (mpirun forwards to its
   * ranks; a rank's forked data workers are not the workload), not twice */
  for (int i = 0; i < m; i++) {
    int below = 0;
    for (int up = ppid[i], hops = 0; up > 1 && !below && hops < 64; hops++) {
      int k = 0;
      while (k < m && pid[k] != up)
        k++;
      if (k < m) {
        below = 1;
      } else {
        pid_t next = 0;
        if (pgrp_of(up, &next) < 0 || !member(up, ctx))
          break; /* out of the members: no catcher of them above */
        up = next;
      }
    }
    if (!below && kill(pid[i], sig) == 0)
      n++;
  }
  return n;
}

static int in_group(pid_t pid, void *ctx) {
  pid_t parent;
  return pgrp_of(pid, &parent) == *(const pid_t *)ctx;
}

int ctl_signal_catchers(pid_t pgid, int sig) { return ctl_signal_catchers_of(in_group, &pgid, sig); }

static int kill_listed_once(const char *file, int sig) {
  char buf[65536];
  if (ctl_read_small(file, buf, sizeof buf) < 0)
    return 0;
  int n = 0;
  for (char *s = buf; *s;) {
    char *end;
    long pid = strtol(s, &end, 10);
    if (end == s)
      break;
    if (pid > 1 && kill((pid_t)pid, sig) == 0)
      n++;
    s = end;
    while (*s == '\n' || *s == ' ')
      s++;
  }
  return n;
}

int ctl_kill_listed(const char *procs_file, double grace_s) {
  if (kill_listed_once(procs_file, SIGTERM) == 0)
    return 0;
  for (double waited = 0; waited < grace_s; waited += 0.02) {
    usleep(20000);
    if (kill_listed_once(procs_file, 0) == 0)
      return 0;
  }
  kill_listed_once(procs_file, SIGKILL);
  for (int i = 0; i < 100; i++) {
    usleep(20000);
    if (kill_listed_once(procs_file, 0) == 0)
      return 0;
  }
  return kill_listed_once(procs_file, 0);
}

int ctl_shell_quote(const char *s, char *out, size_t n) {
  size_t k = 0;
  if (n < 3)
    return -1;
  out[k++] = '\'';
  for (; *s; s++) {
    if (*s == '\'') {
      if (k + 5 >= n)
        return -1;
      memcpy(out + k, "'\\''", 4);
      k += 4;
    } else {
      if (k + 2 >= n)
        return -1;
      out[k++] = *s;
    }
  }
  out[k++] = '\'';
  out[k] = 0;
  return 0;
}
