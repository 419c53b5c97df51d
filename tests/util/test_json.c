/* test_json.c — pit_json_print writes integral numbers below 2^53 as integers
 * (cJSON alone writes 1234567890123450 as 1.23456789012345e+15, which Python
 * reads as a float: a seed read back so names another sampler), every other
 * value as cJSON does, and leaves the tree it prints unchanged. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/util.h"

int main(void) {
  const char *in = "{\"seed\":1234567890123450,\"neg\":-4503599627370497,\"top\":9007199254740991,"
                   "\"small\":3,\"x\":0.1,\"huge\":1e300,\"half\":2147483648.5,\"a\":[6000000000,{\"b\":-7}],"
                   "\"s\":\"1e15\"}";
  cJSON *j = cJSON_Parse(in);
  CHECK(j != NULL, "parsed");
  char *plain = cJSON_PrintUnformatted(j);
  CHECK(plain && strstr(plain, "1.23456789012345e+15"), "cJSON alone writes the exponent form: %s", plain);
  char *txt = pit_json_print(j);
  CHECK(txt != NULL, "printed");
  const char *want = "{\"seed\":1234567890123450,\"neg\":-4503599627370497,\"top\":9007199254740991,"
                     "\"small\":3,\"x\":0.1,\"huge\":1e+300,\"half\":2147483648.5,\"a\":[6000000000,{\"b\":-7}],"
                     "\"s\":\"1e15\"}";
  CHECK(strcmp(txt, want) == 0, "integers exact:\n got %s\nwant %s", txt, want);
  char *again = cJSON_PrintUnformatted(j);
  CHECK(again && strcmp(again, plain) == 0, "the tree printed is unchanged: %s", again);
  cJSON *back = cJSON_Parse(txt);
  CHECK(back && cJSON_GetObjectItem(back, "seed")->valuedouble == 1234567890123450.0, "reads back the same");
  CHECK(pit_json_print(NULL) == NULL, "NULL in, NULL out");
  cJSON_Delete(back);
  free(again);
  free(txt);
  free(plain);
  cJSON_Delete(j);
  return check_done();
}
