/* test_events_append.c — an events file reopened for appending (a restarted
 * controller, a resumed pitstop train) whose writer was killed in the middle of a
 * record: its unfinished last line is cut off at open (ev.dropped says how many
 * bytes), so the next record starts a line of its own and every line parses.
 * Found by hand: a controller SIGKILLed after stdio had flushed part of a long
 * decision record; the restarted one appended to that line, and its bill, the
 * replay, the timeline and report.html all stopped at "events.jsonl:27: not valid
 * JSON". A file that ends with its newline, an empty one and one that is a single
 * unfinished line (cut to empty) are covered too. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/record.h"

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "open %s", path);
  fputs(text, f);
  fclose(f);
}

/* path reopened for appending, one record added: the bytes cut; the file's text into out */
static long long append_one(const char *path, char *out, size_t n) {
  struct pit_events ev;
  struct pit_err e = {0};
  CHECK(pit_events_open_mode(&ev, path, 1, &e) == 0, "%s", e.msg);
  long long cut = (long long)ev.dropped;
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_END;
  snprintf(r.run, sizeof r.run, "x");
  r.step = 3;
  snprintf(r.status, sizeof r.status, "done");
  CHECK(pit_events_write(&ev, &r, &e) == 0, "%s", e.msg);
  pit_events_release(&ev);
  pit_record_release(&r);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "reopen %s", path);
  size_t k = fread(out, 1, n - 1, f);
  out[k] = 0;
  fclose(f);
  return cut;
}

/* every line of text parses as a record: how many */
static int lines_ok(const char *text) {
  int n = 0;
  char line[4096];
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    CHECK(nl != NULL, "a line without its newline: '%s'", p);
    size_t len = (size_t)(nl - p);
    CHECK(len < sizeof line, "line too long");
    memcpy(line, p, len);
    line[len] = 0;
    struct pit_record r;
    pit_record_init(&r);
    struct pit_err e = {0};
    CHECK(pit_record_parse(&r, line, len, &e) == 0, "line %d '%s': %s", n + 1, line, e.msg);
    pit_record_release(&r);
    n++;
    p = nl + 1;
  }
  return n;
}

int main(void) {
  char path[512], text[8192];
  snprintf(path, sizeof path, "%s/events.jsonl", check_tmpdir());
  const char *whole = "{\"type\":\"end\",\"run\":\"x\",\"step\":1,\"status\":\"stopped\"}\n";
  char killed[512];
  snprintf(killed, sizeof killed, "%s{\"type\":\"decision\",\"run\":\"x\",\"t\":1.5,\"detail\":{\"wha", whole);

  put(path, killed);
  long long cut = append_one(path, text, sizeof text);
  CHECK(cut == (long long)(strlen(killed) - strlen(whole)), "cut %lld bytes", cut);
  CHECK(lines_ok(text) == 2, "the whole record and the new one: %s", text);

  put(path, whole);
  CHECK(append_one(path, text, sizeof text) == 0, "a finished file is kept whole");
  CHECK(lines_ok(text) == 2, "%s", text);

  put(path, "");
  CHECK(append_one(path, text, sizeof text) == 0 && lines_ok(text) == 1, "an empty file: %s", text);

  const char *only = "{\"type\":\"iter\",\"run\":\"x\",\"st";
  put(path, only);
  CHECK(append_one(path, text, sizeof text) == (long long)strlen(only) && lines_ok(text) == 1, "one unfinished line: %s",
        text);
  return check_done();
}
