/* atomic.c — files that matter are written to a temp file, fsynced, renamed,
 * and the directory fsynced. Invariant: the final path holds either the old
 * complete content or the new complete content, never a prefix. */
#include "pitstop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
  if (fsync(fd) != 0 && errno != EINVAL)
    rc = pit_err_errno(e, PIT_EIO, "cannot sync directory '%s'", dir);
  close(fd);
  free(copy);
  return rc;
}

int pit_atomic_open(struct pit_atomic_file *af, const char *path, struct pit_err *e) {
  memset(af, 0, sizeof *af);
  size_t n = strlen(path) + 32;
  af->path = strdup(path);
  af->tmp = malloc(n);
  if (!af->path || !af->tmp) {
    free(af->path);
    free(af->tmp);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  snprintf(af->tmp, n, "%s.tmp.%ld", path, (long)getpid());
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
  if (fflush(af->fp) != 0 || ferror(af->fp))
    rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", af->path);
  else if (fsync(fileno(af->fp)) != 0)
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
  if (rename(af->tmp, af->path) != 0) {
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
  if (n && fwrite(data, 1, n, af.fp) != n) {
    rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
    pit_atomic_abort(&af);
    return rc;
  }
  return pit_atomic_commit(&af, e);
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
