/* grid.c — a grid of generated images as one PNG (a GAN's samples), like
 * torchvision's save_image(normalize=True, padding=2): images laid out ncols per
 * row with a 2-pixel dark border, values mapped from [-1, 1] to [0, 255].
 * Invariant: written atomically (pit_atomic_open): a reader never sees half a PNG. */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/train.h"

int pit_png_grid_write(const char *path, const float *img, int n, int c, int h, int w, int ncols,
                       struct pit_err *e) {
  if (n <= 0 || (c != 1 && c != 3) || h <= 0 || w <= 0 || ncols <= 0)
    return pit_err_set(e, PIT_EARG, "cannot write '%s': bad grid shape", path);
  const int pad = 2;
  int nrows = (n + ncols - 1) / ncols;
  int gw = ncols * (w + pad) + pad, gh = nrows * (h + pad) + pad;
  int ch = c == 1 ? 1 : 3;
  unsigned char *pix = calloc((size_t)gw * gh * ch, 1); /* (gh, gw, ch) */
  png_bytep *rows = malloc(sizeof(png_bytep) * (size_t)gh);
  if (!pix || !rows) {
    free(pix);
    free(rows);
    return pit_err_set(e, PIT_ENOMEM, "out of memory writing '%s'", path);
  }
  for (int i = 0; i < n; i++) {
    int r0 = pad + (i / ncols) * (h + pad), c0 = pad + (i % ncols) * (w + pad);
    const float *im = img + (size_t)i * c * h * w; /* (c, h, w) */
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        for (int k = 0; k < ch; k++) {
          float v = (im[((size_t)k * h + y) * w + x] + 1.0f) * 127.5f;
          v = v < 0 ? 0 : v > 255 ? 255 : v;
          pix[((size_t)(r0 + y) * gw + (c0 + x)) * ch + k] = (unsigned char)(v + 0.5f);
        }
  }
  for (int y = 0; y < gh; y++)
    rows[y] = pix + (size_t)y * gw * ch;

  struct pit_atomic_file af;
  int rc = pit_atomic_open(&af, path, e);
  if (rc < 0) {
    free(pix);
    free(rows);
    return rc;
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    pit_atomic_abort(&af);
    free(pix);
    free(rows);
    return pit_err_set(e, PIT_ELIB, "cannot write PNG '%s' (libpng failed)", path);
  }
  png_init_io(png, af.fp);
  png_set_IHDR(png, info, (png_uint_32)gw, (png_uint_32)gh, 8,
               ch == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  free(pix);
  free(rows);
  return pit_atomic_commit(&af, e);
}
