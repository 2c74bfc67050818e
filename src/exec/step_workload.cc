#include "exec/step_workload.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "exec/artifact_io.h"
#include "ir/quantity.h"

namespace kfpbench::exec {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Generous enough for any real machine; guards against --cpu 1e6 starting a
// million threads.
constexpr double kMaxCpu = 1024;
// Short enough that a fractional --cpu looks steady to anything sampling usage
// (cgroup accounting, top), long enough that the sleeps are cheap.
constexpr auto kDutyPeriod = std::chrono::milliseconds(100);

Error FlagError(std::string_view flag, std::string_view why) {
  // No "kfpbench step:" prefix: the caller says where the error came from.
  return Error{fmt::format("{}: {}", flag, why)};
}

bool IsPlainNumber(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// Keeps one core busy for `duty` of every period until `deadline`.
void BurnCpu(SteadyClock::time_point deadline, double duty) {
  const auto busy_for = std::chrono::duration_cast<SteadyClock::duration>(kDutyPeriod * duty);
  volatile uint64_t sink = 0;
  for (auto now = SteadyClock::now(); now < deadline; now = SteadyClock::now()) {
    const auto slice_end = std::min(now + kDutyPeriod, deadline);
    const auto busy_end = std::min(now + busy_for, deadline);
    while (SteadyClock::now() < busy_end) {
      for (int i = 0; i < 1000; ++i) sink = sink * 6364136223846793005ULL + 1;
    }
    if (busy_end < slice_end) std::this_thread::sleep_until(slice_end);
  }
}

// Allocates `bytes` and writes to every page so that they count in RSS (an
// untouched mapping costs nothing). Returns nullptr on failure.
void* HoldMemory(int64_t bytes) {
  void* mem = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  const long page = sysconf(_SC_PAGESIZE);
  volatile char* p = static_cast<volatile char*>(mem);
  for (int64_t off = 0; off < bytes; off += page) p[off] = 1;
  return mem;
}

bool WriteOutput(const std::string& file, const std::string& value) {
  std::filesystem::path path(file);
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    fmt::print(stderr, "kfpbench step: cannot create {}: {}\n", path.parent_path().string(),
               ec.message());
    return false;
  }
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (f == nullptr) {
    fmt::print(stderr, "kfpbench step: cannot write {}: {}\n", file, std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(value.data(), 1, value.size(), f) == value.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) fmt::print(stderr, "kfpbench step: cannot write {}\n", file);
  return ok;
}

}  // namespace

Result<StepOptions> ParseStepArgs(const std::vector<std::string>& args) {
  static constexpr std::string_view kFlags[] = {
      "--duration",       "--cpu",  "--memory",       "--output-param", "--fail-with",
      "--write-artifact", "--size", "--read-artifact"};
  StepOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (!arg.starts_with("--")) {
      return Error{fmt::format(
          "unexpected argument '{}' (flags: --duration, --cpu, --memory, --output-param, "
          "--fail-with, --write-artifact, --size, --read-artifact)",
          arg)};
    }
    std::string_view flag = arg;
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      flag = arg.substr(0, eq);
      value = std::string(arg.substr(eq + 1));
    }
    if (std::find(std::begin(kFlags), std::end(kFlags), flag) == std::end(kFlags)) {
      return FlagError(flag, "unknown flag");
    }
    if (!value) {
      if (i + 1 >= args.size()) return FlagError(flag, "needs a value");
      value = args[++i];
    }

    if (flag == "--duration") {
      // A bare number is seconds: handy when the value comes from a numeric
      // pipeline parameter.
      std::string text = IsPlainNumber(*value) ? *value + "s" : *value;
      auto d = ParseDuration(text);
      if (!d.ok()) return FlagError(flag, d.error().message);
      options.duration = *d;
    } else if (flag == "--cpu") {
      auto cpu = ir::ParseQuantityCpu(*value);
      if (!cpu.ok()) return FlagError(flag, cpu.error().message);
      if (*cpu > kMaxCpu)
        return FlagError(flag, fmt::format("{} is more than {} cores", *value, kMaxCpu));
      options.cpu = *cpu;
    } else if (flag == "--memory") {
      auto bytes = ir::ParseQuantityMemory(*value);
      if (!bytes.ok()) return FlagError(flag, bytes.error().message);
      options.memory_bytes = *bytes;
    } else if (flag == "--output-param") {
      // Split at the first '=': values (JSON, text) are likelier to hold one
      // than output file paths.
      size_t eq = value->find('=');
      if (eq == std::string::npos || eq == 0) {
        return FlagError(flag, fmt::format("expected FILE=VALUE, got '{}'", *value));
      }
      options.output_params.emplace_back(value->substr(0, eq), value->substr(eq + 1));
    } else if (flag == "--fail-with") {
      int code = 0;
      const char* end = value->data() + value->size();
      auto [ptr, ec] = std::from_chars(value->data(), end, code);
      if (value->empty() || ec != std::errc() || ptr != end || code < 0 || code > 255) {
        return FlagError(flag, fmt::format("expected an exit code 0..255, got '{}'", *value));
      }
      options.exit_code = code;
    } else if (flag == "--write-artifact") {
      if (value->empty()) return FlagError(flag, "needs a path");
      options.write_artifact = *value;
    } else if (flag == "--size") {
      auto bytes = ir::ParseQuantityMemory(*value);
      if (!bytes.ok()) return FlagError(flag, bytes.error().message);
      options.artifact_size = *bytes;
    } else if (flag == "--read-artifact") {
      if (value->empty()) return FlagError(flag, "needs a path");
      options.read_artifacts.push_back(*value);
    }
  }
  if (!options.write_artifact.empty() && options.artifact_size < 0) {
    return FlagError("--write-artifact", "needs --size");
  }
  if (options.write_artifact.empty() && options.artifact_size >= 0) {
    return FlagError("--size", "only goes with --write-artifact");
  }
  return options;
}

namespace {

// Says what an artifact transfer moved and how fast; false (said on stderr)
// when it failed.
bool Said(const char* verb, const Result<ArtifactTransfer>& transfer) {
  if (!transfer.ok()) {
    fmt::print(stderr, "kfpbench step: {}\n", transfer.error().message);
    return false;
  }
  fmt::print("kfpbench step: {} {} in {:.3f}s ({:.1f} MiB/s)\n", verb,
             ir::FormatQuantityBytes(transfer->bytes), ToSeconds(transfer->elapsed),
             transfer->BytesPerSecond() / (1 << 20));
  return true;
}

}  // namespace

int RunStep(const StepOptions& options) {
  const auto start = SteadyClock::now();
  const auto deadline = start + options.duration;
  fmt::print("kfpbench step: duration={} cpu={} memory={} outputs={}\n",
             FormatDuration(options.duration), options.cpu,
             ir::FormatQuantityBytes(options.memory_bytes), options.output_params.size());
  std::fflush(stdout);

  // Artifact I/O first: its time is part of the step, as in a real one.
  if (!options.write_artifact.empty() &&
      !Said("wrote", WriteArtifact(options.write_artifact, options.artifact_size))) {
    return 1;
  }
  for (const auto& path : options.read_artifacts) {
    if (!Said("read", ReadArtifact(path))) return 1;
  }
  std::fflush(stdout);

  void* memory = nullptr;
  if (options.memory_bytes > 0) {
    memory = HoldMemory(options.memory_bytes);
    if (memory == nullptr) {
      fmt::print(stderr, "kfpbench step: cannot allocate {}: {}\n",
                 ir::FormatQuantityBytes(options.memory_bytes), std::strerror(errno));
      return 1;
    }
  }

  std::vector<std::thread> burners;
  if (options.cpu > 0) {
    const int threads = static_cast<int>(std::ceil(options.cpu));
    const double duty = options.cpu / threads;
    for (int i = 0; i < threads; ++i) burners.emplace_back(BurnCpu, deadline, duty);
  }
  std::this_thread::sleep_until(deadline);
  for (auto& t : burners) t.join();
  if (memory != nullptr) munmap(memory, static_cast<size_t>(options.memory_bytes));

  bool outputs_ok = true;
  for (const auto& [file, value] : options.output_params) {
    outputs_ok = WriteOutput(file, value) && outputs_ok;
  }
  const double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
  int code = options.exit_code != 0 ? options.exit_code : (outputs_ok ? 0 : 1);
  fmt::print("kfpbench step: done after {:.3f}s, exit code {}\n", elapsed, code);
  std::fflush(stdout);
  return code;
}

}  // namespace kfpbench::exec
