/* test_summary_fields.c — the summary's three formats cannot drift: every
 * field of `--format json` (a run and a group, every value present) has its
 * column in the CSV header (top-level key k → column k; a member k of
 * "config" → k; of another object o → o_k; the "group" object → group), every
 * CSV row has as many cells as the header, and docs/analysis.md names every
 * JSON key and shows the CSV header as it is printed. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "pitstop/report.h"

/* Two ranks, epochs with validation, a checkpoint, a batch_shares decision, an end. */
static void write_records(const char *path) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "cannot create %s", path);
  if (!f)
    return;
  fprintf(f, "{\"type\":\"init\",\"run\":\"r1\",\"gen\":0,\"t\":1,\"init_s\":1,\"rdzv_s\":0.1,\"ranks\":2,"
             "\"nodes\":1,\"config\":{\"model\":\"cnn\",\"batch\":64,\"threads\":1,\"itype\":\"c5.xlarge\"}}\n");
  double t = 1;
  int step = 0;
  for (int ep = 0; ep < 2; ep++) {
    if (ep == 1) /* a resume: a second init */
      fprintf(f, "{\"type\":\"init\",\"run\":\"r1\",\"gen\":1,\"t\":%.6f,\"init_s\":2,\"rdzv_s\":0.3,"
                 "\"ranks\":2,\"nodes\":1}\n",
              t);
    for (int it = 0; it < 30; it++, step++) {
      double s = 0.01 + 0.001 * ((step * 7) % 5);
      t += s;
      fprintf(f, "{\"type\":\"iter\",\"run\":\"r1\",\"gen\":%d,\"t\":%.6f,\"epoch\":%d,\"iter\":%d,\"step\":%d,"
                 "\"batch\":64,\"step_s\":%.6f,\"data_s\":0.001,\"compute_s\":[%.6f,%.6f],\"wait_s\":[%.6f,%.6f],"
                 "\"loss\":1.5}\n",
              ep, t, ep, it, step, s, s * 0.7, s * 0.8, s * 0.3, s * 0.2);
      if (step == 20 || step == 40)
        fprintf(f, "{\"type\":\"checkpoint\",\"run\":\"r1\",\"gen\":0,\"t\":%.6f,\"ckpt_s\":0.2,\"path\":\"c\","
                   "\"bytes\":10}\n",
                t);
      if (step == 25)
        fprintf(f, "{\"type\":\"decision\",\"run\":\"r1\",\"gen\":0,\"t\":%.6f,\"detail\":{\"what\":"
                   "\"batch_shares\",\"shares\":[36,28]}}\n",
                t);
    }
    fprintf(f, "{\"type\":\"validation\",\"run\":\"r1\",\"gen\":0,\"t\":%.6f,\"epoch\":%d,\"val_s\":0.05,"
               "\"accuracy\":0.5}\n",
            t += 0.05, ep);
    fprintf(f, "{\"type\":\"epoch\",\"run\":\"r1\",\"gen\":0,\"t\":%.6f,\"epoch\":%d,\"epoch_s\":0.4}\n", t, ep);
  }
  fprintf(f, "{\"type\":\"end\",\"run\":\"r1\",\"gen\":0,\"t\":%.6f,\"total_s\":%.6f}\n", t, t);
  fclose(f);
}

/* The output of one format, as a string (owned). */
static char *format(enum pit_summary_format fmt, const struct pit_runset *rs, const struct pit_groups *g) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  struct pit_err e = {0};
  CHECK(f && pit_summary_write(f, fmt, rs, g, "configurations", &e) == 0, "write: %s", e.msg);
  if (f)
    fclose(f);
  return buf;
}

static int in_header(char *const *cols, int ncols, const char *name) {
  for (int i = 0; i < ncols; i++)
    if (strcmp(cols[i], name) == 0)
      return 1;
  return 0;
}

/* docs names `key` (in backquotes). */
static void check_doc(const char *doc, const char *key) {
  char q[128];
  snprintf(q, sizeof q, "`%s`", key);
  CHECK(doc && strstr(doc, q), "docs/analysis.md does not name %s", q);
}

int main(void) {
  char path[600];
  snprintf(path, sizeof path, "%s/r.jsonl", check_tmpdir());
  write_records(path);
  struct pit_runset rs;
  struct pit_groups g;
  struct pit_err e = {0};
  char gbuf[256];
  pit_runset_init(&rs);
  CHECK(pit_runset_load_events(&rs, path, NULL, 0, &e) == 0 && pit_runset_summarize(&rs, &e) == 0, "load: %s",
        e.msg);
  CHECK(pit_groups_parse(&g, NULL, gbuf, sizeof gbuf, &e) == 0 && pit_groups_make(&g, &rs, &e) == 0, "groups: %s",
        e.msg);
  char deflt[256] = "";
  for (int i = 0; i < g.nfields; i++)
    snprintf(deflt + strlen(deflt), sizeof deflt - strlen(deflt), "%s%s", i ? "," : "", g.fields[i]);
  CHECK(strcmp(deflt, "model,batch,ranks,nodes,itype,threads") == 0, "default grouping from the field table: %s",
        deflt);

  char *json = format(PIT_SUMMARY_JSON, &rs, &g), *csv = format(PIT_SUMMARY_CSV, &rs, &g);
  /* the CSV header, as printed and as pit_summary_csv_column lists it */
  char *cols[512], buf[64];
  int ncols = 0;
  char *save = NULL, *line = strtok_r(csv, "\n", &save);
  char *header = line ? strdup(line) : NULL;
  for (char *s2 = NULL, *c = line ? strtok_r(line, ",", &s2) : NULL; c && ncols < 512; c = strtok_r(NULL, ",", &s2))
    cols[ncols++] = c;
  for (int i = 0; i < ncols; i++)
    CHECK(pit_summary_csv_column(i, buf, sizeof buf) && strcmp(pit_summary_csv_column(i, buf, sizeof buf), cols[i]) == 0,
          "column %d: %s", i, cols[i]);
  CHECK(pit_summary_csv_column(ncols, buf, sizeof buf) == NULL, "more columns listed than printed");
  int rows = 0;
  for (char *l = strtok_r(NULL, "\n", &save); l; l = strtok_r(NULL, "\n", &save), rows++) {
    int cells = 1;
    for (char *p = l; *p; p++) /* names and values hold no comma or quote here */
      cells += *p == ',';
    CHECK(cells == ncols, "CSV row %d has %d cells, the header %d", rows, cells, ncols);
  }
  CHECK(rows == 2, "one run and one group: %d rows", rows);

  char docpath[600];
  snprintf(docpath, sizeof docpath, "%s/docs/analysis.md", getenv("PIT_SOURCE_DIR") ? getenv("PIT_SOURCE_DIR") : ".");
  char *doc = check_slurp(docpath);
  CHECK(doc != NULL, "cannot read %s", docpath);
  CHECK(doc && header && strstr(doc, header), "docs/analysis.md does not show the CSV header:\n%s", header);

  cJSON *arr = json ? cJSON_Parse(json) : NULL;
  CHECK(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 2, "JSON: an array of a run and a group");
  int leaves = 0;
  const cJSON *obj;
  cJSON_ArrayForEach(obj, arr) {
    const cJSON *f;
    cJSON_ArrayForEach(f, obj) {
      check_doc(doc, f->string);
      CHECK(!cJSON_IsNull(f), "%s is null: the fixture should give every field a value", f->string);
      if (cJSON_IsObject(f) && strcmp(f->string, "group") != 0) {
        const cJSON *m;
        cJSON_ArrayForEach(m, f) {
          char col[128];
          if (strcmp(f->string, "config") == 0)
            snprintf(col, sizeof col, "%s", m->string);
          else
            snprintf(col, sizeof col, "%s_%s", f->string, m->string);
          CHECK(in_header(cols, ncols, col), "JSON field %s.%s has no CSV column %s", f->string, m->string, col);
          CHECK(!cJSON_IsNull(m), "%s.%s is null", f->string, m->string);
          check_doc(doc, m->string);
          leaves++;
        }
      } else {
        CHECK(in_header(cols, ncols, f->string), "JSON field %s has no CSV column", f->string);
        leaves++;
      }
    }
  }
  CHECK(leaves > 90, "JSON fields seen: %d", leaves);
  cJSON_Delete(arr);
  free(doc);
  free(header);
  free(json);
  free(csv);
  pit_groups_release(&g);
  pit_runset_release(&rs);
  return check_done();
}
