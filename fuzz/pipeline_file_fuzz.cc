// Pipeline packages as uploads give them: the first line is the file's
// name (.yaml, .json, .tar.gz, .zip, ...), the rest its bytes (gzip, tar and
// zip headers included).
#include "fuzz/fuzz_support.h"
#include "server/pipeline_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [name, bytes] = kfpbench::fuzz::TwoParts(data, size);
  auto text = kfpbench::server::ReadPipelineFile(name, bytes);
  (void)text;
  return 0;
}
