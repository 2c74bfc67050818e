#include "exec/artifact_store.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ir/quantity.h"

namespace kfpbench::exec {
namespace {

constexpr int64_t kMinChunk = 4 << 10;
constexpr int64_t kMaxChunk = 1 << 20;
// Zeros to write from: what a chunk holds does not matter, its size does.
const std::array<char, kMaxChunk>& Zeros() {
  static const std::array<char, kMaxChunk> zeros{};
  return zeros;
}

}  // namespace

ArtifactStore::ArtifactStore(engine::EventLoop& loop, Options options)
    : loop_(loop), options_(std::move(options)) {
  // About 200 chunks a second at most: ~5 ms of link time each.
  chunk_ = options_.bandwidth > 0
               ? std::clamp(static_cast<int64_t>(options_.bandwidth / 200), kMinChunk, kMaxChunk)
               : kMaxChunk;
}

ArtifactStore::~ArtifactStore() {
  if (timer_set_) loop_.Cancel(timer_);
  for (auto& t : uploads_) {
    if (t.file != nullptr) std::fclose(t.file);
  }
}

ArtifactStore::UploadId ArtifactStore::Upload(std::string key, int64_t bytes,
                                              std::function<void(Status)> done) {
  Transfer t{next_id_++, options_.root / key, nullptr, std::max<int64_t>(bytes, 0),
             std::move(done)};
  const UploadId id = t.id;
  if (options_.bandwidth <= 0) {
    // No limit: as fast as the disk takes it, still written and still
    // answered on the loop (never inside the caller).
    Status s = Write(t, t.remaining);
    loop_.Post([this, t = std::move(t), s = std::move(s)]() mutable { Finish(std::move(t), s); });
    return id;
  }
  const bool idle = uploads_.empty();
  uploads_.push_back(std::move(t));
  if (idle) {
    busy_since_ = loop_.Now();
    chunk_ends_ = busy_since_;
    StartChunk();
  }
  return id;
}

void ArtifactStore::Cancel(UploadId id) {
  auto it = std::find_if(uploads_.begin(), uploads_.end(),
                         [id](const Transfer& t) { return t.id == id; });
  if (it == uploads_.end()) return;
  if (it->file != nullptr) std::fclose(it->file);
  std::error_code ec;
  std::filesystem::remove(it->path, ec);
  // The chunk on the link, if it was this upload's, is simply not written:
  // OnChunkSent sees another upload at the front and starts its chunk.
  uploads_.erase(it);
  if (uploads_.empty() && timer_set_) {
    loop_.Cancel(timer_);
    timer_set_ = false;
    stats_.busy += loop_.Now() - busy_since_;
  }
}

void ArtifactStore::StartChunk() {
  Transfer& front = uploads_.front();
  on_link_ = front.id;
  on_link_bytes_ = std::min(chunk_, front.remaining);
  chunk_ends_ += FromSeconds(static_cast<double>(on_link_bytes_) / options_.bandwidth);
  timer_ =
      loop_.After(std::max(chunk_ends_ - loop_.Now(), Duration::zero()), [this] { OnChunkSent(); });
  timer_set_ = true;
}

void ArtifactStore::OnChunkSent() {
  timer_set_ = false;
  if (!uploads_.empty() && uploads_.front().id == on_link_) {
    Transfer t = std::move(uploads_.front());
    uploads_.pop_front();
    Status s = Write(t, on_link_bytes_);
    if (!s.ok() || t.remaining == 0) {
      Finish(std::move(t), std::move(s));
    } else {
      uploads_.push_back(std::move(t));
    }
  }
  if (uploads_.empty()) {
    stats_.busy += loop_.Now() - busy_since_;
    return;
  }
  StartChunk();
}

Status ArtifactStore::Write(Transfer& t, int64_t n) {
  if (t.file == nullptr) {
    std::error_code ec;
    std::filesystem::create_directories(t.path.parent_path(), ec);
    t.file = std::fopen(t.path.c_str(), "wb");
    if (t.file == nullptr) {
      return Error{fmt::format("cannot create {}: {}", t.path.string(), std::strerror(errno))};
    }
  }
  while (n > 0) {
    const auto part = static_cast<size_t>(std::min(n, kMaxChunk));
    if (std::fwrite(Zeros().data(), 1, part, t.file) != part) {
      return Error{fmt::format("cannot write {}: {}", t.path.string(), std::strerror(errno))};
    }
    n -= static_cast<int64_t>(part);
    t.remaining -= static_cast<int64_t>(part);
    stats_.bytes += static_cast<int64_t>(part);
  }
  return Ok();
}

void ArtifactStore::Finish(Transfer t, Status status) {
  if (t.file != nullptr && std::fclose(t.file) != 0 && status.ok()) {
    status = Error{fmt::format("cannot write {}: {}", t.path.string(), std::strerror(errno))};
  }
  t.file = nullptr;
  if (!status.ok()) {
    std::error_code ec;
    std::filesystem::remove(t.path, ec);
  } else {
    ++stats_.uploads;
  }
  if (t.done) t.done(std::move(status));
}

ArtifactStore::Stats ArtifactStore::stats() const {
  Stats s = stats_;
  if (!uploads_.empty()) s.busy += loop_.Now() - busy_since_;
  return s;
}

Result<double> ParseBandwidth(std::string_view text) {
  std::string_view quantity = text;
  if (quantity.size() > 2 && quantity.substr(quantity.size() - 2) == "/s") {
    quantity.remove_suffix(2);
  }
  auto bytes = ir::ParseQuantityMemory(quantity);
  if (!bytes.ok() || *bytes <= 0) {
    return Error{fmt::format("'{}': expected bytes per second, such as 200Mi or 200Mi/s", text)};
  }
  return static_cast<double>(*bytes);
}

Result<std::pair<std::string, int64_t>> ParseLabeledBytes(std::string_view spec) {
  const size_t eq = spec.rfind('=');
  std::string_view label = eq == std::string_view::npos ? "" : spec.substr(0, eq);
  auto bytes = ir::ParseQuantityMemory(eq == std::string_view::npos ? spec : spec.substr(eq + 1));
  if (!bytes.ok() || (eq != std::string_view::npos && label.empty())) {
    return Error{fmt::format("'{}': expected [LABEL=]SIZE, such as exec-train=2Gi or 10Mi", spec)};
  }
  return std::pair{std::string(label), *bytes};
}

}  // namespace kfpbench::exec
