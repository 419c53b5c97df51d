/* test_local_register.c — the local provider's machine register (provider_local.c):
 * two runs (two state directories) that start nodes one right after the other,
 * before any process runs in them, get different CPUs while one is free (until
 * 2026-11-29 both took the first CPU: only processes in other runs' cgroups were
 * seen); a node's link is made at its start and removed at its stop; a stale link
 * (its state file gone) is removed and its CPUs not counted. The register is a
 * temporary directory ($PITSTOP_LOCAL_REGISTRY), so other runs' registered nodes do
 * not change what this test sees; the spread is checked only while no other run's node has a
 * process here (the provider also spreads away from those: a run of the suite beside this test
 * made both runs share the CPU left, a failure that was not this code's). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/catalog.h"
#include "pitstop/provider.h"

static int links(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d)))
    n += de->d_name[0] != '.';
  if (d)
    closedir(d);
  return n;
}

/* 1 when a node of another run on this machine has a process now (a pitstop.* cgroup whose
 * cgroup.procs is not empty): the provider spreads away from its CPUs as well, so with two CPUs the
 * two test runs may share the one left (another test of the suite running beside this one). */
static int others_running(void) {
  const char *roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/cpu"};
  for (int r = 0; r < 2; r++) {
    DIR *d = opendir(roots[r]);
    struct dirent *de;
    while (d && (de = readdir(d))) {
      if (strncmp(de->d_name, "pitstop.", 8) != 0)
        continue;
      char procs[600];
      snprintf(procs, sizeof procs, "%s/%s/cgroup.procs", roots[r], de->d_name);
      FILE *f = fopen(procs, "re");
      int pid, any = f && fscanf(f, "%d", &pid) == 1;
      if (f)
        fclose(f);
      if (any) {
        closedir(d);
        return 1;
      }
    }
    if (d)
      closedir(d);
  }
  return 0;
}

int main(void) {
  char base[] = "/tmp/pit-register-XXXXXX";
  CHECK(mkdtemp(base) != NULL, "a temporary directory");
  char reg[256], sa[256], sb[256], cat[256];
  snprintf(reg, sizeof reg, "%s/reg", base);
  snprintf(sa, sizeof sa, "%s/a", base);
  snprintf(sb, sizeof sb, "%s/b", base);
  setenv("PITSTOP_LOCAL_REGISTRY", reg, 1);
  snprintf(cat, sizeof cat, "%s/catalogs/local.tsv", getenv("PIT_SOURCE_DIR") ? getenv("PIT_SOURCE_DIR") : "..");
  struct pit_catalog c;
  struct pit_err e = {0};
  CHECK(pit_catalog_load(&c, cat, &e) == 0, "catalog: %s", e.msg);
  struct pit_provider pa, pb;
  struct pit_provider_conf ca = {.run = "twin", .state_dir = sa, .catalog = &c, .self_exe = "/bin/true", .slots = 1};
  struct pit_provider_conf cb = ca;
  cb.state_dir = sb;
  CHECK(pit_provider_open(&pa, "local", &ca, &e) == 0, "open a: %s", e.msg);
  CHECK(pit_provider_open(&pb, "local", &cb, &e) == 0, "open b: %s", e.msg);
  /* a stale link: a node of a run whose state file is gone, said to hold every CPU */
  CHECK(mkdir(reg, 0700) == 0, "the register's directory");
  char stale[512];
  snprintf(stale, sizeof stale, "%s/00000000.gone.0", reg);
  CHECK(symlink("/nonexistent/pitstop/nodes/gone.0.node", stale) == 0, "a stale link");
  struct pit_node na, nb;
  int quiet = !others_running(); /* before the starts and after them: no other run's node meanwhile */
  CHECK(pa.ops->start(&pa, "local-1", PIT_MARKET_DEFAULT, &na, &e) == 0, "start a: %s", e.msg);
  CHECK(access(stale, F_OK) != 0 && errno == ENOENT, "the stale link was removed");
  CHECK(links(reg) == 1, "one link after a's start (%d)", links(reg));
  CHECK(pb.ops->start(&pb, "local-1", PIT_MARKET_DEFAULT, &nb, &e) == 0, "start b: %s", e.msg);
  CHECK(links(reg) == 2, "two links after b's start (%d)", links(reg));
  cpu_set_t set;
  CPU_ZERO(&set);
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "affinity");
  int spread = CPU_COUNT(&set) >= 2 && quiet && !others_running();
  if (spread)
    CHECK(strcmp(na.cpus, nb.cpus) != 0, "two runs' nodes on CPU %s and %s with another free", na.cpus, nb.cpus);
  else if (CPU_COUNT(&set) >= 2)
    printf("another run's node has processes on this machine: the spread is not checked (%s, %s)\n", na.cpus,
           nb.cpus);
  else
    printf("one CPU here: the nodes share it (%s, %s)\n", na.cpus, nb.cpus);
  CHECK(pa.ops->stop(&pa, &na, &e) == 0, "stop a: %s", e.msg);
  CHECK(links(reg) == 1, "a's link removed at its stop (%d left)", links(reg));
  /* a's CPU is free again: a new node of a takes it back (b's is still taken) */
  struct pit_node na2;
  spread = spread && !others_running();
  CHECK(pa.ops->start(&pa, "local-1", PIT_MARKET_DEFAULT, &na2, &e) == 0, "start a again: %s", e.msg);
  if (spread && !others_running())
    CHECK(strcmp(na2.cpus, nb.cpus) != 0, "a's new node on b's CPU %s", nb.cpus);
  CHECK(pa.ops->stop(&pa, &na2, &e) == 0, "stop a: %s", e.msg);
  CHECK(pb.ops->stop(&pb, &nb, &e) == 0, "stop b: %s", e.msg);
  CHECK(links(reg) == 0, "no link left (%d)", links(reg));
  pit_provider_close(&pa);
  pit_provider_close(&pb);
  pit_catalog_release(&c);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  (void)!system(cmd);
  return check_done();
}
