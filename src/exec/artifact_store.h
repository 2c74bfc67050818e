// The object store tasks upload their outputs to when their code ends, as
// KFP's launcher uploads to MinIO (or S3, GCS) before its pod exits, with the
// link to it a real limit: `bandwidth` bytes per second in all, shared
// equally by the uploads in progress. The link serves one chunk at a time,
// round-robin over the uploads (processor sharing in the limit, as concurrent
// TCP streams share a link), and each chunk is written for real to the
// upload's file under `root` when its time on the link is over.
//
// It is the embedded backend's deliberately limited shared resource: the
// cluster simulator models the same store (sim::SharedServer, processor
// sharing) and `kfpbench calibrate` fits its bandwidth from runs measured at
// two loads (docs/CAPACITY.md). Loop thread only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>

#include "engine/event_loop.h"
#include "util/result.h"

namespace kfpbench::exec {

class ArtifactStore {
 public:
  using UploadId = uint64_t;

  struct Options {
    std::filesystem::path root;
    double bandwidth = 0;  // bytes per second for all uploads together; 0: no limit
  };

  struct Stats {
    uint64_t uploads = 0;  // finished
    int64_t bytes = 0;     // written
    Duration busy{0};      // time with at least one upload on the link
  };

  ArtifactStore(engine::EventLoop& loop, Options options);
  ~ArtifactStore();
  ArtifactStore(const ArtifactStore&) = delete;
  ArtifactStore& operator=(const ArtifactStore&) = delete;

  // Writes `bytes` bytes to `key` (a path under the root), then calls `done`
  // on the loop with Ok or the write's error (a full disk, say).
  UploadId Upload(std::string key, int64_t bytes, std::function<void(Status)> done);
  // Drops an upload in progress (its file too); its `done` is never called.
  void Cancel(UploadId id);

  size_t in_progress() const { return uploads_.size(); }
  Stats stats() const;
  double bandwidth() const { return options_.bandwidth; }
  // The bytes a chunk holds: the link's granularity. Small enough that a
  // chunk takes at most ~5 ms, so uploads share the link finely.
  int64_t chunk_bytes() const { return chunk_; }

 private:
  struct Transfer {
    UploadId id;
    std::filesystem::path path;
    std::FILE* file = nullptr;
    int64_t remaining;
    std::function<void(Status)> done;
  };

  // The chunk on the link is over: write it, rotate, start the next.
  void OnChunkSent();
  void StartChunk();
  // Writes `n` bytes to `t`'s file; the error says which file and why.
  Status Write(Transfer& t, int64_t n);
  void Finish(Transfer t, Status status);

  engine::EventLoop& loop_;
  Options options_;
  int64_t chunk_;
  std::deque<Transfer> uploads_;  // round-robin; the front is on the link
  UploadId next_id_ = 1;
  UploadId on_link_ = 0;  // the upload the current chunk belongs to
  int64_t on_link_bytes_ = 0;
  engine::TimerId timer_ = 0;
  bool timer_set_ = false;
  WallTime chunk_ends_{};  // ideal time, so lateness on the loop never slows the link
  WallTime busy_since_{};
  Stats stats_;
};

// "200Mi", "200Mi/s", "1.5e6": bytes per second; an Error says what it expected.
Result<double> ParseBandwidth(std::string_view text);

// "exec-train=2Gi" -> {"exec-train", 2Gi}; "10Mi" -> {"", 10Mi} (no label).
Result<std::pair<std::string, int64_t>> ParseLabeledBytes(std::string_view spec);

}  // namespace kfpbench::exec
