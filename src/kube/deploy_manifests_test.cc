// deploy/kubernetes/*.yaml against the strict Kubernetes 1.33 schemas.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kube/json_schema.h"
#include "kube/manifest.h"
#include "kube/process.h"
#include "util/files.h"

namespace kfpbench::kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(DeployManifests, ValidateAgainstStrictSchemas) {
  fs::path schemas = KFPBENCH_SOURCE_DIR "/../shared/kube/jsonschema/v1.33-standalone-strict";
  if (!fs::exists(schemas)) GTEST_SKIP() << schemas << " absent";
  const std::map<std::string, std::string> by_kind = {{"Namespace", "namespace-v1.json"},
                                                      {"Deployment", "deployment-apps-v1.json"},
                                                      {"Service", "service-v1.json"},
                                                      {"Job", "job-batch-v1.json"}};
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(KFPBENCH_SOURCE_DIR "/deploy/kubernetes")) {
    std::string text = ReadSmallFile(entry.path());
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find("\n---\n", pos);
      std::string doc_text =
          text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      pos = end == std::string::npos ? text.size() + 1 : end + 5;
      auto doc = YamlToJson(doc_text);
      ASSERT_TRUE(doc.ok()) << entry.path() << ": " << doc.error().message;
      std::string kind = doc->value("kind", "");
      ASSERT_TRUE(by_kind.count(kind)) << entry.path() << ": no schema for kind '" << kind << "'";
      std::ifstream in(schemas / by_kind.at(kind));
      auto errors = ValidateJson(json::parse(in), *doc);
      EXPECT_TRUE(errors.empty()) << entry.path() << " " << kind << ": " << json(errors).dump(1);
      ++checked;
    }
  }
  EXPECT_GE(checked, 4);
}

}  // namespace
}  // namespace kfpbench::kube
