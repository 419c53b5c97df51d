/* idx.c — MNIST / Fashion-MNIST in IDX format, gzip-compressed (read through
 * zlib's gzopen/gzread, which also reads an uncompressed file transparently).
 *
 * Speed: inflating Fashion-MNIST's 26 MB of training images was all of a cnn
 * run's 0.25 s init (zlib: 0.21 s). When at least half of an image file is
 * wanted, it is inflated in one call by libdeflate instead (0.09 s, measured
 * here), after zlib has read and checked the header; a file libdeflate does not
 * take whole (several gzip members, a trailer size that is not the header's,
 * corrupt or truncated data) is read by the zlib stream as before, which names
 * what is wrong with it. Either way the bytes are the same.
 *
 * Files in dir: {train,t10k}-images-idx3-ubyte.gz and {train,t10k}-labels-idx1-ubyte.gz
 * (the uncompressed name without .gz is used when the .gz is absent).
 * IDX: big-endian u32 magic (0x00000803 images with 3 dims, 0x00000801 labels with
 * 1 dim), then u32 dims, then the u8 data, row-major. Images (n, h, w) are one
 * channel. Labels must be 0..9 and the two files must hold the same count.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data/data_impl.h"

static gzFile open_idx(const char *dir, const char *base, char *path, size_t cap,
                       struct pit_err *e) {
  snprintf(path, cap, "%s/%s.gz", dir, base);
  if (access(path, F_OK) != 0) {
    char raw[4096];
    snprintf(raw, sizeof raw, "%s/%s", dir, base);
    if (access(raw, F_OK) == 0)
      snprintf(path, cap, "%s", raw);
  }
  gzFile gz = gzopen(path, "rb");
  if (!gz) {
    if (errno == 0)
      errno = ENOMEM;
    pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open '%s'", path);
    if (errno == ENOENT)
      pit_err_hint(e, "the directory must hold the four IDX files (train-images-idx3-ubyte.gz, "
                      "train-labels-idx1-ubyte.gz, t10k-...); give the data directory");
    return NULL;
  }
  gzbuffer(gz, 1 << 17);
  return gz;
}

/* Reads exactly n bytes or fails naming the file. */
static int read_exact(gzFile gz, void *buf, size_t n, const char *path, const char *what,
                      struct pit_err *e) {
  size_t got = 0;
  while (got < n) {
    size_t want = n - got > (1u << 30) ? (1u << 30) : n - got;
    int r = gzread(gz, (char *)buf + got, (unsigned)want);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  if (got == n)
    return 0;
  int zerr = Z_OK;
  const char *msg = gzerror(gz, &zerr);
  if (zerr == Z_ERRNO)
    return pit_err_errno(e, PIT_EIO, "cannot read '%s'", path);
  if (zerr != Z_OK && zerr != Z_BUF_ERROR)
    return pit_err_set(e, PIT_EFORMAT, "'%s': corrupt gzip data reading %s (%s)", path, what, msg);
  return pit_err_set(e, PIT_EFORMAT,
                     "'%s': truncated: fewer bytes than the header says (%s: got %zu of %zu)",
                     path, what, got, n);
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads an IDX header of n bytes into hdr and checks its magic number (kind:
 * "label" or "image", named in the error). */
static int read_header(gzFile gz, unsigned char *hdr, size_t n, const char *path, uint32_t magic, const char *kind,
                       struct pit_err *e) {
  int rc = read_exact(gz, hdr, n, path, "the IDX header", e);
  if (!rc && be32(hdr) != magic)
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': not an IDX %s file (magic 0x%08x, expected 0x%08x)", path, kind,
                     be32(hdr), magic);
  return rc;
}

/* The whole of the gzip file at path inflated into a new buffer of exactly
 * want bytes (header included), or NULL — then the caller reads it through its
 * zlib stream: not a gzip file, not exactly one member of want bytes, bad data,
 * no memory, an I/O error. Reads the file in one go; frees what it took. */
static uint8_t *inflate_whole(const char *path, size_t want) {
  uint8_t *out = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  size_t len = fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= 18 ? (size_t)st.st_size : 0;
  /* mapped, not copied: the file is in the page cache after zlib read its header */
  const uint8_t *in = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : MAP_FAILED;
  if (in != MAP_FAILED && in[0] == 0x1f && in[1] == 0x8b) {
    /* the trailer's ISIZE: the member's length mod 2^32 */
    const uint8_t *t = in + len - 4;
    uint32_t isize = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
    struct libdeflate_decompressor *d = NULL;
    size_t used = 0, got = 0;
    int ok = isize == (uint32_t)want && (out = pit__alloc_big(want)) && (d = libdeflate_alloc_decompressor()) &&
             libdeflate_gzip_decompress_ex(d, in, len, out, want, &used, &got) == LIBDEFLATE_SUCCESS &&
             used == len && got == want;
    if (d)
      libdeflate_free_decompressor(d);
    if (!ok) {
      free(out);
      out = NULL;
    }
  }
  if (in != MAP_FAILED)
    munmap((void *)in, len);
  if (fd >= 0)
    close(fd);
  return out;
}

int pit__idx_load(struct pit_dataset *ds, const struct pit_data_opts *o, const char *dir,
                  const float *mean, const float *std, struct pit_err *e) {
  const char *split = o->train ? "train" : "t10k";
  char ipath[4096], lpath[4096], base[64];
  unsigned char hdr[16];
  uint8_t *labels = NULL, *buf = NULL, *whole = NULL;
  gzFile gi = NULL, gl = NULL;
  struct pit__conv cv = {0};
  int rc;

  snprintf(base, sizeof base, "%s-labels-idx1-ubyte", split);
  if (!(gl = open_idx(dir, base, lpath, sizeof lpath, e)))
    return e ? e->code : PIT_EIO;
  snprintf(base, sizeof base, "%s-images-idx3-ubyte", split);
  if (!(gi = open_idx(dir, base, ipath, sizeof ipath, e))) {
    gzclose(gl);
    return e ? e->code : PIT_EIO;
  }
  if ((rc = read_header(gl, hdr, 8, lpath, 0x00000801, "label", e)))
    goto out;
  uint32_t nl = be32(hdr + 4);
  if ((rc = read_header(gi, hdr, 16, ipath, 0x00000803, "image", e)))
    goto out;
  uint32_t ni = be32(hdr + 4), h = be32(hdr + 8), w = be32(hdr + 12);
  if (ni != nl) {
    rc = pit_err_set(e, PIT_EFORMAT, "'%s' holds %u images but '%s' holds %u labels", ipath, ni,
                     lpath, nl);
    goto out;
  }
  if (ni == 0 || h == 0 || w == 0 || h > 4096 || w > 4096 || ni > (1u << 30)) {
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': implausible IDX dimensions %u x %u x %u", ipath, ni, h,
                     w);
    goto out;
  }
  int64_t n = ni;
  if (o->limit > 0 && o->limit < n)
    n = o->limit;
  if (!(labels = malloc((size_t)n))) {
    rc = pit_err_set(e, PIT_ENOMEM, "'%s': out of memory", lpath);
    goto out;
  }
  if ((rc = read_exact(gl, labels, (size_t)n, lpath, "the labels", e)))
    goto out;
  for (int64_t i = 0; i < n; i++)
    if (labels[i] > 9) {
      rc = pit_err_set(e, PIT_EFORMAT, "'%s': label %u of sample %lld is out of range 0..9",
                       lpath, labels[i], (long long)i);
      goto out;
    }
  if ((rc = pit__conv_init(&cv, 1, (int)h, (int)w, 1, o->channels, o->image_size, mean, std, e)))
    goto out;
  if ((rc = pit__dataset_alloc(ds, n, cv.c, cv.h, cv.w, pit__conv_keep_bytes(&cv, o),
                                ipath, e)))
    goto out;
  ds->classes = 10;
  for (int64_t i = 0; i < n; i++)
    ds->y[i] = labels[i];
  size_t per = (size_t)h * w;
  /* at least half of a gzip file wanted: inflated whole (see the top) */
  if (!gzdirect(gi) && (uint64_t)n * 2 >= ni)
    whole = inflate_whole(ipath, 16 + (size_t)ni * per);
  if (whole) {
    if (ds->x8) { /* the images, moved down over the header, become x8 (with a
                   * limit, the buffer keeps the unused rest: at most as much again) */
      memmove(whole, whole + 16, (size_t)n * per);
      pit__dataset_adopt_x8(ds, whole);
      whole = NULL;
    } else {
      for (int64_t i = 0; i < n; i++)
        pit__dataset_put(ds, &cv, i, whole + 16 + (size_t)i * per);
    }
    goto out;
  }
  /* images in chunks of at most 4096 images and 16 MB: read straight into x8 when the
   * bytes are kept, else through buf and converted into x */
  size_t chunk = ((size_t)16 << 20) / per;
  chunk = chunk < 1 ? 1 : chunk > 4096 ? 4096 : chunk;
  if (!ds->x8 && !(buf = malloc(per * chunk))) {
    rc = pit_err_set(e, PIT_ENOMEM, "'%s': out of memory", ipath);
    goto out;
  }
  for (int64_t i0 = 0; i0 < n; i0 += (int64_t)chunk) {
    size_t m = (size_t)(n - i0) < chunk ? (size_t)(n - i0) : chunk;
    uint8_t *dst = ds->x8 ? ds->x8 + (size_t)i0 * per : buf;
    if ((rc = read_exact(gi, dst, per * m, ipath, "the images", e)))
      goto out;
    if (!ds->x8)
      for (size_t j = 0; j < m; j++)
        pit__dataset_put(ds, &cv, i0 + (int64_t)j, buf + j * per);
  }
out:
  pit__conv_release(&cv);
  free(buf);
  free(whole);
  free(labels);
  gzclose(gi);
  gzclose(gl);
  return rc;
}
