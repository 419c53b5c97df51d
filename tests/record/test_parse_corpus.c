/* test_parse_corpus.c — replays the fuzz seed corpus (fuzz/corpus/) through the
 * libFuzzer harness's entry point (fuzz/fuzz_parse.c, included), plus every
 * prefix and a few byte flips of each file, so the corpus runs in every build
 * and under ASan+UBSan in the sanitizer build. The harness aborts on a crash or
 * a differential mismatch. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fuzz/fuzz_parse.c"
#include "check.h"

int main(void) {
  const char *src = getenv("PIT_SOURCE_DIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/fuzz/corpus", src ? src : ".");
  DIR *d = opendir(dir);
  CHECK(d != NULL, "cannot open %s", dir);
  if (!d)
    return check_done();
  int files = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.')
      continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    FILE *f = fopen(path, "rb");
    if (!f)
      continue;
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    files++;
    for (size_t k = 0; k <= n; k++) /* every prefix: truncated lines everywhere */
      LLVMFuzzerTestOneInput(buf, k);
    for (size_t k = 0; k < n; k += 7) { /* byte flips */
      uint8_t keep = buf[k];
      buf[k] ^= (uint8_t)(0x5a + k);
      LLVMFuzzerTestOneInput(buf, n);
      buf[k] = keep;
    }
    check_count++;
  }
  closedir(d);
  CHECK(files >= 10, "only %d corpus files in %s", files, dir);
  return check_done();
}
