/* groups.c — runs grouped by configuration fields (`summary --group-by`):
 * a group is the runs with equal text values of the grouping fields (analysis
 * module's pit_config_field: the table's fields, or any key of the init
 * config), in order of first appearance, with the runs' series concatenated
 * and summarized as one.
 * An elastic run that changed configuration (a resize: pit_series_seg) is
 * split: each segment's generations go to the group of its own configuration
 * (the quickstart's 1, 2, then 1 node: two groups), not all to the first's.
 * Invariants: every iteration is in exactly one group; a group's name lists every
 * grouping field as "field=value" in the order given. */
#include <stdlib.h>
#include <string.h>

#include "pitstop/report.h"

int pit_groups_parse(struct pit_groups *g, const char *spec, char *buf, size_t bufn, struct pit_err *e) {
  memset(g, 0, sizeof *g);
  if (spec) {
    snprintf(buf, bufn, "%s", spec);
  } else { /* the default: the table's key fields, in its order */
    size_t off = 0;
    buf[0] = '\0';
    for (int f = 0; f < PIT_CF_COUNT && off < bufn; f++)
      if (pit_config_field_def(f)->in_key)
        off += (size_t)snprintf(buf + off, bufn - off, "%s%s", off ? "," : "", pit_config_field_def(f)->name);
  }
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!*tok)
      continue;
    if (g->nfields == PIT_GROUP_MAX_FIELDS)
      return pit_err_set(e, PIT_EARG, "at most %d --group-by fields", PIT_GROUP_MAX_FIELDS);
    g->fields[g->nfields++] = tok;
  }
  if (g->nfields == 0)
    return pit_err_set(e, PIT_EARG, "--group-by needs at least one field");
  return 0;
}

void pit_groups_release(struct pit_groups *g) {
  for (int i = 0; i < g->n; i++) {
    pit_series_release(&g->g[i].series);
    pit_summary_release(&g->g[i].sum);
  }
  free(g->g);
  g->g = NULL;
  g->n = 0;
}

int pit_groups_make(struct pit_groups *g, const struct pit_runset *rs, struct pit_err *e) {
  g->g = NULL; /* grown one group at a time: an elastic run may add several */
  char vals[PIT_GROUP_MAX_FIELDS][PIT_MEMBERSHIP_TEXT_MAX];
  for (int i = 0; i < rs->n; i++) {
    const struct pit_report_run *ru = &rs->runs[i];
    /* an elastic run's segments (its generations on one membership each) go
     * to their own configurations' groups; any other run goes whole */
    for (int part = 0; part < pit_series_parts(&ru->series); part++) {
      const struct pit_series_seg *seg = pit_series_part(&ru->series, part);
      const struct pit_config *cfg = seg ? &seg->cfg : &ru->cfg;
      char name[512] = "";
      size_t off = 0;
      for (int f = 0; f < g->nfields; f++) {
        pit_config_field(cfg, seg ? seg->config : ru->config, g->fields[f], vals[f], sizeof vals[f]);
        off += (size_t)snprintf(name + off, off < sizeof name ? sizeof name - off : 0, "%s%s=%s", f ? " " : "",
                                g->fields[f], vals[f]);
        if (off >= sizeof name)
          off = sizeof name - 1;
      }
      int k = 0;
      while (k < g->n && strcmp(g->g[k].name, name) != 0)
        k++;
      if (k == g->n) {
        struct pit_report_group *grown = realloc(g->g, sizeof *g->g * (size_t)(g->n + 1));
        if (!grown)
          return pit_err_set(e, PIT_ENOMEM, "out of memory");
        g->g = grown;
        struct pit_report_group *gr = &g->g[g->n++];
        memset(gr, 0, sizeof *gr);
        snprintf(gr->name, sizeof gr->name, "%s", name);
        memcpy(gr->vals, vals, sizeof gr->vals);
        gr->cfg = *cfg;
        pit_series_init(&gr->series);
      }
      int rc = pit_series_append_part(&g->g[k].series, &ru->series, part, e);
      if (rc)
        return rc;
    }
  }
  for (int k = 0; k < g->n; k++) {
    int rc = pit_series_summarize(&g->g[k].series, &g->g[k].sum, e);
    if (rc)
      return rc;
  }
  return 0;
}
