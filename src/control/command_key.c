/* command_key.c — a user's command as the store keys it, and when two keys
 * name the same work per step.
 *
 * A command run by `pitstop run -- CMD` is stored under its argv as JSON text
 * (the init config's "command"). Its earlier runs are its profile (the cost
 * policy's prior, `pitstop profile --from-db -- CMD`). Two argvs name the same
 * work per step when they are equal once the values of the options that only
 * set a run's length, its output or its seed are left out: DCGAN's
 * `--niter 50 --outf a` and `--niter 10` (before 2026-11-29 only the exact argv
 * matched, and a shorter run of a profiled script started from nothing). The
 * options (vary_builtin: epochs, iterations, steps, output folders, seeds, by
 * name in the field's spellings) and those the user names (--vary) are
 * left out with their values, written `--opt V` or `--opt=V`; nothing else is.
 * Invariants: pure (no I/O); a key that is not a JSON array of strings matches
 * only itself, byte for byte.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/control.h"
#include "pitstop/util.h"

/* pit_command_key (control.h): the argv as JSON text, or "" and -1 when it does not fit. */
int pit_command_key(char *const *argv, char *buf, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && argv && argv[i]; i++)
    if (!cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]))) {
      cJSON_Delete(a);
      a = NULL;
    }
  char *text = a ? pit_json_print(a) : NULL;
  cJSON_Delete(a);
  int ok = text && strlen(text) < n;
  snprintf(buf, n, "%s", ok ? text : "");
  free(text);
  return ok ? 0 : -1;
}

/* Options that set only a run's length, where it writes, or its seed: the
 * name folded (leading dashes, '-' and '_' dropped, lower case). Each takes a
 * value in every script seen (argparse type=int or a path). */
static const char *const vary_builtin[] = {
    "epochs",   "nepochs",  "numepochs", "maxepochs", "totalepochs", "trainepochs", "numtrainepochs",
    "niter",    "niters",   "iters",     "maxiter",   "maxiters",    "numiters",    "iterations",
    "steps",    "maxsteps", "numsteps",  "totalsteps", "trainsteps", "numtrainsteps",
    "outf",     "outdir",   "outputdir", "savedir",    "logdir",     "checkpointdir", "seed",
    "manualseed", NULL};

/* name folded into f (of an option token "--Name" or "--Name=V"; "" when tok is not an option) */
static void fold(const char *tok, char *f, size_t n) {
  size_t k = 0;
  if (tok[0] != '-' || tok[1] == '\0' || isdigit((unsigned char)tok[1]) || tok[1] == '.') {
    f[0] = '\0'; /* not an option: a value ("-3", "-.5") or a word */
    return;
  }
  while (*tok == '-')
    tok++;
  for (; *tok && *tok != '=' && k + 1 < n; tok++)
    if (*tok != '-' && *tok != '_')
      f[k++] = (char)tolower((unsigned char)*tok);
  f[k] = '\0';
}

static int varies(const char *folded, const char *const *vary) {
  if (!folded[0])
    return 0;
  for (int i = 0; vary_builtin[i]; i++)
    if (strcmp(folded, vary_builtin[i]) == 0)
      return 1;
  char f[128];
  for (int i = 0; vary && vary[i]; i++) {
    fold(vary[i][0] == '-' ? vary[i] : "", f, sizeof f);
    if (!f[0]) { /* named without its dashes */
      char with[130];
      snprintf(with, sizeof with, "--%s", vary[i]);
      fold(with, f, sizeof f);
    }
    if (strcmp(folded, f) == 0)
      return 1;
  }
  return 0;
}

/* The argv of key with the varying options and their values left out: its
 * strings into out[0..*n) (pointers into arr), and each option left out into
 * opt[0..*nd) as its token and val[] its value ("--opt V", "--opt=V"; "" when
 * it ends the argv). -1: not an array of strings, or longer than cap. */
static int kept(const cJSON *arr, const char *const *vary, const char **out, int *n, const char **opt,
                const char **val, int *nd, int cap) {
  *n = *nd = 0;
  if (!cJSON_IsArray(arr))
    return -1;
  const cJSON *it = arr->child;
  char f[128];
  int first = 1; /* argv[0] (the program) is never an option */
  while (it) {
    if (!cJSON_IsString(it) || *n >= cap || *nd >= cap)
      return -1;
    const char *s = it->valuestring;
    fold(first ? "" : s, f, sizeof f);
    first = 0;
    if (varies(f, vary)) {
      opt[*nd] = s;
      const char *eq = strchr(s, '=');
      if (eq)
        val[*nd] = eq + 1;
      else if (it->next && cJSON_IsString(it->next)) /* "--opt V": its value too */
        val[*nd] = (it = it->next)->valuestring;
      else
        val[*nd] = "";
      (*nd)++;
    } else {
      out[(*n)++] = s;
    }
    it = it->next;
  }
  return 0;
}

/* 1 when option o, of value v, is in (o2, v2)[0..n2) with the same value */
static int has(const char *o, const char *v, const char **o2, const char **v2, int n2) {
  char f[128], g[128];
  fold(o, f, sizeof f);
  for (int j = 0; j < n2; j++) {
    fold(o2[j], g, sizeof g);
    if (strcmp(f, g) == 0 && strcmp(v, v2[j]) == 0)
      return 1;
  }
  return 0;
}

/* an option's name with its dashes ("--niter=5" → "--niter") appended to diff, once */
void pit_command_diff_add(char *list, size_t n, const char *name, size_t len) {
  for (const char *p = list; *p; p += strspn(p, ", ")) { /* a whole entry already there */
    size_t lp = strcspn(p, ",");
    if (lp == len && strncmp(p, name, len) == 0)
      return;
    p += lp;
  }
  size_t used = strlen(list);
  if (used + len + 3 <= n)
    snprintf(list + used, n - used, "%s%.*s", used ? ", " : "", (int)len, name);
}

/* Adds a token's option name (up to any '=') to diff. */
static void say_option(const char *tok, char *diff, size_t ndiff) {
  pit_command_diff_add(diff, ndiff, tok, strcspn(tok, "="));
}

int pit_command_same(const char *a, const char *b, const char *const *vary, char *diff, size_t ndiff) {
  if (diff && ndiff)
    diff[0] = '\0';
  if (strcmp(a, b) == 0)
    return 1;
  cJSON *ja = cJSON_Parse(a), *jb = cJSON_Parse(b);
  enum { CAP = 512 };
  const char **ka = malloc(6 * CAP * sizeof *ka);
  int same = 0;
  if (ja && jb && ka) {
    const char **kb = ka + CAP, **oa = ka + 2 * CAP, **va = ka + 3 * CAP, **ob = ka + 4 * CAP, **vb = ka + 5 * CAP;
    int na, nb, nda, ndb;
    if (kept(ja, vary, ka, &na, oa, va, &nda, CAP) == 0 && kept(jb, vary, kb, &nb, ob, vb, &ndb, CAP) == 0 &&
        na == nb) {
      same = 1;
      for (int i = 0; i < na && same; i++)
        same = strcmp(ka[i], kb[i]) == 0;
      for (int i = 0; same && diff && ndiff && i < nda; i++)
        if (!has(oa[i], va[i], ob, vb, ndb))
          say_option(oa[i], diff, ndiff);
      for (int i = 0; same && diff && ndiff && i < ndb; i++)
        if (!has(ob[i], vb[i], oa, va, nda))
          say_option(ob[i], diff, ndiff);
    }
  }
  free(ka);
  cJSON_Delete(ja);
  cJSON_Delete(jb);
  return same;
}
