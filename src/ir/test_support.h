// What the ir tests share: a two-step pipeline in the shape KFP's compiler
// emits, and the error of parsing it after an edit.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/pipeline_spec.h"
#include "util/test_support.h"

namespace kfpbench::ir::testing {

// A two-step pipeline in the shape the KFP compiler emits.
inline const std::string kTwoStep = kfpbench::testing::TestData("ir/testdata/two_step.yaml");

// A "billion laughs" of some 300 bytes: ten anchored lists, each of nine
// aliases of the one before, 9^10 nodes once expanded (issue 13: it once
// aborted the server with bad_alloc).
inline std::string YamlAliasBomb() {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  std::string previous = "a";
  for (char level = 'b'; level <= 'j'; ++level) {
    std::string name(1, level);
    bomb += name + ": &" + name + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", *" : "*") + previous;
    bomb += "]\n";
    previous = name;
  }
  return bomb;
}

// Applies `edit` to the two-step spec and returns the parse error.
inline std::string ErrorAfter(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = (*YamlToJson(kTwoStep))[0];
  edit(doc);
  auto spec = ParsePipelineSpecJson(doc);
  if (spec.ok()) return "<parsed>";
  return spec.error().message;
}

}  // namespace kfpbench::ir::testing
