/* images.c — a folder of PNG/JPEG images (CelebA-style), unlabelled (y = -1).
 *
 * Every regular file below dir (recursively, up to 16 levels, dot-entries
 * skipped) whose name ends in .png, .jpg or .jpeg (any case) is a sample; samples
 * are ordered by path (strcmp), so the order does not depend on the file system.
 * The content decides the decoder (PNG signature or JPEG SOI marker). Images are
 * decoded to 8-bit RGB (grey expanded, alpha dropped by libpng's compositing onto
 * black), so the native channel count is 3. With image_size = 0 all images must
 * have the first one's size; otherwise each is resized (shorter side) and
 * centre-cropped to image_size × image_size (see convert.c). Values in [-1, 1], or
 * normalised with ImageNet's mean and std (PIT_NORM_IMAGENET). An image whose native
 * shorter side is below min_side is refused, naming it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which needs FILE */

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/data_impl.h"

#define MAX_SIDE 8192 /* a larger image is refused, not decoded */

struct list {
  char **v;
  size_t n, cap;
};

static int has_image_ext(const char *name) {
  const char *dot = strrchr(name, '.');
  if (!dot)
    return 0;
  char ext[8] = {0};
  for (int i = 0; i < 6 && dot[i + 1]; i++)
    ext[i] = (char)tolower((unsigned char)dot[i + 1]);
  return !strcmp(ext, "png") || !strcmp(ext, "jpg") || !strcmp(ext, "jpeg");
}

static int scan(const char *dir, int depth, struct list *l, struct pit_err *e) {
  DIR *d = opendir(dir);
  if (!d)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO,
                         "cannot open image directory '%s'", dir);
  struct dirent *de;
  int rc = 0;
  while (!rc && (de = readdir(d))) {
    if (de->d_name[0] == '.')
      continue;
    size_t len = strlen(dir) + strlen(de->d_name) + 2;
    char *p = malloc(len);
    if (!p) {
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory listing '%s'", dir);
      break;
    }
    snprintf(p, len, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(p, &st) != 0) {
      free(p); /* dangling link or vanished file: not an image */
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (depth < 16)
        rc = scan(p, depth + 1, l, e);
      free(p);
      continue;
    }
    if (!S_ISREG(st.st_mode) || !has_image_ext(de->d_name)) {
      free(p);
      continue;
    }
    if (PIT_GROW(l->v, l->n + 1, l->cap)) {
      free(p);
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory listing '%s'", dir);
      break;
    }
    l->v[l->n++] = p;
  }
  closedir(d);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- decoders: path → malloc'd RGB (h, w, 3) ---- */

static int decode_png(FILE *fp, const char *path, uint8_t **out, int *h, int *w,
                      struct pit_err *e) {
  png_image im;
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_stdio(&im, fp))
    return pit_err_set(e, PIT_EFORMAT, "cannot decode image '%s': %s", path, im.message);
  if (im.width == 0 || im.height == 0 || im.width > MAX_SIDE || im.height > MAX_SIDE) {
    png_image_free(&im);
    return pit_err_set(e, PIT_EFORMAT, "image '%s' is %ux%u (at most %d per side)", path,
                       im.width, im.height, MAX_SIDE);
  }
  im.format = PNG_FORMAT_RGB;
  uint8_t *buf = malloc(PNG_IMAGE_SIZE(im));
  if (!buf) {
    png_image_free(&im);
    return pit_err_set(e, PIT_ENOMEM, "out of memory decoding '%s'", path);
  }
  if (!png_image_finish_read(&im, NULL, buf, 0, NULL)) {
    free(buf);
    return pit_err_set(e, PIT_EFORMAT, "cannot decode image '%s': %s", path, im.message);
  }
  *out = buf;
  *h = (int)im.height;
  *w = (int)im.width;
  return 0;
}

struct jerr {
  struct jpeg_error_mgr pub;
  jmp_buf jb;
  int eof;
  char msg[JMSG_LENGTH_MAX];
};

static void jerr_exit(j_common_ptr c) {
  struct jerr *je = (struct jerr *)c->err;
  (*c->err->format_message)(c, je->msg);
  longjmp(je->jb, 1);
}
static void jerr_emit(j_common_ptr c, int level) {
  struct jerr *je = (struct jerr *)c->err;
  if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF)
    je->eof = 1; /* a truncated file: libjpeg would fill the rest with grey */
}
static void jerr_output(j_common_ptr c) { (void)c; } /* the library never prints */

static int decode_jpeg(FILE *fp, const char *path, uint8_t **out, int *h, int *w,
                       struct pit_err *e) {
  struct jpeg_decompress_struct ci;
  struct jerr je;
  uint8_t *volatile buf = NULL;
  memset(&je, 0, sizeof je);
  ci.err = jpeg_std_error(&je.pub);
  je.pub.error_exit = jerr_exit;
  je.pub.emit_message = jerr_emit;
  je.pub.output_message = jerr_output;
  if (setjmp(je.jb)) {
    jpeg_destroy_decompress(&ci);
    free(buf);
    return pit_err_set(e, PIT_EFORMAT, "cannot decode image '%s': %s", path, je.msg);
  }
  jpeg_create_decompress(&ci);
  jpeg_stdio_src(&ci, fp);
  jpeg_read_header(&ci, TRUE);
  ci.out_color_space = JCS_RGB;
  jpeg_start_decompress(&ci);
  if (ci.output_components != 3 || ci.output_width == 0 || ci.output_height == 0 ||
      ci.output_width > MAX_SIDE || ci.output_height > MAX_SIDE) {
    snprintf(je.msg, sizeof je.msg, "%ux%u with %d components (want RGB, at most %d per side)",
             ci.output_width, ci.output_height, ci.output_components, MAX_SIDE);
    longjmp(je.jb, 1);
  }
  size_t stride = (size_t)ci.output_width * 3;
  buf = malloc(stride * ci.output_height);
  if (!buf) {
    snprintf(je.msg, sizeof je.msg, "out of memory");
    longjmp(je.jb, 1);
  }
  while (ci.output_scanline < ci.output_height) {
    JSAMPROW row = buf + (size_t)ci.output_scanline * stride;
    jpeg_read_scanlines(&ci, &row, 1);
  }
  if (je.eof) {
    snprintf(je.msg, sizeof je.msg, "file is truncated");
    longjmp(je.jb, 1);
  }
  jpeg_finish_decompress(&ci);
  *h = (int)ci.output_height;
  *w = (int)ci.output_width;
  jpeg_destroy_decompress(&ci);
  *out = buf;
  return 0;
}

static int decode(const char *path, uint8_t **out, int *h, int *w, struct pit_err *e) {
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return pit_err_errno(e, PIT_EIO, "cannot open image '%s'", path);
  unsigned char sig[8] = {0};
  size_t got = fread(sig, 1, sizeof sig, fp);
  rewind(fp);
  int rc;
  if (got == 8 && !png_sig_cmp(sig, 0, 8))
    rc = decode_png(fp, path, out, h, w, e);
  else if (got >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF)
    rc = decode_jpeg(fp, path, out, h, w, e);
  else
    rc = pit_err_set(e, PIT_EFORMAT, "image '%s' is neither PNG nor JPEG%s", path,
                     got == 0 ? " (empty file)" : "");
  fclose(fp);
  return rc;
}

int pit__images_load(struct pit_dataset *ds, const struct pit_data_opts *o, const char *dir,
                     struct pit_err *e) {
  static const float half[3] = {0.5f, 0.5f, 0.5f};
  static const float in_mean[3] = {0.485f, 0.456f, 0.406f}, in_std[3] = {0.229f, 0.224f, 0.225f};
  const int imagenet = o->norm == PIT_NORM_IMAGENET;
  struct list l = {0};
  struct pit__conv cv = {0};
  uint8_t *img = NULL;
  int rc = scan(dir, 0, &l, e);
  if (rc)
    goto out;
  if (l.n == 0) {
    rc = pit_err_set(e, PIT_ENOTFOUND, "image directory '%s' holds no PNG or JPEG images", dir);
    goto out;
  }
  qsort(l.v, l.n, sizeof *l.v, cmp_str);
  int64_t n = (int64_t)l.n;
  if (o->limit > 0 && o->limit < n)
    n = o->limit;
  int h0 = 0, w0 = 0, h, w;
  for (int64_t i = 0; i < n; i++) {
    if ((rc = decode(l.v[i], &img, &h, &w, e)))
      goto out;
    if (o->min_side > 0 && (h < o->min_side || w < o->min_side)) {
      rc = pit_err_set(e, PIT_EARG, "image '%s' is %dx%d, smaller than %dx%d", l.v[i], w, h,
                       o->min_side, o->min_side);
      goto out;
    }
    if (i == 0 || (h != h0 || w != w0)) {
      if (i > 0 && !o->image_size) {
        rc = pit_err_set(e, PIT_EFORMAT, "image '%s' is %dx%d but '%s' is %dx%d", l.v[i], w, h,
                         l.v[0], w0, h0);
        pit_err_hint(e, "give an image size to resize all images to one size");
        goto out;
      }
      pit__conv_release(&cv);
      if ((rc = pit__conv_init(&cv, 3, h, w, 0, o->channels, o->image_size,
                                imagenet ? in_mean : half, imagenet ? in_std : half, e)))
        goto out;
      /* floats always: decoded pixels are interleaved (HWC), and sizes may differ */
      if (i == 0 && (rc = pit__dataset_alloc(ds, n, cv.c, cv.h, cv.w, NULL, dir, e)))
        goto out;
      h0 = h;
      w0 = w;
    }
    pit__dataset_put(ds, &cv, i, img);
    ds->y[i] = -1;
    free(img);
    img = NULL;
  }
  ds->classes = 0;
out:
  free(img);
  pit__conv_release(&cv);
  for (size_t i = 0; i < l.n; i++)
    free(l.v[i]);
  free(l.v);
  return rc;
}
