/* procs.h — private to src/provider/ and the controller (src/control): what
 * they need of processes beyond starting them (procs.c), and the node a
 * provider's listing shows that no record or node file names (provider.c). */
#ifndef PIT_PROVIDER_PROCS_H
#define PIT_PROVIDER_PROCS_H

#include <stddef.h>
#include <sys/types.h>

struct pit_node;
/* A node the provider's own listing shows but no node file names (a crash
 * between starting it and writing its file): zeroed, named id, of type itype
 * ("?" when NULL or empty), lost (to be stopped), times unknown (provider.c). */
void ctl_node_orphan(struct pit_node *n, const char *id, const char *itype);

/* Reads a whole small file into buf (NUL-terminated); -1 if it cannot. */
int ctl_read_small(const char *path, char *buf, size_t n);
/* Sends sig to every process of process group pgid that catches sig (its
 * SigCgt bit is set in /proc/PID/status) and has no catcher of the group
 * above it; returns how many were signalled. A launcher (mpirun) forwards to
 * its ranks, which so get it once, not twice; a torchrun agent, which would
 * die of SIGUSR1, is skipped while its workers, which catch it, get it. */
int ctl_signal_catchers(pid_t pgid, int sig);
/* The same over the processes member(pid, ctx) says are the workload's (the
 * ssh provider's host side: those tagged with the run, pit_node_signal). */
int ctl_signal_catchers_of(int (*member)(pid_t pid, void *ctx), void *ctx, int sig);
/* Kills every process whose pid is listed in file (a cgroup.procs): TERM,
 * up to grace_s, then KILL. Returns the number still alive (0 on success). */
int ctl_kill_listed(const char *procs_file, double grace_s);

/* s quoted for a POSIX shell ('...', a ' as '\''): what ssh's remote shell
 * turns back into the one word s. -1 when it does not fit in n. */
int ctl_shell_quote(const char *s, char *out, size_t n);

#endif
