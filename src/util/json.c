/* json.c — one JSON printer for every record and report pitstop writes.
 *
 * cJSON prints a number that is not an int with "%1.15g" and, only when that
 * does not read back exactly, with "%1.17g". An integer of 2^31 or more can so
 * come out as "1.23456789012345e+15": the same double, but a JSON reader such
 * as Python's json reads it as a float, and a seed turned into 1234567890123450.0
 * names another sampler. pit_json_print writes every integral number below 2^53
 * in magnitude as an integer.
 *
 * Invariants: the tree given is not changed (a copy is printed); the text is
 * what cJSON_PrintUnformatted gives for every other value. */
#include "pitstop/util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Turns integral numbers outside int's range but exact in a double into raw
 * integer text, everywhere below x. Returns -1 when out of memory. */
static int integers_raw(cJSON *x) {
  for (; x; x = x->next) {
    if (cJSON_IsNumber(x)) {
      double d = x->valuedouble;
      if (isfinite(d) && d == floor(d) && fabs(d) < 9007199254740992.0 && (double)x->valueint != d) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.0f", d);
        char *s = strdup(buf);
        if (!s)
          return -1;
        x->type = cJSON_Raw;
        x->valuestring = s;
      }
    } else if (x->child && integers_raw(x->child) < 0) {
      return -1;
    }
  }
  return 0;
}

char *pit_json_print(const struct cJSON *x) {
  if (!x)
    return NULL;
  cJSON *copy = cJSON_Duplicate(x, 1);
  if (!copy)
    return NULL;
  char *txt = integers_raw(copy) == 0 ? cJSON_PrintUnformatted(copy) : NULL;  /* a copy has no siblings */
  cJSON_Delete(copy);
  return txt;
}
