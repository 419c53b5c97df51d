/* cpus.c — what CPU this process really has: the CPUs its affinity mask lets
 * it run on (mpirun binds a rank to one core) and the CPU quota of its cgroup
 * (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us / cpu.cfs_period_us), the
 * smallest quota on the way from its own cgroup up to the root.
 *
 * Invariants: reading never fails the caller — what cannot be read is "not
 * limited" (all online CPUs, quota 0); usable >= 1.
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pitstop/util.h"

/* "0-1,4" from the mask. */
static void mask_list(const cpu_set_t *m, char *out, size_t cap) {
  size_t n = 0;
  out[0] = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, m))
      continue;
    int d = c;
    while (d + 1 < CPU_SETSIZE && CPU_ISSET(d + 1, m))
      d++;
    int w = d > c ? snprintf(out + n, n < cap ? cap - n : 0, "%s%d-%d", n ? "," : "", c, d)
                  : snprintf(out + n, n < cap ? cap - n : 0, "%s%d", n ? "," : "", c);
    if (w < 0 || n + (size_t)w >= cap) { /* too long: say so, keep it valid */
      snprintf(out, cap, "%s", "many");
      return;
    }
    n += (size_t)w;
    c = d;
  }
}

static int read_line(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char *ok = fgets(buf, (int)cap, f);
  fclose(f);
  return ok ? 0 : -1;
}

/* The quota (CPUs) in directory dir of one hierarchy, 0 if none there. */
static double quota_in(const char *dir, int v2) {
  char path[1100], buf[128];
  if (v2) {
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    if (read_line(path, buf, sizeof buf))
      return 0;
    char q[32];
    double period;
    if (sscanf(buf, "%31s %lf", q, &period) != 2 || strcmp(q, "max") == 0 || period <= 0)
      return 0;
    double quota = atof(q);
    return quota > 0 ? quota / period : 0;
  }
  snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
  if (read_line(path, buf, sizeof buf))
    return 0;
  double quota = atof(buf);
  snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
  if (quota <= 0 || read_line(path, buf, sizeof buf))
    return 0;
  double period = atof(buf);
  return period > 0 ? quota / period : 0;
}

/* Smallest quota from mount/rel up to mount (the process's cgroup and its parents). */
static double quota_up(const char *mount, const char *rel, int v2) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s%s", mount, strcmp(rel, "/") == 0 ? "" : rel);
  double best = 0;
  for (;;) {
    double q = quota_in(dir, v2);
    if (q > 0 && (best == 0 || q < best))
      best = q;
    if (strlen(dir) <= strlen(mount))
      break;
    char *s = strrchr(dir, '/');
    if (!s || s < dir + strlen(mount))
      break;
    *s = 0;
  }
  return best;
}

double pit_cpu_quota(const char *proc_cgroup, const char *cgroup_root) {
  FILE *f = fopen(proc_cgroup ? proc_cgroup : "/proc/self/cgroup", "r");
  const char *root = cgroup_root ? cgroup_root : "/sys/fs/cgroup";
  if (!f)
    return 0;
  char line[1024];
  double best = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
      continue;
    *c1 = *c2 = 0;
    const char *ctrl = c1 + 1, *rel = c2 + 1;
    double q = 0;
    char mount[512];
    if (strcmp(line, "0") == 0 && ctrl[0] == 0) { /* v2: 0::/path */
      q = quota_up(root, rel, 1);
    } else { /* v1: the hierarchy holding the cpu controller */
      char tmp[256];
      snprintf(tmp, sizeof tmp, ",%s,", ctrl);
      if (!strstr(tmp, ",cpu,"))
        continue;
      snprintf(mount, sizeof mount, "%s/%s", root, ctrl); /* e.g. /sys/fs/cgroup/cpu,cpuacct */
      if (access(mount, F_OK) != 0)
        snprintf(mount, sizeof mount, "%s/cpu", root);
      q = quota_up(mount, rel, 0);
    }
    if (q > 0 && (best == 0 || q < best))
      best = q;
  }
  fclose(f);
  return best;
}

void pit_cpus_probe(struct pit_cpus *c) {
  memset(c, 0, sizeof *c);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  c->online = online > 0 ? (int)online : 1;
  cpu_set_t m;
  CPU_ZERO(&m);
  if (sched_getaffinity(0, sizeof m, &m) == 0 && CPU_COUNT(&m) > 0) {
    c->affinity = CPU_COUNT(&m);
    mask_list(&m, c->list, sizeof c->list);
  } else {
    c->affinity = c->online;
    snprintf(c->list, sizeof c->list, "0-%d", c->online - 1);
  }
  c->quota = pit_cpu_quota(NULL, NULL);
  int usable = c->affinity;
  if (c->quota > 0 && ceil(c->quota) < usable)
    usable = (int)ceil(c->quota);
  c->usable = usable > 0 ? usable : 1;
}

int pit_cpus_threads(const struct pit_cpus *c, int ranks_here) {
  /* a rank bound to fewer CPUs than the node has owns them; an unbound one
   * shares the node's with the other ranks on it */
  int n = c->usable;
  if (c->affinity >= c->online && ranks_here > 1)
    n /= ranks_here;
  return n > 0 ? n : 1;
}
