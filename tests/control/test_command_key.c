/* test_command_key.c — pit_command_same (command_key.c): two keys of a user's
 * command name the same work per step when they differ only in the values of
 * options that set its length, output or seed (built in) or that the user
 * names (--vary); anything else keeps them apart: a batch size, the script, a
 * short option, an option given in one and not the other, a key that is not a
 * JSON array (byte-equal only). The differing options are named once each. */
#include <string.h>

#include "check.h"
#include "pitstop/control.h"

static int same(const char *a, const char *b, const char *const *vary, char *diff) {
  return pit_command_same(a, b, vary, diff, 128);
}

int main(void) {
  char d[128];
  const char *dc = "[\"python3\",\"main.py\",\"--dataset\",\"fake\",\"--niter\",\"50\",\"--outf\",\"a\",\"--ngf\",\"8\"]";
  CHECK(same(dc, dc, NULL, d) && d[0] == '\0', "a key is its own (diff '%s')", d);
  /* DCGAN's user trial: --niter 10, no --outf, against the profile's --niter 50 --outf a */
  const char *dc10 = "[\"python3\",\"main.py\",\"--dataset\",\"fake\",\"--niter\",\"10\",\"--ngf\",\"8\"]";
  CHECK(same(dc, dc10, NULL, d) && strcmp(d, "--niter, --outf") == 0, "length and output differ: '%s'", d);
  CHECK(same(dc10, dc, NULL, d) && strcmp(d, "--niter, --outf") == 0, "symmetric: '%s'", d);
  /* --opt=V and --opt V are one option; the same value is no difference */
  CHECK(same("[\"p\",\"--epochs=5\",\"--lr\",\"1\"]", "[\"p\",\"--epochs\",\"5\",\"--lr\",\"1\"]", NULL, d) && d[0] == '\0',
        "--epochs=5 is --epochs 5 (diff '%s')", d);
  /* the field's spellings: --max_steps, --num-epochs, --manualSeed; a negative value is the option's */
  CHECK(same("[\"p\",\"--max_steps\",\"100\",\"--num-epochs\",\"2\",\"--manualSeed\",\"-3\",\"x\"]", "[\"p\",\"x\"]", NULL, d) &&
            strcmp(d, "--max_steps, --num-epochs, --manualSeed") == 0,
        "spellings: '%s'", d);
  /* what changes a step's cost keeps the runs apart */
  const char *b64 = "[\"python3\",\"main.py\",\"--batchSize\",\"64\",\"--niter\",\"5\"]";
  const char *b32 = "[\"python3\",\"main.py\",\"--batchSize\",\"32\",\"--niter\",\"5\"]";
  CHECK(!same(b64, b32, NULL, d), "another batch size");
  CHECK(!same("[\"python3\",\"a.py\",\"--epochs\",\"1\"]", "[\"python3\",\"b.py\",\"--epochs\",\"1\"]", NULL, d),
        "another script");
  CHECK(!same("[\"p\",\"-e\",\"1\"]", "[\"p\",\"-e\",\"2\"]", NULL, d), "a short option is not known to set a length");
  CHECK(!same("[\"p\",\"--log-interval\",\"10\"]", "[\"p\",\"--log-interval\",\"20\"]", NULL, d),
        "--log-interval changes what a logged step is");
  CHECK(!same("[\"p\",\"--dry-run\",\"--epochs\",\"1\"]", "[\"p\",\"--epochs\",\"1\"]", NULL, d), "a flag in one only");
  CHECK(!same("[\"p\",\"--stepsize\",\"1\"]", "[\"p\",\"--stepsize\",\"2\"]", NULL, d), "a name that only starts alike");
  /* the program (argv[0]) is never an option */
  CHECK(!same("[\"--epochs\",\"p\"]", "[\"--epochs\",\"q\"]", NULL, d), "argv[0] is the program");
  /* the user names more: --vary --ngf,ndf (with or without dashes) */
  const char *const vary[] = {"--ngf", "ndf", NULL};
  const char *g8 = "[\"p\",\"--ngf\",\"8\",\"--ndf\",\"8\"]", *g16 = "[\"p\",\"--ngf=16\",\"--ndf\",\"4\"]";
  CHECK(!same(g8, g16, NULL, d), "--ngf differs, not named");
  CHECK(same(g8, g16, vary, d) && strcmp(d, "--ngf, --ndf") == 0, "--vary --ngf,ndf: '%s'", d);
  /* an option left last without its value */
  CHECK(same("[\"p\",\"--epochs\"]", "[\"p\",\"--epochs\",\"3\"]", NULL, d), "--epochs without a value, last");
  /* not JSON arrays of strings: byte-equal only */
  CHECK(same("not json", "not json", NULL, d), "equal text");
  CHECK(!same("not json", "not json ", NULL, d), "other text");
  CHECK(!same("[\"p\",1]", "[\"p\",2]", NULL, d), "not strings");
  CHECK(!same("{\"a\":1}", "{\"a\":2}", NULL, d), "an object");
  /* a NULL diff is allowed */
  CHECK(pit_command_same(dc, dc10, NULL, NULL, 0) == 1, "no diff wanted");
  return check_done();
}
