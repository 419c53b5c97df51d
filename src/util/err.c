/* err.c — struct pit_err: one message per failure, never printed by the library. */
#include "pitstop/util.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

int pit_err_set(struct pit_err *e, int code, const char *fmt, ...) {
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    e->hint[0] = '\0';
  }
  return code;
}

int pit_err_errno(struct pit_err *e, int code, const char *fmt, ...) {
  int saved = errno;
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof e->msg)
      snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %s", strerror(saved));
    e->code = code;
    e->hint[0] = '\0';
  }
  errno = saved;
  return code;
}

void pit_err_hint(struct pit_err *e, const char *fmt, ...) {
  if (!e)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->hint, sizeof e->hint, fmt, ap);
  va_end(ap);
}

void pit_err_clear(struct pit_err *e) {
  if (e) {
    e->code = 0;
    e->msg[0] = '\0';
    e->hint[0] = '\0';
  }
}

int pit_err_bug(struct pit_err *e, const char *file, int line, const char *fmt, ...) {
  if (e) {
    int n = snprintf(e->msg, sizeof e->msg, "internal error at %s:%d: ", file, line);
    if (n >= 0 && (size_t)n < sizeof e->msg) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(e->msg + n, sizeof e->msg - (size_t)n, fmt, ap);
      va_end(ap);
    }
    e->code = PIT_EBUG;
    snprintf(e->hint, sizeof e->hint, "this is a defect in pitstop: please report it with the command that led here");
  }
  return PIT_EBUG;
}
