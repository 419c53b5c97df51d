/* node_files.c — the node files of the ssh, slurm and command providers: one file
 * STATE_DIR/nodes/ID.node per node the provider holds, one line of the
 * provider's own fields, written atomically before start returns and removed
 * after stop, so a restarted controller lists exactly what the run holds; and
 * the run directory's tag (pit_run_tag). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "provider/provider_impl.h"

void pit_run_tag(const char *state_dir, char tag[9]) {
  char *real = realpath(state_dir, NULL);
  const char *key = real ? real : state_dir;
  snprintf(tag, 9, "%08lx", crc32(0L, (const Bytef *)key, (uInt)strlen(key)) & 0xffffffffUL);
  free(real);
}

static void path_of(const char *state_dir, const char *id, char *buf, size_t n) {
  snprintf(buf, n, "%s/nodes/%s.node", state_dir, id);
}

int ctl_node_file_write(const char *state_dir, const char *id, const char *text, struct pit_err *e) {
  char dir[1100], path[1200];
  snprintf(dir, sizeof dir, "%s/nodes", state_dir);
  int rc = pit_mkdir_p(dir, e);
  if (rc < 0)
    return rc;
  path_of(state_dir, id, path, sizeof path);
  return pit_file_write_atomic(path, text, strlen(text), e);
}

int ctl_node_file_read(const char *state_dir, const char *id, char *buf, size_t n) {
  char path[1200];
  path_of(state_dir, id, path, sizeof path);
  return ctl_read_small(path, buf, n);
}

int ctl_node_file_remove(const char *state_dir, const char *id, struct pit_err *e) {
  char path[1200];
  path_of(state_dir, id, path, sizeof path);
  if (unlink(path) < 0 && errno != ENOENT)
    return pit_err_errno(e, PIT_EIO, "cannot remove '%s'", path);
  return 0;
}

int ctl_node_files(const char *state_dir, struct ctl_node_id **ids, int *n, struct pit_err *e) {
  *ids = NULL;
  *n = 0;
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/nodes", state_dir);
  DIR *d = opendir(dir);
  if (!d)
    return errno == ENOENT ? 0 : pit_err_errno(e, PIT_EIO, "cannot list '%s'", dir);
  int cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 5, ".node") != 0 || len - 5 >= PIT_NAME_MAX)
      continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 8;
      struct ctl_node_id *g = realloc(*ids, (size_t)cap * sizeof **ids);
      if (!g) {
        closedir(d);
        free(*ids);
        *ids = NULL;
        *n = 0;
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
      }
      *ids = g;
    }
    snprintf((*ids)[*n].id, sizeof(*ids)[*n].id, "%.*s", (int)(len - 5), de->d_name);
    (*n)++;
  }
  closedir(d);
  return 0;
}
