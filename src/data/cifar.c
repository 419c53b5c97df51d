/* cifar.c — CIFAR-10 binary version: data_batch_1.bin .. data_batch_5.bin
 * (training, 10000 records each) and test_batch.bin, each record 1 label byte
 * (0..9) then 3072 bytes of image, channel-major (R plane, G plane, B plane) of
 * 32×32 row-major. The directory may be the one holding the files or its parent
 * (holding cifar-10-batches-bin/ as unpacked from the official tarball).
 * All files are checked (present, whole records) before anything is allocated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data_impl.h"

#define REC 3073

int pit__cifar_load(struct pit_dataset *ds, const struct pit_data_opts *o, const char *dir,
                    struct pit_err *e) {
  static const float cm[3] = {0.4914f, 0.4822f, 0.4465f}, cs[3] = {0.2470f, 0.2435f, 0.2616f};
  static const float half[3] = {0.5f, 0.5f, 0.5f};
  char sub[4096], probe[4200], paths[5][4200];
  int nfiles = o->train ? 5 : 1;
  int64_t counts[5], total = 0;
  snprintf(sub, sizeof sub, "%s/cifar-10-batches-bin", dir);
  snprintf(probe, sizeof probe, "%s/%s", dir, o->train ? "data_batch_1.bin" : "test_batch.bin");
  const char *base = dir;
  if (access(probe, F_OK) != 0) {
    snprintf(probe, sizeof probe, "%s/%s", sub, o->train ? "data_batch_1.bin" : "test_batch.bin");
    if (access(probe, F_OK) == 0)
      base = sub;
  }
  for (int f = 0; f < nfiles; f++) {
    if (o->train)
      snprintf(paths[f], sizeof paths[f], "%s/data_batch_%d.bin", base, f + 1);
    else
      snprintf(paths[f], sizeof paths[f], "%s/test_batch.bin", base);
    struct stat st;
    if (stat(paths[f], &st) != 0) {
      int rc = pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open '%s'",
                             paths[f]);
      pit_err_hint(e, "the directory must hold CIFAR-10's binary version (data_batch_1.bin .. "
                      "data_batch_5.bin, test_batch.bin)");
      return rc;
    }
    if (st.st_size == 0 || st.st_size % REC != 0)
      return pit_err_set(e, PIT_EFORMAT, "'%s': truncated or not CIFAR-10 binary: %lld bytes is "
                         "not a whole number of %d-byte records", paths[f],
                         (long long)st.st_size, REC);
    counts[f] = st.st_size / REC;
    total += counts[f];
  }
  int64_t n = total;
  if (o->limit > 0 && o->limit < n)
    n = o->limit;
  struct pit__conv cv;
  const float *mean = o->norm == PIT_NORM_GAN ? half : cm, *std = o->norm == PIT_NORM_GAN ? half : cs;
  int rc = pit__conv_init(&cv, 3, 32, 32, 1, o->channels, o->image_size, mean, std, e);
  if (rc)
    return rc;
  enum { CHUNK = 1000 };
  uint8_t *buf = malloc((size_t)REC * CHUNK);
  if (!buf) {
    pit__conv_release(&cv);
    return pit_err_set(e, PIT_ENOMEM, "'%s': out of memory", paths[0]);
  }
  if ((rc = pit__dataset_alloc(ds, n, cv.c, cv.h, cv.w, pit__conv_keep_bytes(&cv, o),
                                paths[0], e)))
    goto out;
  ds->classes = 10;
  int64_t i = 0;
  for (int f = 0; f < nfiles && i < n; f++) {
    FILE *fp = fopen(paths[f], "rb");
    if (!fp) {
      rc = pit_err_errno(e, PIT_EIO, "cannot open '%s'", paths[f]);
      goto out;
    }
    for (int64_t r = 0; r < counts[f] && i < n;) {
      int64_t m = counts[f] - r;
      if (m > CHUNK)
        m = CHUNK;
      if (m > n - i)
        m = n - i;
      if (fread(buf, REC, (size_t)m, fp) != (size_t)m) {
        rc = ferror(fp) ? pit_err_errno(e, PIT_EIO, "cannot read '%s'", paths[f])
                        : pit_err_set(e, PIT_EFORMAT, "'%s': truncated while reading", paths[f]);
        fclose(fp);
        goto out;
      }
      for (int64_t j = 0; j < m; j++) {
        const uint8_t *rec = buf + (size_t)j * REC;
        if (rec[0] > 9) {
          rc = pit_err_set(e, PIT_EFORMAT, "'%s': label %u of record %lld is out of range 0..9",
                           paths[f], rec[0], (long long)(r + j));
          fclose(fp);
          goto out;
        }
        ds->y[i] = rec[0];
        pit__dataset_put(ds, &cv, i, rec + 1);
        i++;
      }
      r += m;
    }
    fclose(fp);
  }
out:
  free(buf);
  pit__conv_release(&cv);
  return rc;
}
