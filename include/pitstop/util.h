/* pitstop/util.h — error reporting, monotonic clock, atomic file writes,
 * array growth, child processes, gnuplot, JSON printing.
 *
 * The library never exits or prints: a failing function returns a negative
 * PIT_E* code and fills a struct pit_err with one human-readable message that
 * names the file (and line) concerned. Only the CLI prints it, as
 * "pitstop: <msg>" (plus an optional hint).
 */
#ifndef PITSTOP_UTIL_H
#define PITSTOP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pit_errcode {
  PIT_OK = 0,
  PIT_EIO = -1,      /* file system or device error (errno-based) */
  PIT_EFORMAT = -2,  /* malformed or truncated input */
  PIT_EARG = -3,     /* invalid argument / option value */
  PIT_ENOMEM = -4,   /* allocation failed */
  PIT_ELIB = -5,     /* a library (oneDNN, SQLite, MPI, ...) reported failure */
  PIT_ESTATE = -6,   /* operation not valid in the current state */
  PIT_ENOTFOUND = -7, /* named thing (model, run, file) does not exist */
  PIT_EBUG = -8      /* an impossible state was reached: a defect in pitstop (PIT_BUG) */
};

struct pit_err {
  int code;          /* one of enum pit_errcode; 0 when no error */
  char msg[512];     /* e.g. "cannot open 'x.gz': No such file or directory" */
  char hint[256];    /* optional: what the user can do; empty if none */
};

/* Sets e (if non-NULL) and returns code, so callers can `return pit_err_set(...)`. */
int pit_err_set(struct pit_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like pit_err_set, appending ": strerror(errno)". */
int pit_err_errno(struct pit_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pit_err_hint(struct pit_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pit_err_clear(struct pit_err *e);
/* A warning the library reports and goes on (e.g. a corrupted checkpoint skipped for
 * the previous one): e->msg names the file and the reason. The caller prints it. */
typedef void (*pit_warn_fn)(void *ctx, const struct pit_err *e);

/* For states that cannot happen (an unknown enum value, a broken invariant):
 * `return PIT_BUG(e, "unknown mode %d", m);` sets PIT_EBUG with a message
 * naming the source file:line, and returns it. Never aborts: the caller's
 * error path runs as for any other failure. */
#define PIT_BUG(e, ...) pit_err_bug((e), __FILE__, __LINE__, __VA_ARGS__)
int pit_err_bug(struct pit_err *e, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Grows the malloc'd array *ptr (of *cap elements of elem bytes) so it holds
 * at least need elements: capacity doubles (at least 16), *ptr and *cap are
 * updated. On failure *ptr and *cap are unchanged (the array still valid) and
 * PIT_ENOMEM is returned; e is not touched (the caller names what it grew). */
int pit_grow(void *ptr, size_t *cap, size_t need, size_t elem);
/* PIT_GROW(p, n, cap): room for n elements in p (cap a size_t, or any integer
 * lvalue through pit_grow's size_t); 0 or PIT_ENOMEM. */
#define PIT_GROW(p, n, cap) pit_grow(&(p), &(cap), (size_t)(n), sizeof *(p))

/* Frees each of n pointers (NULL ones are skipped, as by free). Behind
 * PIT_FREE_ALL(a, b, ...): a release function names the buffers its struct
 * owns in one statement, e.g. PIT_FREE_ALL(r->compute_s, r->wait_s, r->path). */
void pit_free_many(void *const *p, size_t n);
#define PIT_FREE_ALL(...)                                                                          \
  pit_free_many((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* Monotonic clock, seconds. The only clock used for durations. */
double pit_now(void);

/* Atomic file write: data goes to "<path>.tmp.<pid>", which is fsynced,
 * renamed over path, and the directory fsynced. On failure the temp file is
 * removed and path is untouched. */
struct pit_atomic_file {
  FILE *fp;          /* write through this */
  char *path;        /* final path */
  char *tmp;         /* temporary path; NULL: written in place (a device, FIFO or socket) */
};
int pit_atomic_open(struct pit_atomic_file *af, const char *path, struct pit_err *e);
int pit_atomic_commit(struct pit_atomic_file *af, struct pit_err *e); /* closes */
void pit_atomic_abort(struct pit_atomic_file *af);                     /* closes, removes tmp */

/* Writes n bytes through af (a fault point, see below); 0, or -1 with errno set. */
int pit_atomic_write(struct pit_atomic_file *af, const void *data, size_t n);
/* Makes path a second name of the existing file target (same directory), atomically:
 * a hard link "<path>.tmp.<pid>" renamed over path, the directory fsynced. */
int pit_atomic_link(const char *target, const char *path, struct pit_err *e);
/* Removes the temp files "<name>.tmp.<pid>" in dir whose pid is not a live process
 * (left by a crash); never another live process's. *removed (may be NULL) counts them. */
int pit_atomic_sweep(const char *dir, int *removed, struct pit_err *e);

/* Fault injection, for tests only. Every write, flush, fsync, link and rename of
 * this file's functions is a fault point. pit_fault_arm(n, crash): the n-th point
 * from now fails with EIO (crash = 0) or ends the process with _exit(86) at once
 * (crash = 1, as a power cut would, leaving temp files behind); n = 0 disarms.
 * pit_fault_seen() counts the points passed since arming (arm with a huge n to count). */
void pit_fault_arm(long n, int crash);
long pit_fault_seen(void);

/* Whole-file helpers. */
int pit_file_write_atomic(const char *path, const void *data, size_t n, struct pit_err *e);
/* mkdir -p; checks the directory is writable. */
int pit_mkdir_p(const char *dir, struct pit_err *e);

/* Strict number parsing (whole string must be consumed). Return 0 or PIT_EARG. */
int pit_parse_i64(const char *s, int64_t *out);
int pit_parse_f64(const char *s, double *out);
/* The index of s in names[0..n-1] (an option's word: "csv", "scaling"); -1 if absent. */
int pit_parse_name(const char *s, const char *const *names, int n);

/* What CPU this process may use (src/util/cpus.c). */
struct pit_cpus {
  int online;        /* CPUs online on the machine */
  int affinity;      /* CPUs of the affinity mask (sched_getaffinity) */
  char list[128];    /* the mask as a list, "0-1", "0,2-3" */
  double quota;      /* cgroup CPU quota in CPUs (0.4 = 40% of one), 0: none */
  int usable;        /* min(affinity, ceil(quota)), >= 1 */
};
void pit_cpus_probe(struct pit_cpus *c);
/* Threads per rank by default: usable CPUs; an unbound rank (mask = the whole
 * machine) shares them with the ranks_here ranks on its node. >= 1. */
int pit_cpus_threads(const struct pit_cpus *c, int ranks_here);
/* The smallest CPU quota (in CPUs, 0: none) of the cgroups named by a
 * /proc/<pid>/cgroup file (NULL: /proc/self/cgroup) and their parents, under
 * the cgroup mount cgroup_root (NULL: /sys/fs/cgroup): v2 cpu.max, v1
 * cpu.cfs_quota_us / cpu.cfs_period_us. */
double pit_cpu_quota(const char *proc_cgroup, const char *cgroup_root);

/* 64-bit FNV-1a over bytes; used for parameter checksums. */
uint64_t pit_hash64(const void *data, size_t n, uint64_t seed);

/* ---- child processes (src/util/child.c) ----
 * Started from an argv array (posix_spawnp: PATH search, never a shell). */
enum pit_child_mode {
  PIT_CHILD_INHERIT = 0, /* the caller's descriptor */
  PIT_CHILD_NULL,        /* /dev/null */
  PIT_CHILD_FILE,        /* path: read (stdin) or written, truncated unless append */
  PIT_CHILD_PIPE         /* stdout/stderr only: a pipe whose read end the caller reads */
};
struct pit_child_io {
  int mode;              /* enum pit_child_mode */
  const char *path;      /* PIT_CHILD_FILE; borrowed */
  int append;            /* PIT_CHILD_FILE output: O_APPEND instead of truncating */
};
struct pit_child_opts {
  char *const *argv;     /* NULL-terminated; borrowed */
  char *const *env;      /* NULL or "NAME=value" additions replacing the same NAME; borrowed */
  struct pit_child_io in, out, err;
  int same_group;        /* 1: stay in the caller's process group (terminal Ctrl-C reaches it);
                            0 (default): the child leads a group of its own */
};
enum { PIT_CHILD_RUNNING = 1 };  /* pit_child_wait: the time-out passed first */
struct pit_child {
  int pid;               /* running child; 0 once reaped */
  int pgid;              /* its process group when it leads one (kept after reaping), else 0 */
  int out_fd, err_fd;    /* read ends of PIT_CHILD_PIPE, else -1; owned, closed by _release */
  int status;            /* after reaping: exit status, or 128 + signal */
  char name[64];         /* argv[0], for messages */
};
void pit_child_init(struct pit_child *c);
/* Closes the pipe read ends (does not wait: reap with _wait or _kill first). */
void pit_child_release(struct pit_child *c);
/* Starts the child. PIT_ENOTFOUND when argv[0] cannot be run. The child
 * starts with an empty signal mask and default dispositions. */
int pit_child_start(struct pit_child *c, const struct pit_child_opts *o, struct pit_err *e);
/* Sends sig to the child's process group (to the child alone with same_group). */
int pit_child_signal(struct pit_child *c, int sig, struct pit_err *e);
/* Waits up to timeout_s seconds (< 0: no limit; 0: just looks). 0 when it
 * exited (then *status, if non-NULL, is set and the child is reaped),
 * PIT_CHILD_RUNNING when the time-out passed first, < 0 on error. */
int pit_child_wait(struct pit_child *c, double timeout_s, int *status, struct pit_err *e);
/* SIGTERM to the group, up to grace_s seconds for the child to exit, then
 * SIGKILL to the whole group (also when the child left in time: a grandchild
 * may ignore TERM), and reaps the child. *status as for _wait. */
int pit_child_kill(struct pit_child *c, double grace_s, int *status, struct pit_err *e);
/* Runs argv in the caller's process group with stdin from /dev/null (stdout to
 * /dev/null when quiet_stdout) and waits. When errtail is non-NULL the child's
 * stderr is read through a pipe and its last errtail_n - 1 bytes kept there.
 * 0 when the child ran (whatever its status), PIT_ENOTFOUND when argv[0]
 * cannot be run. */
int pit_child_run(char *const argv[], int quiet_stdout, int *status, char *errtail, size_t errtail_n,
                  struct pit_err *e);

/* Runs argv (no shell, its own process group) with stdin from /dev/null, up
 * to timeout_s seconds (then its group is killed: PIT_ESTATE "'PROG' did not
 * finish within N s"); keeps the head of its stdout in out and the tail of
 * its stderr in err (NUL-terminated; either may be NULL with size 0: then it
 * goes to /dev/null). 0 when it ran, *status its exit code (128 + signal). */
int pit_child_capture(char *const argv[], double timeout_s, char *out, size_t nout, char *err, size_t nerr,
                      int *status, struct pit_err *e);

/* ---- the gnuplot driver (src/util/gnuplot.c) ---- */
/* Runs gnuplot (prog; NULL or "": $PIT_GNUPLOT, else "gnuplot") on script,
 * which writes its picture to the path picture, and copies that picture to
 * out atomically. Errors name out (chart 'OUT': gnuplot failed (exit status
 * N): its last line; gnuplot wrote no picture); PIT_ENOTFOUND with a hint
 * when gnuplot cannot be run. */
int pit_gnuplot_draw(const char *prog, const char *script, const char *picture, const char *out,
                     struct pit_err *e);

/* ---- the JSON printer (src/util/json.c) ---- */
struct cJSON;
/* x printed unformatted (malloc'ed; NULL when out of memory), as cJSON does
 * but with every integral number below 2^53 in magnitude written as an
 * integer (cJSON may write 1234567890123450 as 1.23456789012345e+15). */
char *pit_json_print(const struct cJSON *x);

#endif
