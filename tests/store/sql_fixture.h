/* sql_fixture.h — the store tests' loader of a committed store fixture (a
 * `sqlite3 .dump` text under tests/store/fixtures) into a fresh database file.
 * Invariant: the fixture is read, never written. */
#ifndef PIT_TESTS_SQL_FIXTURE_H
#define PIT_TESTS_SQL_FIXTURE_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

/* tests/store/fixtures/NAME loaded into db: 1, or 0 with a failed check. */
static inline int sql_fixture_load(const char *name, const char *db) {
  char fx[600];
  const char *src = getenv("PIT_SOURCE_DIR");
  snprintf(fx, sizeof fx, "%s/tests/store/fixtures/%s", src ? src : ".", name);
  FILE *f = fopen(fx, "r");
  CHECK(f != NULL, "fixture %s", fx);
  if (!f)
    return 0;
  static char sql[1 << 17];
  size_t len = fread(sql, 1, sizeof sql - 1, f);
  fclose(f);
  sql[len] = '\0';
  sqlite3 *h = NULL;
  int ok = sqlite3_open(db, &h) == SQLITE_OK && sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK;
  CHECK(ok, "load fixture %s: %s", name, h ? sqlite3_errmsg(h) : "?");
  sqlite3_close(h);
  return ok;
}

#endif
