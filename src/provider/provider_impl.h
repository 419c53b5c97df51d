/* provider_impl.h — private to src/provider/: the provider implementations'
 * registry entries, the macro that declares one, and the node files of the
 * providers that keep state (ssh, slurm, command). */
#ifndef PIT_PROVIDER_IMPL_H
#define PIT_PROVIDER_IMPL_H

#include "pitstop/provider.h"
#include "provider/procs.h"

extern const struct pit_provider_ops pit_provider_local;
extern const struct pit_provider_ops pit_provider_ssh;
extern const struct pit_provider_ops pit_provider_slurm;
extern const struct pit_provider_ops pit_provider_command;

/* One way to declare a provider: the operations every provider has, named
 * <prefix>_open, _start, _stop, _list, _health, _wrap, _close in its file.
 * The optional ones (mpi_args, poll, clear, signal) follow the macro in
 * the initializer:
 *   const struct pit_provider_ops pit_provider_x = {PIT_PROVIDER_OPS(x, "x", "help")};
 */
#define PIT_PROVIDER_OPS(prefix, name_, help_)                                                                 \
  .name = (name_), .help = (help_), .open = prefix##_open, .start = prefix##_start, .stop = prefix##_stop,     \
  .list = prefix##_list, .health = prefix##_health, .wrap = prefix##_wrap, .close = prefix##_close

/* ctl_node_orphan: procs.h (the controller's reconcile uses it too). */

/* The words pitstop runs on a node through a remote shell (the ssh provider's, a command
 * provider's ssh wrap), unquoted: w[0..n) point into the struct's own buffers or p's strings. */
struct ctl_node_words {
  const char *w[9];
  int n;
  char tag[9], num[16], cwd[1024];
};
/* `PITSTOP node-exec --addr HOST --cd DIR --`, the per-node command's prefix there: node-exec sets
 * GLOO_SOCKET_IFNAME to the interface holding HOST's address and enters DIR, this process's
 * directory (the login's home otherwise: a user's relative `python3 train.py` is not found). */
void ctl_node_exec_words(const struct pit_provider *p, const char *host, struct ctl_node_words *nw);
/* `PITSTOP node-check --release RUN --run-tag TAG [--signal N [--catchers]]` (sig 0: no signal):
 * the run's processes there (this run directory's only) killed, or sent sig; it prints how many. */
void ctl_node_check_words(const struct pit_provider *p, int sig, int catchers_only, struct ctl_node_words *nw);

/* Node files (node_files.c): STATE_DIR/nodes/ID.node, one line each. */
struct ctl_node_id {
  char id[PIT_NAME_MAX];
};
int ctl_node_file_write(const char *state_dir, const char *id, const char *text, struct pit_err *e);
/* -1 when the file cannot be read. */
int ctl_node_file_read(const char *state_dir, const char *id, char *buf, size_t n);
int ctl_node_file_remove(const char *state_dir, const char *id, struct pit_err *e);
/* The ids of every node file (malloc'd array, caller frees). */
int ctl_node_files(const char *state_dir, struct ctl_node_id **ids, int *n, struct pit_err *e);

#endif
