#include "plan/answer.h"

#include "plan/calibration.h"
#include "plan/capacity_page.h"
#include "plan/command_errors.h"
#include "sim/arrivals.h"
#include "sim/config.h"
#include "sim/simulator.h"
#include "util/files.h"

namespace kfpbench::plan {

Result<Answer> AnswerQuestion(const Question& question, const AnswerFiles& files,
                              const std::function<void(const Answer&)>& on_answer) {
  Question q = question;
  const bool pattern = q.arrival_scale > 0;
  if (pattern && q.runs > 0) return BadInput("give the runs or an arrival scale, not both");
  if (pattern && !files.html.empty()) {
    return BadInput(
        "the page draws runs all at once; with an arrival scale the answer is on the recorded "
        "arrivals: leave out --html");
  }
  const int given = (q.runs > 0 || pattern) + (q.nodes > 0) + (q.within > Duration::zero());
  if (given != 2) return BadInput("give exactly two of the runs, the nodes and the time allowed");
  auto cluster = sim::LoadCluster(q.cluster);
  if (!cluster.ok()) return BadInput(cluster.error().message);
  auto workload = sim::LoadWorkload(q.workload);
  if (!workload.ok()) return BadInput(workload.error().message);
  Measure& measure = q.replications.measure;
  measure.metric = q.metric.value_or(pattern ? Metric::kRunP95 : Metric::kMakespan);
  if (pattern) {
    if (auto st = sim::ScaleArrivals(*workload, q.arrival_scale); !st.ok()) {
      return BadInput("arrival scale: " + st.error().message);
    }
    measure.recorded_arrivals = true;
    measure.arrival_scale = q.arrival_scale;
    q.runs = sim::RunCount(*workload);
  }
  Result<Answer> a = Error{""};
  if (q.within == Duration::zero()) {
    a = TimeFor(*cluster, *workload, q.runs, q.nodes, q.replications);
  } else if (q.nodes == 0) {
    a = NodesFor(*cluster, *workload, q.runs, q.within, q.replications);
  } else {
    a = RunsIn(*cluster, *workload, q.within, q.nodes, q.replications);
  }
  // A question too large to simulate is the input's fault (the error says
  // so); a simulation whose runs fail is the work's.
  if (!a.ok()) return a;
  a->warning = UndecidedWarning(q.workload);
  a->model_error = UnseenError(q.workload);
  if (on_answer) on_answer(*a);
  if (!files.json.empty()) {
    if (auto st = WriteFileAtomically(files.json, ToJson(*a).dump(2) + "\n"); !st.ok()) {
      return Failed(st.error());
    }
  }
  if (!files.html.empty()) {
    std::string title = "kfpbench plan " + q.workload.string();
    const nlohmann::json fit = SummaryFitOfWorkload(q.workload);
    if (auto st = WriteAnswerPage(*cluster, *workload, *a, title, files.html,
                                  fit.is_object() ? &fit : nullptr);
        !st.ok()) {
      return Failed(st.error());
    }
  }
  return a;
}

Status WriteAnswerPage(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       const Answer& answer, const std::string& title,
                       const std::filesystem::path& path, const nlohmann::json* fit) {
  auto sweeps = SweepAround(cluster, workload, answer.runs, answer.nodes, answer.replications,
                            answer.deadline);
  if (!sweeps.ok()) return Failed(sweeps.error());
  sim::WorkloadSpec w = workload;
  w.arrival_kind = sim::WorkloadSpec::ArrivalKind::kAllAtOnce;
  w.runs = answer.runs;
  auto at_answer = sim::Simulate(FixedNodes(cluster, answer.nodes), w);
  if (!at_answer.ok()) return Failed(at_answer.error());
  CapacityPage page{title, Describe(answer), &*sweeps, &*at_answer, &answer, fit};
  if (auto st = WriteCapacityPage(page, path); !st.ok()) return Failed(st.error());
  return Ok();
}

}  // namespace kfpbench::plan
