/* atomic.c — files that matter are written to a temp file "<path>.tmp.<pid>",
 * fsynced, renamed, and the directory fsynced (a symbolic link's file is replaced,
 * the link kept; a device, FIFO or socket such as /dev/null is written in place,
 * never replaced); the temp files a crash leaves are
 * swept by pid. Invariant: the final path holds either the old complete content or
 * the new complete content, never a prefix; a sweep removes only temp files whose
 * process is gone. Every write, flush, fsync, link and rename passes a fault point
 * that tests arm to fail (or end the process) at the n-th one. */
#include "pitstop/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- fault injection (tests) ---- */
static long fault_at;   /* 0: disarmed; else the point (1-based, since arming) that fails */
static long fault_seen; /* points passed since arming */
static int fault_crash; /* 1: _exit at the point instead of failing */

void pit_fault_arm(long n, int crash) {
  fault_at = n;
  fault_seen = 0;
  fault_crash = crash;
}

long pit_fault_seen(void) { return fault_seen; }

/* 0 to go on; -1 with errno = EIO when the armed point is reached. */
static int fault_point(void) {
  if (fault_at <= 0)
    return 0;
  if (++fault_seen != fault_at)
    return 0;
  if (fault_crash)
    _exit(86);
  errno = EIO;
  return -1;
}

int pit_atomic_write(struct pit_atomic_file *af, const void *data, size_t n) {
  if (n == 0)
    return 0;
  if (fault_point() < 0)
    return -1;
  if (fwrite(data, 1, n, af->fp) != n) {
    if (errno == 0)
      errno = EIO;
    return -1;
  }
  return 0;
}

static int fsync_dir_of(const char *path, struct pit_err *e) {
  char *copy = strdup(path);
  if (!copy)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  const char *dir = dirname(copy);
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    int rc = pit_err_errno(e, PIT_EIO, "cannot open directory '%s'", dir);
    free(copy);
    return rc;
  }
  int rc = 0;
  if ((fault_point() < 0 || fsync(fd) != 0) && errno != EINVAL)
    rc = pit_err_errno(e, PIT_EIO, "cannot sync directory '%s'", dir);
  close(fd);
  free(copy);
  return rc;
}

int pit_atomic_open(struct pit_atomic_file *af, const char *path, struct pit_err *e) {
  memset(af, 0, sizeof *af);
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    /* a device, a FIFO or a socket (/dev/null, /dev/stdout, a pipe) is written in place: a
     * temp file renamed over it would replace it by a regular file (as root, `pitstop parse
     * --out /dev/null` once left /dev/null a regular file, and every later run failed) */
    if (!(af->path = strdup(path)))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    if (!(af->fp = fopen(path, "wb"))) {
      int rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
      free(af->path);
      af->path = NULL;
      return rc;
    }
    return 0;
  }
  /* a symbolic link: the file it names is replaced, the link stays */
  char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
  const char *target = real ? real : path;
  size_t n = strlen(target) + 32;
  af->path = strdup(target);
  af->tmp = malloc(n);
  free(real);
  if (!af->path || !af->tmp) {
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  snprintf(af->tmp, n, "%s.tmp.%ld", af->path, (long)getpid());
  af->fp = fopen(af->tmp, "wb");
  if (!af->fp) {
    int rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
    return rc;
  }
  return 0;
}

void pit_atomic_abort(struct pit_atomic_file *af) {
  if (af->fp)
    fclose(af->fp);
  if (af->tmp)
    unlink(af->tmp);
  free(af->path);
  free(af->tmp);
  memset(af, 0, sizeof *af);
}

int pit_atomic_commit(struct pit_atomic_file *af, struct pit_err *e) {
  int rc = 0;
  if (fault_point() < 0 || fflush(af->fp) != 0 || ferror(af->fp))
    rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", af->path);
  else if (af->tmp && (fault_point() < 0 || fsync(fileno(af->fp)) != 0))
    rc = pit_err_errno(e, PIT_EIO, "cannot sync '%s'", af->path);
  if (rc) {
    pit_atomic_abort(af);
    return rc;
  }
  if (fclose(af->fp) != 0) {
    af->fp = NULL;
    rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", af->path);
    pit_atomic_abort(af);
    return rc;
  }
  af->fp = NULL;
  if (!af->tmp) { /* written in place: a device or a FIFO has nothing to rename or sync */
    free(af->path);
    memset(af, 0, sizeof *af);
    return 0;
  }
  if (fault_point() < 0 || rename(af->tmp, af->path) != 0) {
    rc = pit_err_errno(e, PIT_EIO, "cannot rename into '%s'", af->path);
    pit_atomic_abort(af);
    return rc;
  }
  rc = fsync_dir_of(af->path, e);
  free(af->path);
  free(af->tmp);
  memset(af, 0, sizeof *af);
  return rc;
}

int pit_file_write_atomic(const char *path, const void *data, size_t n, struct pit_err *e) {
  struct pit_atomic_file af;
  int rc = pit_atomic_open(&af, path, e);
  if (rc)
    return rc;
  if (pit_atomic_write(&af, data, n) != 0) {
    rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
    pit_atomic_abort(&af);
    return rc;
  }
  return pit_atomic_commit(&af, e);
}

int pit_atomic_link(const char *target, const char *path, struct pit_err *e) {
  size_t n = strlen(path) + 32;
  char *tmp = malloc(n);
  if (!tmp)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  unlink(tmp); /* ours from an earlier failed attempt, if any */
  int rc = 0;
  if (fault_point() < 0 || link(target, tmp) != 0)
    rc = pit_err_errno(e, PIT_EIO, "cannot link '%s' to '%s'", path, target);
  else if (fault_point() < 0 || rename(tmp, path) != 0) {
    rc = pit_err_errno(e, PIT_EIO, "cannot rename into '%s'", path);
    unlink(tmp);
  } else
    rc = fsync_dir_of(path, e);
  free(tmp);
  return rc;
}

/* The pid of a temp name "<name>.tmp.<digits>", or 0 if name is not one. */
static long temp_pid(const char *name) {
  const char *p = strstr(name, ".tmp.");
  if (!p || p == name)
    return 0;
  const char *q = p + 5;
  while (strstr(q, ".tmp.")) /* the last ".tmp." */
    q = strstr(q, ".tmp.") + 5;
  if (!*q)
    return 0;
  long pid = 0;
  for (; *q; q++) {
    if (!isdigit((unsigned char)*q) || pid > 1000000000L)
      return 0;
    pid = pid * 10 + (*q - '0');
  }
  return pid;
}

int pit_atomic_sweep(const char *dir, int *removed, struct pit_err *e) {
  if (removed)
    *removed = 0;
  DIR *d = opendir(dir);
  if (!d)
    return pit_err_errno(e, PIT_EIO, "cannot open directory '%s'", dir);
  int rc = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    long pid = temp_pid(de->d_name);
    if (pid <= 0 || pid == (long)getpid())
      continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue; /* alive (or not ours to probe): never touch it */
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= sizeof path)
      continue;
    if (unlink(path) != 0 && errno != ENOENT) {
      rc = pit_err_errno(e, PIT_EIO, "cannot remove stale temp file '%s'", path);
      break;
    }
    if (removed)
      ++*removed;
  }
  closedir(d);
  return rc;
}

int pit_mkdir_p(const char *dir, struct pit_err *e) {
  char buf[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof buf)
    return pit_err_set(e, PIT_EARG, "invalid directory name '%s'", dir);
  memcpy(buf, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return pit_err_errno(e, PIT_EIO, "cannot create directory '%s'", buf);
      buf[i] = c;
    }
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return pit_err_set(e, PIT_EIO, "cannot create directory '%s': not a directory", dir);
  if (access(dir, W_OK | X_OK) != 0)
    return pit_err_errno(e, PIT_EIO, "cannot write into directory '%s'", dir);
  return 0;
}
