/* test_atomic.c — atomic writes replace whole files and leave no temp file; a
 * FIFO (as /dev/null, a device) is written in place and stays a FIFO; a symbolic
 * link stays a link to the replaced file; strict number parsing rejects trailing junk. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/util.h"

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    if (de->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

int main(void) {
  char path[512];
  const char *dir = check_tmpdir();
  snprintf(path, sizeof path, "%s/a.bin", dir);
  struct pit_err e = {0};
  CHECK(pit_file_write_atomic(path, "hello", 5, &e) == 0, "%s", e.msg);
  CHECK(pit_file_write_atomic(path, "bye", 3, &e) == 0, "%s", e.msg);
  FILE *f = fopen(path, "rb");
  char buf[16] = {0};
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  CHECK(n == 3 && memcmp(buf, "bye", 3) == 0, "content replaced");
  struct pit_atomic_file af;
  CHECK(pit_atomic_open(&af, path, &e) == 0, "open");
  fputs("partial", af.fp);
  pit_atomic_abort(&af);
  CHECK(count_entries(dir) == 1, "abort leaves only the old file");
  CHECK(pit_file_write_atomic("/nonexistent-dir/x", "x", 1, &e) == PIT_EIO && strstr(e.msg, "/nonexistent-dir/x"),
        "error names the file: %s", e.msg);
  /* a FIFO: written in place (a rename over it would make it a regular file, as it did to
   * /dev/null once), nothing left beside it; the reader opened first so the open does not block */
  char fifo[560];
  snprintf(fifo, sizeof fifo, "%s/p.fifo", dir);
  CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  CHECK(rd >= 0, "open the FIFO to read");
  CHECK(pit_file_write_atomic(fifo, "piped", 5, &e) == 0, "write a FIFO: %s", e.msg);
  struct stat st;
  CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO stays a FIFO");
  memset(buf, 0, sizeof buf);
  CHECK(read(rd, buf, sizeof buf) == 5 && memcmp(buf, "piped", 5) == 0, "the data went through the FIFO");
  CHECK(pit_atomic_open(&af, fifo, &e) == 0, "open the FIFO: %s", e.msg);
  fputs("dropped", af.fp);
  pit_atomic_abort(&af);
  CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "an abort leaves the FIFO");
  close(rd);
  CHECK(count_entries(dir) == 2, "no temp file beside the FIFO");
  /* a symbolic link: the file it names gets the content, the link stays a link */
  char link_[560];
  snprintf(link_, sizeof link_, "%s/l.bin", dir);
  CHECK(symlink(path, link_) == 0, "symlink");
  CHECK(pit_file_write_atomic(link_, "via", 3, &e) == 0, "write through a link: %s", e.msg);
  CHECK(lstat(link_, &st) == 0 && S_ISLNK(st.st_mode), "the link stays a link");
  f = fopen(path, "rb");
  memset(buf, 0, sizeof buf);
  n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  CHECK(n == 3 && memcmp(buf, "via", 3) == 0, "the linked file replaced");
  CHECK(count_entries(dir) == 3, "no temp file beside the link's file");
  int64_t i;
  double d;
  CHECK(pit_parse_i64("42", &i) == 0 && i == 42, "i64");
  CHECK(pit_parse_i64("42x", &i) != 0 && pit_parse_i64("", &i) != 0, "i64 junk");
  CHECK(pit_parse_f64("1e-3", &d) == 0 && d == 1e-3, "f64");
  CHECK(pit_parse_f64("nan", &d) != 0 && pit_parse_f64("1.0s", &d) != 0, "f64 junk");
  char sub[600];
  snprintf(sub, sizeof sub, "%s/x/y/z", dir);
  CHECK(pit_mkdir_p(sub, &e) == 0, "mkdir_p: %s", e.msg);
  return check_done();
}
