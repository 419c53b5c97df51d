/* control_impl.h — private to src/control/: provider implementations and the
 * controller's process helpers. */
#ifndef PIT_CONTROL_IMPL_H
#define PIT_CONTROL_IMPL_H

#include <sys/types.h>

#include "pitstop/control.h"

extern const struct pit_provider_ops pit_provider_local;

/* Reads a whole small file into buf (NUL-terminated); -1 if it cannot. */
int ctl_read_small(const char *path, char *buf, size_t n);
/* Sends sig to every process of process group pgid that catches sig (its
 * SigCgt bit is set in /proc/PID/status); returns how many were signalled.
 * A launcher (mpirun) forwards; a torchrun agent, which would die of
 * SIGUSR1, is skipped while its workers, which catch it, get it. */
int ctl_signal_catchers(pid_t pgid, int sig);
/* Kills every process whose pid is listed in file (a cgroup.procs): TERM,
 * up to grace_s, then KILL. Returns the number still alive (0 on success). */
int ctl_kill_listed(const char *procs_file, double grace_s);

#endif
