// YAML read straight from yaml-cpp's parse events into JSON, bounded in
// depth and in nodes once aliases are expanded (no node tree is built).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::ir {

// Converts every YAML document in `text` to JSON, keeping scalar types: plain
// scalars become null/bool/int/float when they read as such, quoted and block
// scalars stay strings.
Result<std::vector<nlohmann::json>> YamlToJson(std::string_view text);

// A configuration document as YamlToTextJson reads it.
using TextTree = nlohmann::ordered_json;

// The one YAML document of a configuration file, for JsonReader's config
// dialect (util/json_reader.h): every scalar keeps its text, which the
// reader's validators read as they must ("0.010" stays "0.010", "500m" is a
// quantity), and a mapping's keys stay in the order written (a mix's first
// entry, an env value naming an earlier variable). Empty values are null. The
// values of the top mapping's `typed_keys` are typed as YamlToJson types
// them (a workload's parameters, passed to runs as written). Blank documents
// are skipped; a second document is refused.
Result<TextTree> YamlToTextJson(std::string_view text,
                                std::span<const std::string_view> typed_keys = {});

}  // namespace kfpbench::ir
