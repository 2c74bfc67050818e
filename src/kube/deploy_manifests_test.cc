// deploy/kubernetes/*.yaml against the strict Kubernetes 1.33 schemas.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ir/yaml_json.h"
#include "kube/json_schema.h"
#include "kube/loadgen.h"
#include "kube/manifest.h"
#include "kube/process.h"
#include "util/files.h"

namespace kfpbench::kube {
namespace {

using ::testing::HasSubstr;

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
    auto docs = ir::YamlToJson(ReadSmallFile(entry.path()));
    ASSERT_TRUE(docs.ok()) << entry.path() << ": " << docs.error().message;
    for (const json& doc : *docs) {
      if (doc.is_null()) continue;  // a blank document between markers
      std::string kind = doc.value("kind", "");
      ASSERT_TRUE(by_kind.count(kind)) << entry.path() << ": no schema for kind '" << kind << "'";
      std::ifstream in(schemas / by_kind.at(kind));
      auto errors = ValidateJson(json::parse(in), doc);
      EXPECT_TRUE(errors.empty()) << entry.path() << " " << kind << ": " << json(errors).dump(1);
      ++checked;
    }
  }
  EXPECT_GE(checked, 4);
}

// The runtime image installs a package for every shared library the binary
// loads beyond the base image (libssl3 and libsimdjson14 were once missing:
// the container would not have started). Skipped without dpkg or ldd.
TEST(DeployManifests, DockerfileCarriesTheBinarysLibraries) {
  fs::path binary = fs::path(KFPBENCH_BINARY_DIR) / "kfpbench";
  if (!fs::exists(binary)) GTEST_SKIP() << binary << " not built";
  auto ldd = RunCapture({"ldd", binary.string()}, std::chrono::seconds(30));
  if (!ldd.ok() || ldd->exit_code != 0) GTEST_SKIP() << "no ldd";
  std::string dockerfile = ReadSmallFile(KFPBENCH_SOURCE_DIR "/Dockerfile");
  // Essential in debian:12 itself.
  const std::set<std::string> base = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"};
  std::istringstream lines(ldd->out);
  int checked = 0;
  for (std::string line; std::getline(lines, line);) {
    auto arrow = line.find("=> /");
    if (arrow == std::string::npos) continue;
    std::string path = line.substr(arrow + 3, line.find(' ', arrow + 3) - arrow - 3);
    // With merged /usr, dpkg knows a file under one of /lib and /usr/lib.
    auto owner = RunCapture({"dpkg", "-S", path}, std::chrono::seconds(30));
    if ((!owner.ok() || owner->exit_code != 0) && path.rfind("/lib/", 0) == 0) {
      owner = RunCapture({"dpkg", "-S", "/usr" + path}, std::chrono::seconds(30));
    }
    if (!owner.ok() || owner->exit_code != 0) continue;  // not from a package
    std::string package = owner->out.substr(0, owner->out.find_first_of(":"));
    ++checked;
    if (base.count(package)) continue;
    EXPECT_THAT(dockerfile, HasSubstr(" " + package + " "))
        << path << " comes from " << package << ", which the Dockerfile's runtime stage lacks";
  }
  if (checked == 0) GTEST_SKIP() << "no dpkg";
}

// The load pods declare runAsNonRoot with kLoadgenUid: the image must run as
// that user, or the kubelet refuses to start a container whose image says root.
TEST(DeployManifests, DockerfileRunsAsTheLoadPodsUser) {
  std::string dockerfile = ReadSmallFile(KFPBENCH_SOURCE_DIR "/Dockerfile");
  std::string uid = std::to_string(kLoadgenUid);
  EXPECT_THAT(dockerfile, HasSubstr("\nUSER " + uid + ":" + uid + "\n"));
  EXPECT_THAT(dockerfile, HasSubstr("useradd --uid " + uid));
}

}  // namespace
}  // namespace kfpbench::kube
