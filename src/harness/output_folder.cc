#include "harness/output_folder.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/time.h"

namespace kfpbench::harness {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrevious = "previous";

// What a benchmark writes into its folder (harness/benchmark.cc, report/).
bool IsBenchmarkOutput(const fs::path& name) {
  std::string n = name.string();
  return n == "results.json" || n == "report.html" ||
         (n.rfind("rep-", 0) == 0 && n.size() > 4 &&
          n.find_first_not_of("0123456789", 4) == std::string::npos);
}

Error FolderError(const std::string& what, const fs::path& path, const std::error_code& ec) {
  return Error{fmt::format("results folder: cannot {} {}: {}", what, path.string(), ec.message())};
}

}  // namespace

Status ClaimOutputFolder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return FolderError("create", dir, ec);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return FolderError("write into", dir, std::make_error_code(static_cast<std::errc>(errno)));
  }
  std::vector<fs::path> earlier;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsBenchmarkOutput(it->path().filename())) earlier.push_back(it->path().filename());
  }
  if (ec) return FolderError("list", dir, ec);
  if (earlier.empty()) return Ok();
  fs::path previous = dir / kPrevious;
  fs::remove_all(previous, ec);
  if (ec) return FolderError("remove", previous, ec);
  fs::create_directory(previous, ec);
  if (ec) return FolderError("create", previous, ec);
  for (const auto& name : earlier) {
    fs::rename(dir / name, previous / name, ec);
    if (ec) return FolderError("move aside", dir / name, ec);
  }
  spdlog::info("{} held an earlier benchmark's results; they are now in {}", dir.string(),
               previous.string());
  return Ok();
}

Result<fs::path> OutputFolder(const std::string& out, const std::string& prefix) {
  fs::path dir = out;
  if (dir.empty()) {
    auto now = std::chrono::floor<std::chrono::seconds>(WallClock::now());
    dir = prefix + "/" + fmt::format("{:%Y%m%d-%H%M%S}", now);
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("--out: cannot create {}: {}", dir.string(), ec.message())};
  return dir;
}

}  // namespace kfpbench::harness
