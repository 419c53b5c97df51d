/* cmd_node.c — the commands pitstop runs on a node, not a user:
 * `pitstop node-exec`, the node wrapper (the local provider's: enter the
 * node's CPUs and cgroup; a remote shell's per-node launcher (ssh): --addr HOST,
 * GLOO_SOCKET_IFNAME set to the interface the other nodes reach this host
 * through unless it is set, --cd DIR, the controller's directory entered where it exists;
 * then exec the command), and `pitstop node-check`,
 * what the ssh provider runs on a host (check it can run pitstop, or release a
 * run's processes), and what the per-node launcher asks node 0's host for (--free-port: a TCP port
 * free there, for the rendezvous). Library: pit_node_enter, pit_node_iface, pit_node_check,
 * pit_node_release.
 * Invariant: options + library calls; node-exec returns only on failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/control.h"

int pit_cmd_node_exec(int argc, char **argv) {
  const char *cpus = NULL, *cgroup = NULL, *addr = NULL, *cd = NULL;
  int i = 1;
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--")) {
      i++;
      break;
    }
    if (!strcmp(argv[i], "--cpus") && i + 1 < argc)
      cpus = argv[++i];
    else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc)
      cgroup = argv[++i];
    else if (!strcmp(argv[i], "--addr") && i + 1 < argc)
      addr = argv[++i];
    else if (!strcmp(argv[i], "--cd") && i + 1 < argc)
      cd = argv[++i];
    else
      return pit_cli_usage("node-exec: unknown option '%s' (usage: node-exec [--cpus L] [--cgroup DIR] [--addr HOST] "
                           "[--cd DIR] -- CMD...)",
                           argv[i]);
  }
  if (i >= argc)
    return pit_cli_usage("node-exec: no command after --");
  struct pit_err e = {0};
  if (pit_node_enter(cpus, cgroup, &e) < 0)
    return pit_cli_fail(&e);
  const char *set = getenv("GLOO_SOCKET_IFNAME");
  if (addr && !(set && *set)) {
    char ifname[64];
    if (pit_node_iface(addr, ifname, sizeof ifname, &e) == 0)
      setenv("GLOO_SOCKET_IFNAME", ifname, 1);
    else /* the workload may not use gloo at all: said, not fatal */
      fprintf(stderr, "pitstop: warning: node-exec: GLOO_SOCKET_IFNAME not set: %s\n", e.msg);
  }
  /* --cd: the controller's directory, where a remote shell would otherwise start the command in
   * the login's home (as mpirun does: the same directory on every node, where it exists) */
  char here[1024];
  if (cd && chdir(cd) < 0)
    fprintf(stderr, "pitstop: warning: node-exec: cannot enter '%s' on this host (%s): the command runs in '%s'\n", cd,
            strerror(errno), getcwd(here, sizeof here) ? here : "?");
  execvp(argv[i], argv + i);
  fprintf(stderr, "pitstop: node-exec: cannot run '%s': %s\n", argv[i], strerror(errno));
  return 127;
}

/* pitstop node-check [--dir DIR] [--exe PROG] [--min-free-mb N] | --release RUN [--run-tag TAG]
 * [--signal N [--catchers]] | --free-port */
int pit_cmd_node_check(int argc, char **argv) {
  const char *dir = NULL, *exe = NULL, *release = NULL, *run_tag = NULL;
  double min_mb = 0, sig = 0;
  int catchers = 0, free_port = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--free-port")) {
      free_port = 1;
      continue;
    }
    if (i + 1 < argc && !strcmp(argv[i], "--dir"))
      dir = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--exe"))
      exe = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--release"))
      release = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--run-tag"))
      run_tag = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--min-free-mb") && pit_parse_f64(argv[i + 1], &min_mb) == 0)
      i++;
    else if (i + 1 < argc && !strcmp(argv[i], "--signal") && pit_parse_f64(argv[i + 1], &sig) == 0 && sig >= 1 &&
             sig <= 64 && sig == (int)sig)
      i++;
    else if (!strcmp(argv[i], "--catchers"))
      catchers = 1;
    else
      return pit_cli_usage("node-check: unknown option '%s' (usage: node-check [--dir DIR] [--exe PROG] "
                           "[--min-free-mb N] | --release RUN [--run-tag TAG] [--signal N [--catchers]] | "
                           "--free-port)",
                           argv[i]);
  }
  if ((sig || catchers) && !release)
    return pit_cli_usage("node-check: --signal and --catchers need --release RUN");
  if (free_port && (release || dir || exe || min_mb))
    return pit_cli_usage("node-check: --free-port takes no other option");
  struct pit_err e = {0};
  int n = 0, rc;
  if (free_port) {
    if ((rc = pit_node_free_port(&n, &e)) < 0)
      return pit_cli_fail(&e);
    printf("%d\n", n);
    return 0;
  }
  if (release && sig)
    rc = pit_node_signal(release, run_tag, (int)sig, catchers, &n, &e);
  else if (release)
    rc = pit_node_release(release, run_tag, 2.0, &n, &e);
  else
    rc = pit_node_check(dir, exe, min_mb, &e);
  if (rc < 0)
    return pit_cli_fail(&e);
  if (release)
    printf("%d process%s of run %s %s\n", n, n == 1 ? "" : "es", release, sig ? "signalled" : "stopped");
  return 0;
}
