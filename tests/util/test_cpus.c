/* test_cpus.c — pit_cpu_quota on fake cgroup trees (v1 and v2, a quota on a
 * parent, "max", none, unreadable files) and pit_cpus_probe / pit_cpus_threads
 * on this process (usable >= 1, within the affinity mask). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/util.h"

static char root[256];

static void put(const char *rel, const char *text) {
  char path[600], dir[600];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  snprintf(dir, sizeof dir, "%s", path);
  for (char *s = dir + strlen(root) + 1; (s = strchr(s, '/')); s++) {
    *s = 0;
    mkdir(dir, 0755);
    *s = '/';
  }
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "cannot write %s", path);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static double quota(const char *proc_text) {
  put("proc_cgroup", proc_text);
  char p[300], r[300];
  snprintf(p, sizeof p, "%s/proc_cgroup", root);
  snprintf(r, sizeof r, "%s/fs", root);
  return pit_cpu_quota(p, r);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/pit-test-cpus-%d", (int)getpid());
  mkdir(root, 0755);
  /* v2: the process's own cgroup has 40000/100000 */
  put("fs/job/cpu.max", "40000 100000\n");
  CHECK(quota("0::/job\n") == 0.4, "v2 own quota %g", quota("0::/job\n"));
  /* v2: "max" in the own cgroup, a parent limits to 1.5 */
  put("fs/a/cpu.max", "150000 100000\n");
  put("fs/a/b/cpu.max", "max 100000\n");
  CHECK(quota("0::/a/b\n") == 1.5, "v2 parent quota %g", quota("0::/a/b\n"));
  /* v2: the smaller of own and parent wins */
  put("fs/a/c/cpu.max", "50000 100000\n");
  CHECK(quota("0::/a/c\n") == 0.5, "v2 smaller %g", quota("0::/a/c\n"));
  /* none anywhere, or files missing */
  CHECK(quota("0::/nowhere\n") == 0, "v2 none");
  CHECK(quota("garbage\n") == 0, "garbage");
  /* v1: the cpu hierarchy (here "cpu,cpuacct"), quota -1 is none */
  put("fs/cpu,cpuacct/pit/cpu.cfs_quota_us", "25000\n");
  put("fs/cpu,cpuacct/pit/cpu.cfs_period_us", "100000\n");
  CHECK(quota("5:memory:/pit\n4:cpu,cpuacct:/pit\n") == 0.25, "v1 quota %g",
        quota("5:memory:/pit\n4:cpu,cpuacct:/pit\n"));
  put("fs/cpu,cpuacct/free/cpu.cfs_quota_us", "-1\n");
  put("fs/cpu,cpuacct/free/cpu.cfs_period_us", "100000\n");
  CHECK(quota("4:cpu,cpuacct:/free\n") == 0, "v1 -1 is none");
  /* v1 mounted as plain "cpu" (cpuacct elsewhere) */
  put("fs/cpu/x/cpu.cfs_quota_us", "200000\n");
  put("fs/cpu/x/cpu.cfs_period_us", "100000\n");
  CHECK(quota("2:cpuacct:/x\n1:cpu:/x\n") == 2, "v1 cpu mount %g", quota("2:cpuacct:/x\n1:cpu:/x\n"));
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK(system(cmd) == 0, "cleanup");

  /* this process */
  struct pit_cpus c;
  pit_cpus_probe(&c);
  CHECK(c.online >= 1 && c.affinity >= 1 && c.affinity <= c.online, "affinity %d online %d", c.affinity,
        c.online);
  CHECK(c.usable >= 1 && c.usable <= c.affinity, "usable %d", c.usable);
  CHECK(c.list[0] >= '0' && c.list[0] <= '9', "list '%s'", c.list);
  /* threads: a bound rank keeps its CPUs; an unbound one shares the node's */
  struct pit_cpus bound = {.online = 8, .affinity = 2, .usable = 2};
  CHECK(pit_cpus_threads(&bound, 4) == 2, "bound");
  struct pit_cpus all = {.online = 8, .affinity = 8, .usable = 8};
  CHECK(pit_cpus_threads(&all, 4) == 2 && pit_cpus_threads(&all, 1) == 8 && pit_cpus_threads(&all, 16) == 1,
        "unbound");
  struct pit_cpus quota1 = {.online = 2, .affinity = 2, .quota = 0.4, .usable = 1};
  CHECK(pit_cpus_threads(&quota1, 1) == 1, "quota");
  return check_done();
}
