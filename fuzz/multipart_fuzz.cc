// multipart/form-data uploads: the first line is the Content-Type header, the
// rest the body.
#include "fuzz/fuzz_support.h"
#include "http/multipart.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [content_type, body] = kfpbench::fuzz::TwoParts(data, size);
  auto parts = kfpbench::http::ParseMultipart(content_type, body);
  (void)parts;
  return 0;
}
