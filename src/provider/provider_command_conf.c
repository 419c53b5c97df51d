/* provider_command_conf.c — the `command` provider's configuration: the
 * built-in presets ("aws", "clap"), the JSON config file (--provider-config),
 * argv templates expanded and run with a time-out, and the items read back from
 * a command's output (JSON paths or a line regex). docs/providers.md describes
 * the file.
 *
 * Invariants:
 *  - a template entry becomes ONE argv entry whatever its placeholders hold:
 *    nothing reaches a shell; a placeholder with no value is an error naming it;
 *  - output that cannot be read (not JSON, lines no pattern matches) is an error
 *    naming the command, never a guess. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/provider_command.h"

/* ---------------- presets ---------------- */

struct preset {
  const char *name, *json;
};
static const struct preset presets[] = {
    {"aws",
     "{\"start\":[\"aws\",\"ec2\",\"run-instances\",\"--instance-type\",\"{itype}\",\"--count\",\"1\","
     "\"--image-id\",\"{image}\",\"--key-name\",\"{key}\",\"--security-group-ids\",\"{security_group}\","
     "\"spot?--instance-market-options\",\"spot?MarketType=spot\",\"zone?--placement\","
     "\"zone?AvailabilityZone={zone}\",\"--tag-specifications\","
     "\"ResourceType=instance,Tags=[{Key=pitstop-run,Value={run}}]\","
     "\"spot?ResourceType=spot-instances-request,Tags=[{Key=pitstop-run,Value={run}}]\",\"--output\",\"json\"],"
     "\"stop\":[\"aws\",\"ec2\",\"terminate-instances\",\"--instance-ids\",\"{id}\",\"--output\",\"json\"],"
     "\"list\":[\"aws\",\"ec2\",\"describe-instances\",\"--filters\",\"Name=tag:pitstop-run,Values={run}\","
     "\"--output\",\"json\"],"
     "\"notice\":[\"aws\",\"ec2\",\"describe-spot-instance-requests\",\"--filters\","
     "\"Name=tag:pitstop-run,Values={run}\",\"--output\",\"json\"],"
     "\"start_output\":{\"items\":\"Instances[]\",\"id\":\"InstanceId\",\"state\":\"State.Name\","
     "\"itype\":\"InstanceType\",\"host\":\"PrivateIpAddress\"},"
     "\"list_output\":{\"items\":\"Reservations[].Instances[]\",\"id\":\"InstanceId\",\"state\":\"State.Name\","
     "\"itype\":\"InstanceType\",\"host\":\"PrivateIpAddress\"},"
     "\"notice_output\":{\"items\":\"SpotInstanceRequests[]\",\"id\":\"InstanceId\",\"state\":\"Status.Code\"},"
     "\"ready_states\":[\"running\"],\"gone_states\":[\"shutting-down\",\"terminated\",\"stopping\",\"stopped\"],"
     "\"notice_states\":[\"marked-for-termination\"],\"grace_s\":120}"},
    {"clap",
     "{\"start\":[\"clapp\",\"node\",\"start\",\"{itype}:{count}\"],"
     "\"tag\":[\"clapp\",\"node\",\"add-tag\",\"{id}\",\"--tag\",\"pitstop-run={run}\"],"
     "\"stop\":[\"clapp\",\"node\",\"stop\",\"{id}\"],"
     "\"list\":[\"clapp\",\"node\",\"list\"],"
     "\"start_output\":{\"regex\":\"^\\\\* Node: ([^ ,]+), config: ([^ ,]+),.* status: ([a-z]+), ip: ([^ ,]*)\","
     "\"fields\":[\"id\",\"itype\",\"state\",\"host\"],\"ignore\":\"^(Started|Listing|[0-9]+ nodes?|-+)\"},"
     "\"list_output\":{\"regex\":\"^\\\\* Node: ([^ ,]+), config: ([^ ,]+),.* status: ([a-z]+), ip: ([^ ,]*), "
     "tags: ([^,]*)\",\"fields\":[\"id\",\"itype\",\"state\",\"host\",\"tags\"],"
     "\"ignore\":\"^(Listing|[0-9]+ nodes?|-+)\"},"
     "\"ready_states\":[\"reachable\"],\"gone_states\":[\"stopped\",\"terminated\"],"
     "\"notice_states\":[\"reclaiming\"],\"grace_s\":120}"},
};

/* ---------------- config ---------------- */

static int cfg_err(struct cmdp *c, struct pit_err *e, const char *fmt, const char *a, const char *b) {
  char msg[400];
  snprintf(msg, sizeof msg, fmt, a, b ? b : "");
  return pit_err_set(e, PIT_EFORMAT, "%s: %s", c->file, msg);
}

static int load_argv(struct cmdp *c, enum tmpl_kind k, const cJSON *a, struct pit_err *e) {
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) >= T_ARGS)
    return cfg_err(c, e, "\"%s\" must be a list of 1 to 63 argv strings", tk_name[k], NULL);
  for (int i = 0; c->t[k][i]; i++)
    free(c->t[k][i]);
  memset(c->t[k], 0, sizeof c->t[k]);
  int i = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, a) {
    if (!cJSON_IsString(s))
      return cfg_err(c, e, "\"%s\": every argv entry must be a string", tk_name[k], NULL);
    if (!(c->t[k][i++] = strdup(s->valuestring)))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  return 0;
}

static int load_states(struct cmdp *c, const cJSON *a, const char *key, char st[][32], int *n,
                       struct pit_err *e) {
  if (!a)
    return 0;
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > MAX_STATES)
    return cfg_err(c, e, "\"%s\" must be a list of at most 8 state names", key, NULL);
  *n = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, a) {
    if (!cJSON_IsString(s))
      return cfg_err(c, e, "\"%s\": states are strings", key, NULL);
    snprintf(st[(*n)++], 32, "%s", s->valuestring);
  }
  return 0;
}

static void fmt_free(struct outfmt *f) {
  if (f->have_re)
    regfree(&f->re);
  if (f->have_ignore)
    regfree(&f->ignore);
  f->have_re = f->have_ignore = 0;
}

static int load_fmt(struct cmdp *c, struct outfmt *f, const cJSON *o, const char *key, struct pit_err *e) {
  if (!o)
    return 0;
  if (!cJSON_IsObject(o))
    return cfg_err(c, e, "\"%s\" must be an object", key, NULL);
  fmt_free(f);
  memset(f, 0, sizeof *f);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(o, "items");
  const cJSON *re = cJSON_GetObjectItemCaseSensitive(o, "regex");
  if (cJSON_IsString(items)) {
    f->json = 1;
    snprintf(f->items, sizeof f->items, "%s", items->valuestring);
    for (int k = 0; k < F_N; k++) {
      const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, f_name[k]);
      if (cJSON_IsString(p))
        snprintf(f->path[k], sizeof f->path[k], "%s", p->valuestring);
    }
    if (!f->path[F_ID][0])
      return cfg_err(c, e, "\"%s\": a JSON output needs the path of \"id\"", key, NULL);
    return 0;
  }
  if (!cJSON_IsString(re))
    return cfg_err(c, e, "\"%s\" needs \"items\" (JSON paths) or \"regex\" (one item per line)", key, NULL);
  if (regcomp(&f->re, re->valuestring, REG_EXTENDED) != 0)
    return cfg_err(c, e, "\"%s\": '%s' is not an extended regular expression", key, re->valuestring);
  f->have_re = 1;
  const cJSON *fields = cJSON_GetObjectItemCaseSensitive(o, "fields");
  if (!cJSON_IsArray(fields))
    return cfg_err(c, e, "\"%s\": \"fields\" names each capture group (id, state, itype, host, tags)", key, NULL);
  int g = 1;
  const cJSON *s;
  cJSON_ArrayForEach(s, fields) {
    int k = 0;
    while (k < F_N && !(cJSON_IsString(s) && strcmp(s->valuestring, f_name[k]) == 0))
      k++;
    if (k == F_N)
      return cfg_err(c, e, "\"%s\": unknown field %s (id, state, itype, host, tags)", key,
                     cJSON_IsString(s) ? s->valuestring : "?");
    f->group[k] = g++;
  }
  if (!f->group[F_ID] || (size_t)g - 1 > f->re.re_nsub)
    return cfg_err(c, e, "\"%s\": the fields must name \"id\" and no more groups than the regex has", key, NULL);
  const cJSON *ig = cJSON_GetObjectItemCaseSensitive(o, "ignore");
  if (cJSON_IsString(ig)) {
    if (regcomp(&f->ignore, ig->valuestring, REG_EXTENDED | REG_NOSUB) != 0)
      return cfg_err(c, e, "\"%s\": ignore '%s' is not an extended regular expression", key, ig->valuestring);
    f->have_ignore = 1;
  }
  return 0;
}

/* The config's durations: key, field, default, least value (a time-out must be
 * above 0). Defaults, then each object applied over them. */
static const struct {
  const char *key;
  size_t off;
  double def, lo;
} durations[] = {
    {"start_timeout_s", offsetof(struct cmdp, start_timeout_s), 120, 0.1},
    {"stop_timeout_s", offsetof(struct cmdp, stop_timeout_s), 60, 0.1},
    {"list_timeout_s", offsetof(struct cmdp, list_timeout_s), 60, 0.1},
    {"boot_timeout_s", offsetof(struct cmdp, boot_timeout_s), 600, 0.1},
    {"poll_s", offsetof(struct cmdp, poll_s), 5, 0},
    {"retry_wait_s", offsetof(struct cmdp, retry_wait_s), 5, 0},
    {"grace_s", offsetof(struct cmdp, grace_s), 120, 0},
};
#define NDURATIONS (sizeof durations / sizeof durations[0])

static double *duration(struct cmdp *c, size_t i) { return (double *)((char *)c + durations[i].off); }

static int num(struct cmdp *c, const cJSON *o, const char *key, double *v, double lo, struct pit_err *e) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!x)
    return 0;
  if (!cJSON_IsNumber(x) || !(x->valuedouble >= lo) || !isfinite(x->valuedouble))
    return cfg_err(c, e, "\"%s\" must be a number of seconds (at least %s)", key, lo > 0 ? "a little" : "0");
  *v = x->valuedouble;
  return 0;
}

/* Applies one JSON object (a preset, then the user's file) over c. */
static int apply(struct cmdp *c, const cJSON *o, struct pit_err *e) {
  int rc = 0;
  for (int k = 0; k < TK_N && rc == 0; k++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, tk_name[k]);
    if (a)
      rc = load_argv(c, k, a, e);
  }
  if (rc == 0)
    rc = load_fmt(c, &c->fmt_start, cJSON_GetObjectItemCaseSensitive(o, "start_output"), "start_output", e);
  if (rc == 0)
    rc = load_fmt(c, &c->fmt_list, cJSON_GetObjectItemCaseSensitive(o, "list_output"), "list_output", e);
  if (rc == 0)
    rc = load_fmt(c, &c->fmt_notice, cJSON_GetObjectItemCaseSensitive(o, "notice_output"), "notice_output", e);
  if (rc == 0)
    rc = load_states(c, cJSON_GetObjectItemCaseSensitive(o, "ready_states"), "ready_states", c->ready, &c->nready, e);
  if (rc == 0)
    rc = load_states(c, cJSON_GetObjectItemCaseSensitive(o, "gone_states"), "gone_states", c->gone, &c->ngone, e);
  if (rc == 0)
    rc = load_states(c, cJSON_GetObjectItemCaseSensitive(o, "notice_states"), "notice_states", c->notice,
                     &c->nnotice, e);
  for (size_t i = 0; i < NDURATIONS && rc == 0; i++)
    rc = num(c, o, durations[i].key, duration(c, i), durations[i].lo, e);
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "start_retries");
  if (rc == 0 && r) {
    if (!cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble > 20)
      return cfg_err(c, e, "\"%s\" must be a count from 0 to 20", "start_retries", NULL);
    c->start_retries = (int)r->valuedouble;
  }
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "host");
  if (rc == 0 && h) {
    if (!cJSON_IsString(h))
      return cfg_err(c, e, "\"%s\" must be a host name", "host", NULL);
    snprintf(c->host, sizeof c->host, "%s", h->valuestring);
  }
  const cJSON *ws = cJSON_GetObjectItemCaseSensitive(o, "wrap_shell");
  if (rc == 0 && ws) {
    if (!cJSON_IsBool(ws))
      return cfg_err(c, e, "\"%s\" must be true or false (whether the wrap is a remote shell, as ssh is)",
                     "wrap_shell", NULL);
    c->wrap_shell = cJSON_IsTrue(ws);
  }
  const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "spot");
  if (rc == 0 && sp) {
    if (!cJSON_IsArray(sp) || cJSON_GetArraySize(sp) > 16)
      return cfg_err(c, e, "\"%s\" must be a list of instance types started on the spot market", "spot", NULL);
    const cJSON *s;
    c->nspot = 0;
    cJSON_ArrayForEach(s, sp) if (cJSON_IsString(s)) snprintf(c->spot_types[c->nspot++], PIT_NAME_MAX, "%s",
                                                            s->valuestring);
  }
  const cJSON *zs = cJSON_GetObjectItemCaseSensitive(o, "zones");
  if (rc == 0 && zs) {
    if (!cJSON_IsArray(zs) || cJSON_GetArraySize(zs) > PIT_ZONES_MAX)
      return cfg_err(c, e, "\"%s\" must be a list of at most 8 zone names", "zones", NULL);
    const cJSON *z;
    c->nzones = 0;
    cJSON_ArrayForEach(z, zs) {
      if (!cJSON_IsString(z) || !z->valuestring[0] || strlen(z->valuestring) >= PIT_ZONE_MAX ||
          strpbrk(z->valuestring, " \t"))
        return cfg_err(c, e, "\"zones\": '%s' is not a zone name (1-31 characters, no blanks)",
                       cJSON_IsString(z) ? z->valuestring : "?", NULL);
      snprintf(c->zones[c->nzones++], PIT_ZONE_MAX, "%s", z->valuestring);
    }
  }
  const cJSON *vars = cJSON_GetObjectItemCaseSensitive(o, "vars");
  if (rc == 0 && vars) {
    if (!cJSON_IsObject(vars))
      return cfg_err(c, e, "\"%s\" must be an object of strings (image, key, ...)", "vars", NULL);
    const cJSON *v;
    cJSON_ArrayForEach(v, vars) {
      if (!cJSON_IsString(v) || c->nvars == 32)
        return cfg_err(c, e, "vars.%s must be a string (at most 32 vars)", v->string, NULL);
      c->var_name[c->nvars] = strdup(v->string);
      c->var_val[c->nvars] = strdup(v->valuestring);
      if (!c->var_name[c->nvars] || !c->var_val[c->nvars])
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
      c->nvars++;
    }
  }
  return rc;
}

void ctl_cmd_free(struct cmdp *c) {
  for (int k = 0; k < TK_N; k++)
    for (int i = 0; c->t[k][i]; i++)
      free(c->t[k][i]);
  for (int i = 0; i < c->nvars; i++) {
    free(c->var_name[i]);
    free(c->var_val[i]);
  }
  fmt_free(&c->fmt_start);
  fmt_free(&c->fmt_list);
  fmt_free(&c->fmt_notice);
  free(c);
}

/* The whole of a file, NUL-terminated (malloc'd); NULL when it cannot be read. */
static char *read_whole(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  size_t cap = 1 << 14, n = 0;
  char *text = malloc(cap);
  while (text) {
    n += fread(text + n, 1, cap - n - 1, f);
    if (n + 1 < cap || ferror(f))
      break;
    char *g = realloc(text, cap * 2);
    if (!g)
      free(text);
    text = g;
    cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (text && bad) {
    free(text);
    return NULL;
  }
  if (text)
    text[n] = 0;
  return text;
}

static int parse_json_at(struct cmdp *c, const char *text, const char *what, cJSON **out, struct pit_err *e) {
  const char *end = NULL;
  *out = cJSON_ParseWithOpts(text, &end, 1);
  if (*out)
    return 0;
  int line = 1;
  while (end && end > text && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
    end--; /* an error at the end of the file: the last line that holds something */
  for (const char *p = text; end && p < end; p++)
    line += *p == '\n';
  (void)c;
  return pit_err_set(e, PIT_EFORMAT, "%s:%d: not valid JSON", what, line);
}

/* Defaults, then the preset the file names, then the file's own keys. */
int ctl_cmd_open_config(struct pit_provider *p, struct cmdp *c, struct pit_err *e) {
  for (size_t i = 0; i < NDURATIONS; i++)
    *duration(c, i) = durations[i].def;
  c->start_retries = 2;
  c->last_poll = -1e9;
  c->wrap_shell = -1;
  p->impl = c;
  if (!p->conf.config) {
    pit_err_set(e, PIT_EARG, "the command provider needs --provider-config FILE");
    pit_err_hint(e, "a JSON file: {\"preset\": \"aws\", \"vars\": {...}} or your own start/stop/list templates "
                    "(docs/providers.md)");
    return PIT_EARG;
  }
  snprintf(c->file, sizeof c->file, "%s", p->conf.config);
  char *text = read_whole(c->file);
  if (!text)
    return pit_err_errno(e, PIT_EIO, "cannot read '%s'", c->file);
  cJSON *user = NULL;
  int rc = parse_json_at(c, text, c->file, &user, e);
  free(text);
  if (rc < 0)
    return rc;
  if (!cJSON_IsObject(user)) {
    cJSON_Delete(user);
    return cfg_err(c, e, "the config must be a JSON object%s%s", "", NULL);
  }
  const cJSON *pre = cJSON_GetObjectItemCaseSensitive(user, "preset");
  if (pre) {
    size_t i = 0;
    while (i < sizeof presets / sizeof presets[0] &&
           !(cJSON_IsString(pre) && strcmp(presets[i].name, pre->valuestring) == 0))
      i++;
    if (i == sizeof presets / sizeof presets[0]) {
      rc = cfg_err(c, e, "unknown preset '%s' (aws, clap)", cJSON_IsString(pre) ? pre->valuestring : "?", NULL);
      cJSON_Delete(user);
      return rc;
    }
    cJSON *po = cJSON_Parse(presets[i].json);
    rc = po ? apply(c, po, e) : PIT_BUG(e, "preset %s is not JSON", presets[i].name);
    cJSON_Delete(po);
  }
  if (rc == 0)
    rc = apply(c, user, e);
  cJSON_Delete(user);
  if (rc < 0)
    return rc;
  const char *need[] = {"start", "stop", "list"};
  for (int k = 0; k < 3; k++)
    if (!c->t[k][0])
      return cfg_err(c, e, "no \"%s\" template (give one, or a \"preset\")", need[k], NULL);
  if (!c->fmt_list.json && !c->fmt_list.have_re)
    return cfg_err(c, e, "no \"%s\" (how to read the list command's output)", "list_output", NULL);
  if (c->nready == 0)
    return cfg_err(c, e, "no \"%s\" (the states of a node ready to run ranks)", "ready_states", NULL);
  p->nzones = c->nzones;
  memcpy(p->zones, c->zones, sizeof p->zones);
  if (c->wrap_shell < 0) { /* an ssh wrap is a remote shell: it runs one line, without our environment */
    const char *w0 = c->t[TK_WRAP][0], *base = w0 ? strrchr(w0, '/') : NULL;
    c->wrap_shell = w0 && strcmp(base ? base + 1 : w0, "ssh") == 0;
  }
  c->wrap_shell = c->wrap_shell && c->t[TK_WRAP][0];
  p->wrap_shell = c->wrap_shell;
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/cloud", p->conf.state_dir);
  return pit_mkdir_p(dir, e);
}

/* ---------------- templates ---------------- */

static const char *lookup(const struct cmdp *c, const struct subst *s, const char *name, size_t n) {
  const char *names[] = {"itype", "count", "run", "id", "host", "market", "zone"};
  const char *vals[] = {s->itype, s->count, s->run, s->id, s->host, s->market, s->zone};
  for (int i = 0; i < 7; i++)
    if (strlen(names[i]) == n && strncmp(names[i], name, n) == 0)
      return vals[i] ? vals[i] : "";
  for (int i = 0; i < c->nvars; i++)
    if (strlen(c->var_name[i]) == n && strncmp(c->var_name[i], name, n) == 0)
      return c->var_val[i];
  return NULL;
}

/* Expands template k into argv (owned strings in out, NULL-terminated). */
int ctl_cmd_expand(const struct cmdp *c, enum tmpl_kind k, const struct subst *s, int spot, char **out,
                   struct pit_err *e) {
  int n = 0;
  for (int i = 0; c->t[k][i]; i++) {
    const char *src = c->t[k][i];
    if (strncmp(src, "spot?", 5) == 0 || strncmp(src, "ondemand?", 9) == 0) {
      int want_spot = src[0] == 's';
      if (want_spot != spot)
        continue;
      src = strchr(src, '?') + 1;
    } else if (strncmp(src, "zone?", 5) == 0) { /* only for a start in a named zone */
      if (!s->zone || !s->zone[0])
        continue;
      src += 5;
    }
    char buf[2048];
    size_t at = 0;
    for (const char *q = src; *q && at + 1 < sizeof buf;) {
      size_t len = 0;
      if (*q == '{') {
        while ((q[1 + len] >= 'a' && q[1 + len] <= 'z') || q[1 + len] == '_' || (q[1 + len] >= '0' && q[1 + len] <= '9'))
          len++;
      }
      if (*q == '{' && len > 0 && q[1 + len] == '}') {
        const char *v = lookup(c, s, q + 1, len);
        if (!v) {
          for (int j = 0; j < n; j++)
            free(out[j]);
          pit_err_set(e, PIT_EARG, "%s: the %s template names {%.*s}, which has no value", c->file, tk_name[k],
                      (int)len, q + 1);
          pit_err_hint(e, "give it in \"vars\": {\"%.*s\": \"...\"}", (int)len, q + 1);
          return PIT_EARG;
        }
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s", v);
        q += len + 2;
        continue;
      }
      buf[at++] = *q++;
    }
    buf[at < sizeof buf ? at : sizeof buf - 1] = 0;
    if (n + 1 >= T_ARGS || !(out[n] = strdup(buf))) {
      for (int j = 0; j < n; j++)
        free(out[j]);
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    n++;
  }
  out[n] = NULL;
  return 0;
}

void ctl_cmd_argv_release(char **v) {
  for (int i = 0; v[i]; i++)
    free(v[i]);
  v[0] = NULL;
}

/* Runs template k (expanded) with a time-out; its stdout into *out (malloc'd),
 * stderr appended to STATE_DIR/provider.log. Returns 0 and *status (exit
 * code, 128+signal, or -1 when it hung and was killed), or < 0 when it could
 * not run at all. */
int ctl_cmd_run_tmpl(struct pit_provider *p, enum tmpl_kind k, const struct subst *s, int spot, double timeout_s,
                     char **out, int *status, char *argv0, struct pit_err *e) {
  return ctl_cmd_run_tmpl_more(p, k, s, spot, NULL, 0, timeout_s, out, status, argv0, e);
}

int ctl_cmd_run_tmpl_more(struct pit_provider *p, enum tmpl_kind k, const struct subst *s, int spot,
                          const char *const *more, int nmore, double timeout_s, char **out, int *status,
                          char *argv0, struct pit_err *e) {
  struct cmdp *c = p->impl;
  char *argv[T_ARGS];
  *out = NULL;
  int rc = ctl_cmd_expand(c, k, s, spot, argv, e);
  if (rc < 0)
    return rc;
  int n = 0;
  while (argv[n])
    n++;
  for (int i = 0; i < nmore && rc == 0; i++)
    if (n + 1 >= T_ARGS || !(argv[n++] = strdup(more[i])))
      rc = pit_err_set(e, PIT_ENOMEM, "the %s command is too long", tk_name[k]);
  argv[n] = NULL;
  if (rc < 0) {
    ctl_cmd_argv_release(argv);
    return rc;
  }
  snprintf(argv0, 64, "%s", argv[0]);
  char outp[1100], logp[1100];
  snprintf(outp, sizeof outp, "%s/cloud/%s.out", p->conf.state_dir, tk_name[k]);
  snprintf(logp, sizeof logp, "%s/provider.log", p->conf.state_dir);
  FILE *lf = fopen(logp, "a");
  if (lf) {
    fprintf(lf, "--- %s:", tk_name[k]);
    for (int i = 0; argv[i]; i++)
      fprintf(lf, " [%s]", argv[i]);
    fputc('\n', lf);
    fclose(lf);
  }
  /* stdout kept whole (up to 4 MiB) and saved beside the log; stderr's tail into the log */
  size_t cap = (size_t)4 << 20;
  char *text = malloc(cap), err[4096];
  if (!text) {
    ctl_cmd_argv_release(argv);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  int st = 0;
  struct pit_err e2 = {0};
  rc = pit_child_capture(argv, timeout_s, text, cap, err, sizeof err, &st, &e2);
  ctl_cmd_argv_release(argv);
  if (rc == PIT_ENOTFOUND || rc == PIT_ENOMEM || rc == PIT_EIO) {
    free(text);
    *e = e2;
    return rc;
  }
  if (rc < 0) { /* it hung: killed */
    st = -1;
    text[0] = 0;
    snprintf(err, sizeof err, "%s\n", e2.msg);
  }
  *status = st;
  if ((lf = fopen(logp, "a"))) {
    fprintf(lf, "%s%sstatus %d\n", err, err[0] && err[strlen(err) - 1] != '\n' ? "\n" : "", st);
    fclose(lf);
  }
  pit_file_write_atomic(outp, text, strlen(text), &e2);
  *out = text;
  return 0;
}

/* ---------------- output → items ---------------- */

/* Follows path ("A[].B.C[]") from node, appending the leaves to v. */
static void json_walk(const cJSON *node, const char *path, const cJSON **v, int *n, int cap) {
  if (!node || *n >= cap)
    return;
  if (!*path) {
    v[(*n)++] = node;
    return;
  }
  const char *dot = strchr(path, '.');
  size_t len = dot ? (size_t)(dot - path) : strlen(path);
  const char *rest = dot ? dot + 1 : "";
  int iter = len >= 2 && path[len - 2] == '[' && path[len - 1] == ']';
  char key[64];
  snprintf(key, sizeof key, "%.*s", (int)(iter ? len - 2 : len), path);
  const cJSON *x = key[0] ? cJSON_GetObjectItemCaseSensitive(node, key) : node;
  if (!iter) {
    json_walk(x, rest, v, n, cap);
    return;
  }
  if (!cJSON_IsArray(x))
    return;
  const cJSON *el;
  cJSON_ArrayForEach(el, x) json_walk(el, rest, v, n, cap);
}

int ctl_cmd_parse_items(const struct outfmt *f, const char *text, const char *what, struct item *it, int cap,
                        int *nit, struct pit_err *e) {
  *nit = 0;
  if (f->json) {
    cJSON *root = NULL;
    int rc = parse_json_at(NULL, text, what, &root, e);
    if (rc < 0) {
      pit_err_hint(e, "its output is kept in the run directory's cloud/*.out");
      return rc;
    }
    const cJSON *v[MAX_ITEMS];
    int n = 0;
    json_walk(root, f->items, v, &n, MAX_ITEMS);
    for (int i = 0; i < n && *nit < cap; i++) {
      struct item *x = &it[*nit];
      memset(x, 0, sizeof *x);
      for (int k = 0; k < F_N; k++) {
        if (!f->path[k][0])
          continue;
        const cJSON *leaf[1];
        int nl = 0;
        json_walk(v[i], f->path[k], leaf, &nl, 1);
        char *dst[] = {x->id, x->state, x->itype, x->host, x->tags};
        size_t sz[] = {sizeof x->id, sizeof x->state, sizeof x->itype, sizeof x->host, sizeof x->tags};
        if (nl && cJSON_IsString(leaf[0]))
          snprintf(dst[k], sz[k], "%s", leaf[0]->valuestring);
      }
      if (x->id[0])
        (*nit)++;
    }
    cJSON_Delete(root);
    return 0;
  }
  int line = 0;
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
    p += len + (nl ? 1 : 0);
    line++;
    size_t bl = strlen(buf);
    while (bl && (buf[bl - 1] == '\r' || buf[bl - 1] == ' '))
      buf[--bl] = 0;
    if (!bl || (f->have_ignore && regexec(&f->ignore, buf, 0, NULL, 0) == 0))
      continue;
    regmatch_t m[F_N + 4];
    if (regexec(&f->re, buf, F_N + 4, m, 0) != 0) {
      pit_err_set(e, PIT_EFORMAT, "%s:%d: a line this provider cannot read: '%.80s'", what, line, buf);
      pit_err_hint(e, "the config's regex (list_output/start_output) says what a node's line looks like");
      return PIT_EFORMAT;
    }
    if (*nit >= cap)
      continue;
    struct item *x = &it[*nit];
    memset(x, 0, sizeof *x);
    char *dst[] = {x->id, x->state, x->itype, x->host, x->tags};
    size_t sz[] = {sizeof x->id, sizeof x->state, sizeof x->itype, sizeof x->host, sizeof x->tags};
    for (int k = 0; k < F_N; k++) {
      int g = f->group[k];
      if (g && m[g].rm_so >= 0)
        snprintf(dst[k], sz[k], "%.*s", (int)(m[g].rm_eo - m[g].rm_so), buf + m[g].rm_so);
    }
    if (x->id[0])
      (*nit)++;
  }
  return 0;
}
