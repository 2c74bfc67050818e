// What load generation keeps of a KFP answer: the ids of a list's items and
// its paging, or a run's state. Read with simdjson's On-Demand API, which
// walks the text once without building a document: the client shares the
// machine with the server it measures, so every cycle spent parsing answers
// it does not need is taken from the server (docs/PERFORMANCE.md).
//
// On-Demand checks what it reads: the answer must be a JSON object, the list
// an array of objects, each id a string. Values it skips are only checked for
// structure (brackets and quotes), not parsed, and text after the object is
// not looked at.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kfp/runtime_state.h"
#include "util/result.h"

namespace kfpbench::kfp {

struct IdPage {
  std::vector<std::string> ids;
  int64_t total_size = 0;
  std::string next_page_token;
};

// `body` gets padding appended to its capacity (simdjson reads past the end);
// its text is unchanged. A list key that is absent means an empty page, as KFP
// omits empty fields.
Result<IdPage> ReadIdPage(std::string& body, std::string_view list_key, std::string_view id_key);

// The "state" of a v2beta1 run (RUNTIME_STATE_UNSPECIFIED when absent).
Result<RuntimeState> ReadRunState(std::string& body);

}  // namespace kfpbench::kfp
