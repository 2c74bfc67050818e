#include "capture/capture.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/derive.h"
#include "capture/selection.h"
#include "capture/window.h"
#include "util/call_budget.h"
#include "util/files.h"
#include "util/json_reader.h"

namespace kfpbench::capture {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kFormat = 1;

Error BadInput(std::string message) { return Error{std::move(message), kHttpBadRequest}; }

WallTime FloorToSecond(WallTime t) { return std::chrono::floor<std::chrono::seconds>(t); }

// Where an interrupted capture stands: runs.jsonl is whole up to `runs_bytes`
// (anything after it is cut off on resume), and the runs created in the
// second of the last one are named, since KFP filters created_at in seconds.
struct Checkpoint {
  WallTime since{}, until{};
  int64_t runs_bytes = 0;
  Progress progress;
  std::set<std::string> ids_in_last_second;
  Selection selection;

  json ToJson() const {
    json j = {{"format", kFormat},
              {"since", FormatRfc3339(since)},
              {"until", FormatRfc3339(until)},
              {"runs_bytes", runs_bytes},
              {"runs", progress.runs},
              {"tasks", progress.tasks},
              {"censored", progress.censored},
              {"versions", progress.versions},
              {"missing_versions", progress.missing_versions},
              {"calls", progress.calls},
              {"ids_in_last_second", ids_in_last_second},
              {"selection", selection.ToJson()}};
    if (progress.last_created_at != WallTime{}) {
      j["last_created_at"] = FormatRfc3339(progress.last_created_at);
    }
    return j;
  }

  static Result<Checkpoint> FromJson(const json& j) {
    try {
      Checkpoint c;
      if (j.at("format").get<int>() != kFormat) return Error{"a checkpoint of another format"};
      auto since = ParseRfc3339(j.at("since").get<std::string>());
      auto until = ParseRfc3339(j.at("until").get<std::string>());
      if (!since.ok() || !until.ok()) return Error{"its window does not read"};
      c.since = *since;
      c.until = *until;
      c.runs_bytes = j.at("runs_bytes").get<int64_t>();
      c.progress.runs = j.at("runs").get<int64_t>();
      c.progress.tasks = j.at("tasks").get<int64_t>();
      c.progress.censored = j.at("censored").get<int64_t>();
      c.progress.versions = j.at("versions").get<int64_t>();
      c.progress.missing_versions = j.at("missing_versions").get<int64_t>();
      c.progress.calls = j.at("calls").get<int64_t>();
      if (j.contains("last_created_at")) {
        auto last = ParseRfc3339(j["last_created_at"].get<std::string>());
        if (!last.ok()) return Error{"its last_created_at does not read"};
        c.progress.last_created_at = *last;
      }
      for (const auto& id : j.at("ids_in_last_second"))
        c.ids_in_last_second.insert(id.get<std::string>());
      // A checkpoint edited by hand must still describe a capture: a window
      // forwards, counts that are counts, the last run inside the window.
      if (!(c.since < c.until)) return Error{"its since is not before its until"};
      for (int64_t n : {c.runs_bytes, c.progress.runs, c.progress.tasks, c.progress.censored,
                        c.progress.versions, c.progress.missing_versions, c.progress.calls}) {
        if (n < 0) return Error{"a count is negative"};
      }
      if (c.progress.last_created_at != WallTime{} &&
          (c.progress.last_created_at < FloorToSecond(c.since) ||
           c.progress.last_created_at > c.until)) {
        return Error{"its last_created_at is outside its window"};
      }
      if (j.contains("selection")) {  // older checkpoints selected everything
        auto selection = Selection::FromJson(j["selection"]);
        if (!selection.ok()) return selection.error();
        c.selection = std::move(*selection);
      }
      return c;
    } catch (const json::exception& e) {
      return Error{e.what()};
    }
  }
};

// runs.jsonl, appended to and made durable before each checkpoint.
class RunsFile {
 public:
  static Result<std::unique_ptr<RunsFile>> Open(const fs::path& path, int64_t keep_bytes) {
    std::error_code ec;
    if (!fs::exists(path)) {
      std::FILE* created = std::fopen(path.c_str(), "we");
      if (created == nullptr) return Error{fmt::format("cannot create {}", path.string())};
      std::fclose(created);
    }
    // What an interrupted capture wrote after its last checkpoint goes: it
    // is read again, so that every run is in the file exactly once.
    fs::resize_file(path, static_cast<uintmax_t>(keep_bytes), ec);
    if (ec) return Error{fmt::format("cannot truncate {}: {}", path.string(), ec.message())};
    std::FILE* f = std::fopen(path.c_str(), "ae");
    if (f == nullptr) return Error{fmt::format("cannot open {}", path.string())};
    return std::unique_ptr<RunsFile>(new RunsFile(path, f, keep_bytes));
  }
  ~RunsFile() { std::fclose(f_); }

  Status Append(const std::string& line) {
    if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() ||
        std::fputc('\n', f_) == EOF) {
      return Error{fmt::format("cannot write {}", path_.string())};
    }
    bytes_ += static_cast<int64_t>(line.size()) + 1;
    return Ok();
  }
  // Everything appended is on disk.
  Status Sync() {
    if (std::fflush(f_) != 0 || ::fsync(fileno(f_)) != 0) {
      return Error{fmt::format("cannot write {}", path_.string())};
    }
    return Ok();
  }
  int64_t bytes() const { return bytes_; }

 private:
  RunsFile(fs::path path, std::FILE* f, int64_t bytes)
      : path_(std::move(path)), f_(f), bytes_(bytes) {}
  fs::path path_;
  std::FILE* f_;
  int64_t bytes_;
};

class Capturer {
 public:
  Capturer(kfp::Client& client, const CaptureOptions& options,
           const std::function<void(const Progress&)>& on_progress)
      : client_(client), options_(options), on_progress_(on_progress), budget_(options.qps) {}

  Result<CaptureSummary> Run() {
    const auto started = std::chrono::steady_clock::now();
    const fs::path out = options_.out;
    if (fs::exists(out / kManifestFile)) {
      return BadInput(fmt::format("{} already holds a complete capture ({}); name another --out",
                                  out.string(), kManifestFile));
    }
    std::error_code ec;
    fs::create_directories(out / kVersionsDir, ec);
    if (ec) return Error{fmt::format("cannot create {}: {}", out.string(), ec.message())};

    if (auto text = ReadRegularFile(out / kCheckpointFile, kMaxFolderFileBytes); text.ok()) {
      auto j = ParseJson(*text);
      auto c = j.is_discarded() ? Result<Checkpoint>(Error{"not JSON"}) : Checkpoint::FromJson(j);
      if (!c.ok()) {
        return BadInput(
            fmt::format("{}: cannot resume from it ({}); remove the folder to start again",
                        (out / kCheckpointFile).string(), c.error().message));
      }
      // runs.jsonl is cut to runs_bytes on resume: never grown (a sparse
      // file of any size), only cut back to what the checkpoint vouches for.
      std::error_code size_ec;
      const auto on_disk = fs::file_size(out / kRunsFile, size_ec);
      if (size_ec ? c->runs_bytes != 0 : static_cast<uintmax_t>(c->runs_bytes) > on_disk) {
        return BadInput(fmt::format(
            "{}: cannot resume from it (runs_bytes {} is more than {} holds); remove the "
            "folder to start again",
            (out / kCheckpointFile).string(), c->runs_bytes, kRunsFile));
      }
      checkpoint_ = std::move(*c);
      checkpoint_.progress.resumed = true;
    } else {
      const WallTime now = WallClock::now();
      auto since = ParseWindowPoint(options_.since, now);
      if (!since.ok()) return BadInput("--since: " + since.error().message);
      WallTime until = now;
      if (!options_.until.empty()) {
        auto u = ParseWindowPoint(options_.until, now);
        if (!u.ok()) return BadInput("--until: " + u.error().message);
        until = *u;
      }
      if (!(*since < until)) {
        return BadInput(fmt::format("the window is empty: --since {} is not before --until {}",
                                    FormatRfc3339(*since), FormatRfc3339(until)));
      }
      checkpoint_.since = *since;
      checkpoint_.until = until;
      auto selection = ResolveSelection(client_, options_.experiments, options_.pipelines,
                                        [this] { return Turn(); });
      if (!selection.ok()) return selection.error();
      checkpoint_.selection = std::move(*selection);
    }
    auto runs = RunsFile::Open(out / kRunsFile, checkpoint_.runs_bytes);
    if (!runs.ok()) return runs.error();
    runs_ = std::move(*runs);
    if (Status s = Save(); !s.ok()) return s.error();

    CaptureSummary summary;
    summary.since = checkpoint_.since;
    summary.until = checkpoint_.until;
    Status read = ReadAll();
    summary.progress = checkpoint_.progress;
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (Status s = Save(); !s.ok()) return s.error();
    if (!read.ok()) {
      if (read.error().code == kInterrupted) {
        summary.interrupted = true;
        return summary;
      }
      return read.error();
    }
    if (Status s = Derive(out, summary.since, summary.until,
                          options_.cluster ? &*options_.cluster : nullptr, &summary.overhead_note);
        !s.ok()) {
      return s.error();
    }
    CountVersions(summary.progress);
    if (Status s = WriteManifest(summary); !s.ok()) return s.error();
    fs::remove(out / kCheckpointFile, ec);
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return summary;
  }

 private:
  static constexpr int kInterrupted = -2;

  Status Save() {
    if (Status s = runs_->Sync(); !s.ok()) return s;
    checkpoint_.runs_bytes = runs_->bytes();
    return WriteFileAtomically(options_.out / kCheckpointFile, checkpoint_.ToJson().dump(1) + "\n");
  }

  // Waits for the budget; an Error when interrupted meanwhile.
  Status Turn() {
    std::lock_guard lock(turn_mu_);  // the page's readers take turns
    if (!budget_.Acquire(WallTime::max(),
                         [this] { return options_.interrupted && options_.interrupted->load(); })) {
      return Error{"interrupted", kInterrupted};
    }
    ++checkpoint_.progress.calls;
    return Ok();
  }

  Status ReadAll() {
    Progress& p = checkpoint_.progress;
    // A resumed capture asks from the second its last run was created in.
    const WallTime from =
        p.last_created_at != WallTime{} ? FloorToSecond(p.last_created_at) : checkpoint_.since;
    kfp::ListOptions list;
    list.page_size = options_.page_size;
    list.sort_by = "created_at";
    list.filter = RunsFilter(from, checkpoint_.until, checkpoint_.selection);
    // A target that hands out a token it gave before would be listed forever.
    std::set<std::string> tokens;
    do {
      if (Status s = Turn(); !s.ok()) return s;
      auto page = client_.ListRuns(list);
      if (!page.ok()) return ListError(page.error());
      if (page->items.size() > static_cast<size_t>(options_.page_size)) {
        return Error{
            fmt::format("the target answered {} runs for a page of {}; it does not page "
                        "as KFP does",
                        page->items.size(), options_.page_size)};
      }
      if (!page->next_page_token.empty() && !tokens.insert(page->next_page_token).second) {
        return Error{
            "the target gave the same next_page_token twice; listing it again would "
            "never end"};
      }
      std::vector<const kfp::Run*> todo;
      for (const auto& listed : page->items) {
        if (!InWindow(listed)) continue;
        if (checkpoint_.selection.Selects(listed)) todo.push_back(&listed);
      }
      auto details = ReadDetails(todo);
      for (size_t i = 0; i < todo.size(); ++i) {
        if (!details[i]) return Error{"interrupted", kInterrupted};  // after an earlier error
        if (Status s = CaptureRun(*todo[i], std::move(*details[i])); !s.ok()) return s;
      }
      list.page_token = page->next_page_token;
      if (Status s = Save(); !s.ok()) return s;
      if (on_progress_) on_progress_(p);
    } while (!list.page_token.empty());
    return Ok();
  }

  // Whether a listed run is new and in the window: the list is sorted on
  // created_at, so one created before the last captured second was read
  // already (or the history changed under the capture), one of that second
  // is known by id, and one outside [since, until) the target should not
  // have listed (a year-9999 run would end every later one's turn).
  bool InWindow(const kfp::Run& listed) const {
    const Progress& p = checkpoint_.progress;
    // KFP's filter compares whole seconds.
    const WallTime second = FloorToSecond(listed.created_at);
    if (second < FloorToSecond(checkpoint_.since) || second > FloorToSecond(checkpoint_.until)) {
      return false;
    }
    if (p.last_created_at == WallTime{}) return true;
    if (second < FloorToSecond(p.last_created_at)) return false;
    return !(second == FloorToSecond(p.last_created_at) &&
             checkpoint_.ids_in_last_second.contains(listed.run_id));
  }

  Error ListError(const Error& e) const {
    if (e.code == kHttpForbidden || e.code == kHttpUnauthorized) {
      return Error{fmt::format("the target refused to list runs ({}); check --token, --namespace "
                               "and that the account may list runs",
                               e.message),
                   e.code};
    }
    return e;
  }

  // The details of a page's runs, `options_.readers` GetRun calls in flight
  // at once, each waiting its turn under the budget: against a fast target
  // the chain of calls, one side waiting while the other works, is what
  // bounds a capture. Runs after a failed read are left unread (nullopt).
  std::vector<std::optional<Result<kfp::Run>>> ReadDetails(
      const std::vector<const kfp::Run*>& runs) {
    std::vector<std::optional<Result<kfp::Run>>> out(runs.size());
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    auto read = [&] {
      for (size_t i = next++; i < runs.size() && !stop; i = next++) {
        if (Status s = Turn(); !s.ok()) {
          out[i] = s.error();
          stop = true;
          break;
        }
        out[i] = client_.GetRun(runs[i]->run_id);
        if (!out[i]->ok() && !out[i]->error().NotFound()) stop = true;
      }
    };
    const size_t readers = std::clamp<size_t>(static_cast<size_t>(std::max(options_.readers, 1)), 1,
                                              std::max<size_t>(runs.size(), 1));
    std::vector<std::thread> threads;
    for (size_t t = 1; t < readers; ++t) threads.emplace_back(read);
    read();
    for (auto& t : threads) t.join();
    return out;
  }

  Status CaptureRun(const kfp::Run& listed, Result<kfp::Run> detail) {
    Progress& p = checkpoint_.progress;
    bool details_missing = false;
    kfp::Run run;
    if (detail.ok()) {
      run = std::move(*detail);
    } else if (detail.error().NotFound()) {
      // Deleted between the list and the read: the list's fields are kept.
      run = listed;
      details_missing = true;
    } else {
      return detail.error();
    }
    const std::string key = VersionKey(run);
    auto labels = Labels(key, run);
    if (!labels.ok()) return labels.error();
    json line = RunLine(run, key, **labels, options_.record);
    if (details_missing) line["details_missing"] = true;
    if (Status s = runs_->Append(line.dump()); !s.ok()) return s;
    ++p.runs;
    p.tasks += static_cast<int64_t>(run.task_details.size());
    if (!IsTerminal(run.state)) ++p.censored;
    if (FloorToSecond(run.created_at) != FloorToSecond(p.last_created_at)) {
      checkpoint_.ids_in_last_second.clear();
    }
    checkpoint_.ids_in_last_second.insert(run.run_id);
    p.last_created_at = std::max(p.last_created_at, run.created_at);
    return Ok();
  }

  // The task labels of a version, read from the target (or the folder, when
  // an earlier start of this capture wrote it) once.
  Result<const TaskLabels*> Labels(const std::string& key, const kfp::Run& run) {
    if (auto it = labels_.find(key); it != labels_.end()) return &it->second;
    Progress& p = checkpoint_.progress;
    const fs::path file = options_.out / kVersionsDir / (key + ".json");
    TaskLabels& labels = labels_[key];
    if (auto text = ReadRegularFile(file, kMaxFolderFileBytes); text.ok()) {
      auto j = ParseJson(*text);
      if (!j.is_discarded() && j.contains("spec") && !j["spec"].is_null()) {
        if (auto spec = ir::ParsePipelineSpecJson(j["spec"]); spec.ok()) {
          labels = spec->TaskExecutorLabels();
        }
      }
      return &labels;
    }
    json version_file;
    if (key.starts_with("inline-")) {
      kfp::PipelineVersion inline_spec;
      inline_spec.pipeline_spec = run.pipeline_spec;
      version_file = VersionFile(key, inline_spec, labels);
      version_file["inline"] = true;
    } else {
      if (Status s = Turn(); !s.ok()) return s.error();
      // Asked by the id the target gave; filed under the key.
      auto version = client_.GetPipelineVersion(run.pipeline_id, VersionId(run));
      if (version.ok()) {
        version_file = VersionFile(key, *version, labels);
      } else if (version.error().NotFound()) {
        version_file =
            MissingVersionFile(key, VersionId(run), run.pipeline_id, version.error().message);
        ++p.missing_versions;
      } else {
        return version.error();
      }
    }
    ++p.versions;
    if (Status s = WriteFileAtomically(file, version_file.dump(1) + "\n"); !s.ok())
      return s.error();
    return &labels;
  }

  // Versions written by an earlier start of this capture after its last
  // checkpoint are on disk but not in its counts: the folder is the truth.
  void CountVersions(Progress& p) const {
    p.versions = 0;
    p.missing_versions = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(options_.out / kVersionsDir, ec)) {
      if (e.path().extension() != ".json") continue;
      ++p.versions;
      auto text = ReadRegularFile(e.path(), kMaxFolderFileBytes);
      auto j = ParseJson(text.ok() ? *text : std::string());
      if (!j.is_discarded() && j.value("missing", false)) ++p.missing_versions;
    }
  }

  Status WriteManifest(const CaptureSummary& summary) {
    const Progress& p = summary.progress;
    json manifest = {{"complete", true},
                     {"format", kFormat},
                     {"kfpbench_version", KFPBENCH_VERSION},
                     {"target", options_.target},
                     {"since", FormatRfc3339(summary.since)},
                     {"until", FormatRfc3339(summary.until)},
                     {"finished", FormatRfc3339(WallClock::now())},
                     {"runs", p.runs},
                     {"tasks", p.tasks},
                     {"censored", p.censored},
                     {"versions", p.versions},
                     {"missing_versions", p.missing_versions},
                     {"calls", p.calls},
                     {"qps", options_.qps},
                     {"parameters_hashed", !options_.record.keep_parameters},
                     {"selection", checkpoint_.selection.ToJson()},
                     {"files", FolderFiles(options_.out)}};
    return WriteFileAtomically(options_.out / kManifestFile, manifest.dump(1) + "\n");
  }

  kfp::Client& client_;
  const CaptureOptions& options_;
  const std::function<void(const Progress&)>& on_progress_;
  std::mutex turn_mu_;
  CallBudget budget_;
  Checkpoint checkpoint_;
  std::unique_ptr<RunsFile> runs_;
  std::map<std::string, TaskLabels> labels_;
};

}  // namespace

Result<CaptureSummary> Capture(kfp::Client& client, const CaptureOptions& options,
                               const std::function<void(const Progress&)>& on_progress) {
  if (options.page_size < 1) return BadInput("--page-size: must be at least 1");
  return Capturer(client, options, on_progress).Run();
}

Result<CaptureSummary> CaptureTarget(const harness::TargetOptions& target, CaptureOptions options,
                                     const std::function<void(const Progress&)>& on_progress) {
  auto session = harness::Session::Open(target);
  if (!session.ok()) return Error{session.error().message, kHttpBadRequest};
  if (Status s = (*session)->CheckReachable(); !s.ok()) {
    return Error{s.error().message, kHttpBadRequest};
  }
  if (options.target.empty()) options.target = (*session)->url();
  return Capture((*session)->client(), options, on_progress);
}

}  // namespace kfpbench::capture
