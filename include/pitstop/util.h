/* pitstop/util.h — error reporting, monotonic clock, atomic file writes.
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
  PIT_ENOTFOUND = -7 /* named thing (model, run, file) does not exist */
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

/* Monotonic clock, seconds. The only clock used for durations. */
double pit_now(void);

/* Atomic file write: data goes to "<path>.tmp.<pid>", which is fsynced,
 * renamed over path, and the directory fsynced. On failure the temp file is
 * removed and path is untouched. */
struct pit_atomic_file {
  FILE *fp;          /* write through this */
  char *path;        /* final path */
  char *tmp;         /* temporary path */
};
int pit_atomic_open(struct pit_atomic_file *af, const char *path, struct pit_err *e);
int pit_atomic_commit(struct pit_atomic_file *af, struct pit_err *e); /* closes */
void pit_atomic_abort(struct pit_atomic_file *af);                     /* closes, removes tmp */

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

#endif
