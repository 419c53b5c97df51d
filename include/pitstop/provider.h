/* pitstop/provider.h — where an elastic run's nodes come from: memberships as
 * `pitstop run` takes them (instance types, node counts, each node's market),
 * and providers (vtable): start one node of a type, stop it, list the run's
 * nodes that exist, check one, and say how to run a command on it; the
 * local provider's node wrapper and the ssh provider's host side (pitstop
 * node-exec, node-check). docs/providers.md describes the providers.
 *
 * Invariants: the library never prints (warnings reach the caller through
 * callbacks); children start from argv, never a shell line; a provider is used
 * only between a successful open and close.
 */
#ifndef PITSTOP_PROVIDER_H
#define PITSTOP_PROVIDER_H

#include "pitstop/record.h"
#include "pitstop/catalog.h"
#include "pitstop/util.h"

/* ---------------- 1. membership ---------------- */

/* struct pit_membership (record.h) as `pitstop run` takes it: TYPE:N entries
 * joined by '+', and a count alone meaning N nodes of deftype ("2",
 * "local-1:1+local-0.4:1", "3+local-0.4:1"). */
int pit_run_membership_parse(struct pit_membership *m, const char *text, const char *deftype, struct pit_err *e);
/* Nodes of type itype in m (0 if none). */
int pit_membership_count(const struct pit_membership *m, const char *itype);
/* A node's market is a field of its membership entry (enum pit_market,
 * record.h; DEFAULT: the provider's, the command provider's "spot" list, else
 * on-demand). m with the markets dropped (entries of one type merged): what the
 * cost and time policies, the observer and the store see. */
void pit_membership_bare(const struct pit_membership *m, struct pit_membership *out);
/* bare with every entry on market mk (DEFAULT: the provider's); with cat, a
 * type cat gives no spot price stays on-demand. */
int pit_membership_on_market(const struct pit_membership *bare, enum pit_market mk, const struct pit_catalog *cat,
                             struct pit_membership *out, struct pit_err *e);
/* `--nnodes MIN:MAX` (1 <= MIN <= MAX). */
int pit_nnodes_parse(const char *text, int *nmin, int *nmax, struct pit_err *e);

/* ---------------- 2. providers ---------------- */

enum pit_launcher { PIT_LAUNCH_MPI = 0, PIT_LAUNCH_PER_NODE };

enum pit_node_state { PIT_NODE_READY = 0, PIT_NODE_STOPPED, PIT_NODE_LOST };

#define PIT_ZONE_MAX 32
struct pit_node {
  char id[PIT_NAME_MAX];     /* unique within the provider, e.g. "r1.local-1.0" */
  char itype[PIT_NAME_MAX];
  char host[128];            /* where ranks run ("localhost" for the local provider) */
  char cpus[64];             /* local: CPU list the node's ranks are pinned to ("0", "1") */
  double cpu_quota;          /* local: its cgroup's CPU limit in cores' worth (0.4; 1 for local-1); 0: no cgroup */
  char cgroup[256];          /* local: cgroup directory, "" when quotas are unavailable */
  int slots;                 /* ranks it holds */
  enum pit_node_state state;
  double price_h;            /* from the catalog */
  double t_start, t_ready, t_stop; /* run seconds (monotonic, controller clock); NaN: not yet */
  int spot;                  /* started on the spot market (price_h is then the spot price) */
  double waste_s;            /* seconds billed by failed or hung start attempts before this node came up */
  char why[96];              /* why the controller started it (for the report) */
  char zone[PIT_ZONE_MAX];   /* the zone it was started in ("": the provider's default) */
  int name_only;             /* list: found by the run's name alone (a cloud tag), with no node file of this
                                run directory's: a crash between its start and its file, or a node of
                                another live run given the same --run (the local and slurm providers'
                                names carry the run directory's tag, so they never set it) */
};

/* What a provider's poll reports about a node of the run. */
enum pit_node_event_kind { PIT_NODE_NOTICE = 1, /* about to be reclaimed (a spot notice) */
                           PIT_NODE_GONE };     /* no longer exists (reclaimed, terminated) */
struct pit_node_event {
  char id[PIT_NAME_MAX];
  enum pit_node_event_kind kind;
  double grace_s;            /* NOTICE: seconds until the node goes */
};

struct pit_provider_conf {
  const char *run;                  /* run id: nodes are named and tagged with it */
  const char *state_dir;            /* the provider keeps what it must remember here */
  const struct pit_catalog *catalog;
  const char *self_exe;             /* this pitstop binary (the local provider's node-exec) */
  int slots;                        /* ranks per node */
  pit_warn_fn warn;                 /* may be NULL */
  void *warn_ctx;
  enum pit_launcher launcher;       /* how ranks start (ssh: mpirun reaches the hosts itself) */
  const char *exe;                  /* the workload's program, which a host must have (NULL: self_exe) */
  const char *hostfile;             /* ssh: Open MPI-style "HOST slots=N [itype=T]" lines */
  const char *ssh_opts;             /* ssh: options of every ssh call, split at blanks (NULL: $PITSTOP_SSH_OPTS) */
  const char *partition;            /* slurm: partition of every allocation (NULL: the type's name when
                                       Slurm has a partition of that name, else its default) */
  double timeout_s;                 /* ssh/slurm: bound on one start, check or stop (0: 20 s) */
  const char *config;               /* the provider's own config file (--provider-config); NULL: none */
};
/* All strings in pit_provider_conf are borrowed: they outlive the provider. */

#define PIT_WRAP_MAX 64
#define PIT_ZONES_MAX 8
struct pit_provider;
struct pit_provider_ops {
  const char *name;
  const char *help;
  int (*open)(struct pit_provider *p, struct pit_err *e);
  /* Starts one node of type itype on market mk (DEFAULT: the provider's; a
   * provider without spot_market is only asked for DEFAULT) and fills n
   * (state READY when it returns 0). */
  int (*start)(struct pit_provider *p, const char *itype, enum pit_market mk, struct pit_node *n,
               struct pit_err *e);
  /* Stops n and everything running on it. Stopping a node that is gone is not an error. */
  int (*stop)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* The run's nodes that exist now (malloc'd array, caller frees). */
  int (*list)(struct pit_provider *p, struct pit_node **nodes, int *n, struct pit_err *e);
  /* 0 when n can run ranks. */
  int (*health)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* The argv prefix that runs a command on n (NULL-terminated, static strings
   * or strings owned by the provider until the next call); *n_out entries;
   * the caller gives cap >= PIT_WRAP_MAX (ssh: its prefix and every ssh option). */
  int (*wrap)(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *n_out,
              struct pit_err *e);
  void (*close)(struct pit_provider *p);
  /* Optional (NULL: none): options mpirun needs to reach the nodes (ssh:
   * plm_rsh_agent), owned as wrap's. */
  int (*mpi_args)(struct pit_provider *p, const char **argv, int cap, int *n_out, struct pit_err *e);
  /* May be NULL. Called at every turn of the controller's loop (the provider
   * limits how often it asks its cloud): fills up to cap events about the
   * run's nodes, each reported once. */
  int (*poll)(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e);
  /* May be NULL (the run's processes on a node die with the controller's
   * process groups). Kills what the run left running on n (a killed
   * controller's workload) and keeps n: called before a restarted controller
   * adopts n, so no generation runs there twice. */
  int (*clear)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* 1: the provider has a spot market (start takes PIT_MARKET_SPOT and
   * PIT_MARKET_ON_DEMAND); 0: the controller refuses a spot entry before any
   * node starts and asks for DEFAULT. */
  int spot_market;
  /* May be NULL: 1 while a process of the run still runs on n, 0 when none,
   * < 0 when the provider cannot tell (local without cgroups). A provider with
   * it lets `pitstop run` shrink a generation of pitstop train in place: the
   * ranks of the nodes removed leave, the others go on (docs/run.md), and the
   * leaving nodes are stopped once their processes are gone. */
  int (*busy)(struct pit_provider *p, const struct pit_node *n);
  /* May be NULL (the processes the controller started are the workload, and a
   * signal to their process groups reaches it). Sends sig to the run's
   * processes on n (catchers_only: the top-most of them that catch it) where
   * the per-node launcher's command runs under a remote shell (ssh): a signal
   * to the local client would end the session, not tell the workload, and
   * lose what it prints after. Returns how many were signalled, or < 0. */
  int (*signal)(struct pit_provider *p, const struct pit_node *n, int sig, int catchers_only, struct pit_err *e);
};

struct pit_provider {
  const struct pit_provider_ops *ops;
  struct pit_provider_conf conf;
  void *impl;                       /* owned by the implementation */
  double waste_s, waste_usd;        /* billed by start attempts that failed or hung (the provider adds) */
  /* zones (the command provider's "zones" list, set at open; 0: none): the
   * controller names the zone of the next start in zone ("": the default) */
  int nzones;
  char zones[PIT_ZONES_MAX][PIT_ZONE_MAX];
  char zone[PIT_ZONE_MAX];
  /* 1 (set at open): the wrap runs the command through a remote shell that does not carry the
   * environment (ssh; the command provider's wrap when it is an ssh or says "wrap_shell"): the
   * launcher appends `env NAME=value...` and the command, each word quoted for that shell, and
   * sends the workload's signals through the provider's signal op */
  int wrap_shell;
};

/* The provider registry: "local" (this machine's CPUs, cgroup quotas),
 * "ssh" (a pool of hosts from a hostfile), "slurm" (one allocation per node),
 * "command" (any cloud CLI through argv templates; presets aws and clap). */
const struct pit_provider_ops *pit_provider_find(const char *name);
/* Names of every provider, ", "-separated, for messages, into buf (n bytes;
 * cut to fit); returns buf. */
const char *pit_provider_names(char *buf, size_t n);
int pit_provider_open(struct pit_provider *p, const char *name, const struct pit_provider_conf *conf,
                      struct pit_err *e);
void pit_provider_close(struct pit_provider *p);

/* tag: 8 hex digits, the CRC-32 of run_dir's real path (as given when it does not
 * exist): what tells two runs given one name (--run) in two directories apart
 * wherever a name is shared by a whole machine, cluster or pool of hosts (the
 * local provider's cgroups, Slurm's job names, PITSTOP_RUN_TAG of the processes
 * on an ssh host). */
void pit_run_tag(const char *run_dir, char tag[9]);

/* The local provider's node wrapper (pitstop node-exec): pins the calling
 * process to cpus, joins cgroup (if not ""), then the caller execs. */
int pit_node_enter(const char *cpus, const char *cgroup, struct pit_err *e);

/* The ssh provider's per-node wrapper (pitstop node-exec --addr HOST): the
 * up, non-loopback interface of this host that the other nodes reach it
 * through, into name: the one holding an address of host (the hostfile's name
 * for this host, resolved here), else the one holding the address ssh came in
 * by ($SSH_CONNECTION), else the one the routes toward host leave by. The
 * launcher sets GLOO_SOCKET_IFNAME to it (unless set): gloo would otherwise
 * bind to what the host's own name resolves to, a loopback address on a
 * Debian host (127.0.1.1) or one no resolver knows (src/provider/node_iface.c).
 * PIT_ENOTFOUND when none. */
int pit_node_iface(const char *host, char *name, size_t cap, struct pit_err *e);

/* The ssh provider's host side (pitstop node-check, run on the host over
 * ssh). pit_node_check: 0 when this CPU has every instruction-set extension
 * the binary was compiled to use outside run-time dispatch (a -march=native
 * build copied to an older CPU would die of SIGILL: "pitstop cannot run there"),
 * dir has at least min_free_mb MiB free and exe (a path, or a name looked up in
 * PATH) can be run; otherwise the reason in e.
 * pit_node_release: kills (TERM, then KILL after grace_s) every process of
 * this network namespace whose environment holds PITSTOP_RUN=run and, when tag
 * is not NULL, PITSTOP_RUN_TAG=tag (pit_run_tag: only the run of that
 * directory, not another given the same name), and the Open MPI daemon (orted,
 * prted) each ran under; it returns once none of them is left (a daemon outlives
 * its ranks for a while); *killed: how many were signalled. */
int pit_node_check(const char *dir, const char *exe, double min_free_mb, struct pit_err *e);
int pit_node_release(const char *run, const char *tag, double grace_s, int *killed, struct pit_err *e);
/* pit_node_signal (node-check --signal N): sends sig to those same processes
 * (no daemon, no wait), or with catchers_only to the top-most of them that
 * catch it (a torchrun agent, which SIGUSR1 would kill, skipped while its
 * workers get it); *n: how many. */
int pit_node_signal(const char *run, const char *tag, int sig, int catchers_only, int *n, struct pit_err *e);
/* pit_node_free_port (node-check --free-port): a TCP port free on every address of this host now
 * (bound to port 0, then released: the kernel's choice from its ephemeral range), for the
 * per-node launcher's rendezvous (PITSTOP_MASTER_PORT), which node 0's host must be able to listen on. */
int pit_node_free_port(int *port, struct pit_err *e);

#endif
