/* isa.c — which instruction set this process runs: pitstop's own vector code (the
 * max pooling of fast_pool.c) and oneDNN's kernels, and the fast backend's record of
 * oneDNN reference kernels it was given.
 *
 * pitstop's choice (pit_nn_isa) is made once, on first use, and is the lowest of
 *   - what the CPU has (__builtin_cpu_supports: avx512f → AVX-512; avx2 and fma → AVX2;
 *     else plain C), so no instruction the CPU lacks ever runs;
 *   - oneDNN's effective ISA (dnnl_get_effective_cpu_isa), which ONEDNN_MAX_CPU_ISA
 *     caps: a run forced to AVX2 for oneDNN runs pitstop's AVX2 code too;
 *   - PIT_ISA (plain|avx2|avx512), for tests that run one version on purpose; another
 *     value is ignored (the init record says what ran).
 * The build itself targets the x86-64 baseline (PIT_NATIVE off): the AVX2 and AVX-512
 * versions are compiled per function with target attributes (fast_pool.c).
 *
 * Reference kernels: every primitive descriptor the fast backend keeps passes through
 * pit_fast_check_impl; a "ref" implementation (oneDNN's scalar fallback, 100-1000x slower)
 * is an error when PIT_FAST_STRICT=1 (the tests set it) and otherwise noted once per
 * process as the one-line warning pit_nn_fast_warning returns (train puts it into the
 * init record). The note is process state written while nets are built, which happens
 * on one thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "nn/fast_impl.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static enum pit_isa chosen;
static dnnl_cpu_isa_t dnnl_isa;

int pit_fast_isa_supported(enum pit_isa isa) {
  switch (isa) {
  case PIT_ISA_AVX512:
    return __builtin_cpu_supports("avx512f");
  case PIT_ISA_AVX2:
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  default:
    return 1;
  }
}

static void choose(void) {
  __builtin_cpu_init();
  enum pit_isa best = pit_fast_isa_supported(PIT_ISA_AVX512) ? PIT_ISA_AVX512
                      : pit_fast_isa_supported(PIT_ISA_AVX2) ? PIT_ISA_AVX2
                                                               : PIT_ISA_PLAIN;
  dnnl_isa = dnnl_get_effective_cpu_isa();
  /* avx512_mic (0xf) and avx512_core (0x27) carry bits 0x8 / 0x20; avx2 is 0x7 */
  enum pit_isa dn = (dnnl_isa & 0x28) ? PIT_ISA_AVX512
                    : (dnnl_isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2 ? PIT_ISA_AVX2
                                                                        : PIT_ISA_PLAIN;
  if (dn < best)
    best = dn;
  const char *force = getenv("PIT_ISA");
  if (force) {
    for (int i = PIT_ISA_PLAIN; i <= PIT_ISA_AVX512; i++)
      if (strcasecmp(force, pit_nn_isa_name((enum pit_isa)i)) == 0 && i < (int)best)
        best = (enum pit_isa)i;
  }
  chosen = best;
}

enum pit_isa pit_nn_isa(void) {
  pthread_once(&once, choose);
  return chosen;
}

const char *pit_nn_isa_name(enum pit_isa isa) {
  switch (isa) {
  case PIT_ISA_AVX512:
    return "avx512";
  case PIT_ISA_AVX2:
    return "avx2";
  default:
    return "plain";
  }
}

const char *pit_nn_dnnl_isa(void) {
  pthread_once(&once, choose);
  static const struct {
    dnnl_cpu_isa_t isa;
    const char *name;
  } t[] = {{dnnl_cpu_isa_sse41, "sse41"},
           {dnnl_cpu_isa_avx, "avx"},
           {dnnl_cpu_isa_avx2, "avx2"},
           {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
           {dnnl_cpu_isa_avx512_mic, "avx512_mic"},
           {dnnl_cpu_isa_avx512_mic_4ops, "avx512_mic_4ops"},
           {dnnl_cpu_isa_avx512_core, "avx512_core"},
           {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
           {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
           {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (t[i].isa == dnnl_isa)
      return t[i].name;
  return "unknown";
}

/* ---- reference kernels ---- */

static char warning[256];
static int nref;

const char *pit_nn_fast_warning(void) { return warning; }

int pit_fast_check_impl(const_dnnl_primitive_desc_t pd, const char *where, struct pit_err *e) {
  const char *name = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success || !name ||
      strncmp(name, "ref", 3) != 0)
    return 0;
  dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
  dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
  const char *kn = dnnl_prim_kind2str(kind);
  const char *strict = getenv("PIT_FAST_STRICT");
  if (strict && strcmp(strict, "1") == 0)
    return pit_err_set(e, PIT_ELIB,
                       "%s: oneDNN gave its reference kernel (%s %s) at ISA %s; the fast backend "
                       "has no fast kernel for this layout here (PIT_FAST_STRICT=1)",
                       where, kn, name, pit_nn_dnnl_isa());
  if (nref++ == 0)
    snprintf(warning, sizeof warning, "oneDNN reference kernel (slow): %s %s %s at ISA %s", where, kn,
             name, pit_nn_dnnl_isa());
  else {
    char *more = strstr(warning, " (+");
    size_t at = more ? (size_t)(more - warning) : strlen(warning);
    snprintf(warning + at, sizeof warning - at, " (+%d more)", nref - 1);
  }
  return 0;
}
