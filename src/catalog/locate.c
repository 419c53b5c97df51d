/* locate.c — where the default catalog is: the one lookup every command uses
 * when it is given no --catalog (pitstop run, profile, simulate --replay, plot,
 * parse). Order and reasons in include/pitstop/catalog.h and docs/catalog.md.
 *
 * Invariants: no hidden state (the program's path is an argument, never read
 * from /proc here); a found path is readable when it is returned; nothing is
 * printed; the places come from the program's path and two directories fixed
 * when the library was configured (PIT_SOURCE_CATALOG_DIR, PIT_INSTALL_CATALOG_DIR,
 * set in CMakeLists.txt). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pitstop/catalog.h"

#ifndef PIT_SOURCE_CATALOG_DIR /* the source tree's catalogs/ (CMakeLists.txt sets it) */
#define PIT_SOURCE_CATALOG_DIR ""
#endif
#ifndef PIT_INSTALL_CATALOG_DIR /* CMAKE_INSTALL_FULL_DATADIR/pitstop/catalogs (CMakeLists.txt sets it) */
#define PIT_INSTALL_CATALOG_DIR "/usr/local/share/pitstop/catalogs"
#endif

int pit_catalog_default_path(const char *exe, const char *name, char *out, size_t cap, struct pit_err *e) {
  if (!name || !*name || strchr(name, '/') || !out || cap == 0)
    return pit_err_set(e, PIT_EARG, "a default catalog is named by a file name such as local.tsv");
  char dir[4096] = "";
  if (exe && *exe) {
    const char *slash = strrchr(exe, '/');
    if (slash)
      snprintf(dir, sizeof dir, "%.*s", (int)(slash - exe), exe);
  }
  /* {directory, relative part}: the program's directory only when it is known */
  const char *where[][2] = {
      {dir, "/../share/pitstop/catalogs/"}, /* an installed prefix, wherever it now is */
      {dir, "/../catalogs/"},               /* a build directory inside the source tree */
      {PIT_SOURCE_CATALOG_DIR, "/"},        /* the source tree of an out-of-tree build */
      {PIT_INSTALL_CATALOG_DIR, "/"},       /* the prefix given when it was configured */
  };
  for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
    if (!*where[i][0])
      continue;
    int n = snprintf(out, cap, "%s%s%s", where[i][0], where[i][1], name);
    if (n > 0 && (size_t)n < cap && access(out, R_OK) == 0)
      return 0;
  }
  out[0] = 0;
  if (*dir)
    pit_err_set(e, PIT_ENOTFOUND, "no default catalog %s in %s/../share/pitstop/catalogs, %s/../catalogs%s%s or %s",
                name, dir, dir, *PIT_SOURCE_CATALOG_DIR ? ", " : "", PIT_SOURCE_CATALOG_DIR, PIT_INSTALL_CATALOG_DIR);
  else
    pit_err_set(e, PIT_ENOTFOUND, "no default catalog %s in %s%s%s (the program's own directory is unknown)", name,
                PIT_SOURCE_CATALOG_DIR, *PIT_SOURCE_CATALOG_DIR ? " or " : "", PIT_INSTALL_CATALOG_DIR);
  pit_err_hint(e, "give the catalog with --catalog FILE");
  return PIT_ENOTFOUND;
}
