// Every spelling the embedded server's readers accept of where a create
// request lands (a field's proto and JSON names, body and query, first and
// last resource reference, enums by name and by number), for the
// multi-user tests (server/access_test.cc, in process;
// harness/multi_user_e2e_test.cc, against `kfpbench serve`): one list, so
// both walk the same cases.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kfpbench::server::testing {

struct SpellingCase {
  std::string what;
  std::string target;
  nlohmann::json body;
  int status;  // 403: authorized on the other namespace; 400: named twice
};

// The requests of a caller of namespace `mine_ns` whose own experiment is
// `mine` and own pipeline `pipeline_id`; `theirs` is an experiment of
// `theirs_ns`.
class Spellings {
 public:
  Spellings(std::string theirs, std::string theirs_ns, std::string mine, std::string mine_ns,
            std::string pipeline_id)
      : a_(std::move(theirs)),
        a_ns_(std::move(theirs_ns)),
        b_(std::move(mine)),
        b_ns_(std::move(mine_ns)),
        pipeline_id_(std::move(pipeline_id)) {}

  // Each names the other namespace (its experiment or itself) somewhere,
  // alone (403) or beside the caller's own (400). None may land there.
  std::vector<SpellingCase> Crossing() const {
    const std::string& a = a_;
    const std::string& b = b_;
    return {
        {"run: experiment_id", kRuns, Run({{"experiment_id", a}}), 403},
        {"run: experimentId", kRuns, Run({{"experimentId", a}}), 403},
        {"run: ?experiment_id", Q(kRuns, "experiment_id", a), Run({}), 403},
        {"run: ?experimentId", Q(kRuns, "experimentId", a), Run({}), 403},
        {"run: ?experiment_id and experimentId", Q(kRuns, "experiment_id", b),
         Run({{"experimentId", a}}), 400},
        {"run: ?experiment_id and experiment_id", Q(kRuns, "experiment_id", b),
         Run({{"experiment_id", a}}), 400},
        {"run: ?experimentId and experimentId", Q(kRuns, "experimentId", b),
         Run({{"experimentId", a}}), 400},
        {"run: experimentId and ?experiment_id", Q(kRuns, "experiment_id", a),
         Run({{"experimentId", b}}), 400},
        {"run: experiment_id and experimentId", kRuns,
         Run({{"experiment_id", b}, {"experimentId", a}}), 400},
        {"run: ?experiment_id twice", Q(kRuns, "experiment_id", b) + "&experiment_id=" + a, Run({}),
         400},
        {"run: ?experiment_id and ?experimentId",
         Q(kRuns, "experiment_id", b) + "&experimentId=" + a, Run({}), 400},
        {"recurring: experiment_id", kJobs, Recurring({{"experiment_id", a}}), 403},
        {"recurring: experimentId", kJobs, Recurring({{"experimentId", a}}), 403},
        {"recurring: ?experiment_id", Q(kJobs, "experiment_id", a), Recurring({}), 403},
        {"recurring: ?experimentId", Q(kJobs, "experimentId", a), Recurring({}), 403},
        {"recurring: ?experiment_id and experimentId", Q(kJobs, "experiment_id", b),
         Recurring({{"experimentId", a}}), 400},
        {"recurring: experimentId and ?experiment_id", Q(kJobs, "experiment_id", a),
         Recurring({{"experimentId", b}}), 400},
        {"recurring: experiment_id and experimentId", kJobs,
         Recurring({{"experiment_id", b}, {"experimentId", a}}), 400},
        {"recurring: namespace of another", kJobs,
         Recurring({{"experiment_id", b}, {"namespace", a_ns_}}), 400},
        {"v1 run: EXPERIMENT", kV1Runs, V1Run("resource_references", {Ref("EXPERIMENT", a)}), 403},
        {"v1 run: resourceReferences", kV1Runs, V1Run("resourceReferences", {Ref("EXPERIMENT", a)}),
         403},
        {"v1 run: EXPERIMENT by number", kV1Runs, V1Run("resource_references", {Ref(1, a)}), 403},
        {"v1 run: last of two EXPERIMENT", kV1Runs,
         V1Run("resource_references", {Ref("EXPERIMENT", b), Ref("EXPERIMENT", a)}), 400},
        {"v1 run: first of two EXPERIMENT", kV1Runs,
         V1Run("resource_references", {Ref("EXPERIMENT", a), Ref("EXPERIMENT", b)}), 400},
        {"v1 run: EXPERIMENT by name and by number", kV1Runs,
         V1Run("resource_references", {Ref("EXPERIMENT", b), Ref(1, a)}), 400},
        {"v1 run: NAMESPACE of another", kV1Runs,
         V1Run("resource_references", {Ref("EXPERIMENT", b), Ref("NAMESPACE", a_ns_)}), 400},
        {"v2 experiment: namespace",
         kExperiments,
         {{"display_name", "sneaky"}, {"namespace", a_ns_}},
         403},
        {"v2 experiment: displayName",
         kExperiments,
         {{"displayName", "sneaky"}, {"namespace", a_ns_}},
         403},
        {"v1 experiment: NAMESPACE", kV1Experiments,
         V1Experiment("resource_references", {Ref("NAMESPACE", a_ns_)}), 403},
        {"v1 experiment: resourceReferences", kV1Experiments,
         V1Experiment("resourceReferences", {Ref("NAMESPACE", a_ns_)}), 403},
        {"v1 experiment: NAMESPACE by number", kV1Experiments,
         V1Experiment("resource_references", {Ref(5, a_ns_)}), 403},
        {"v1 experiment: last of two NAMESPACE", kV1Experiments,
         V1Experiment("resource_references", {Ref("NAMESPACE", b_ns_), Ref("NAMESPACE", a_ns_)}),
         400},
        {"v1 experiment: first of two NAMESPACE", kV1Experiments,
         V1Experiment("resource_references", {Ref("NAMESPACE", a_ns_), Ref("NAMESPACE", b_ns_)}),
         400},
        {"pipeline: namespace",
         kPipelines,
         {{"display_name", "sneaky"}, {"namespace", a_ns_}},
         403},
        {"pipeline and version: pipeline.namespace",
         kPipelinesCreate,
         {{"pipeline", {{"display_name", "sneaky"}, {"namespace", a_ns_}}},
          {"pipeline_version", {{"display_name", "sneaky"}}}},
         403},
    };
  }

  // The same spellings naming only the caller's own experiment and
  // namespace: each is read, accepted (200) and lands there.
  std::vector<SpellingCase> Own() const {
    const std::string& b = b_;
    return {
        {"run: experiment_id", kRuns, Run({{"experiment_id", b}}), 200},
        {"run: experimentId", kRuns, Run({{"experimentId", b}}), 200},
        {"run: ?experiment_id", Q(kRuns, "experiment_id", b), Run({}), 200},
        {"run: ?experimentId", Q(kRuns, "experimentId", b), Run({}), 200},
        {"recurring: experimentId", kJobs, Recurring({{"experimentId", b}}), 200},
        {"recurring: ?experiment_id", Q(kJobs, "experiment_id", b), Recurring({}), 200},
        {"v1 run: resourceReferences", kV1Runs, V1Run("resourceReferences", {Ref("EXPERIMENT", b)}),
         200},
        {"v1 run: by number, with its NAMESPACE", kV1Runs,
         V1Run("resource_references", {Ref(1, b), Ref("NAMESPACE", b_ns_)}), 200},
        {"v2 experiment: displayName",
         kExperiments,
         {{"displayName", "mine-camel"}, {"namespace", b_ns_}},
         200},
        {"v1 experiment: NAMESPACE by number", kV1Experiments,
         V1Experiment("resourceReferences", {Ref(5, b_ns_)}), 200},
        {"pipeline: displayName",
         kPipelines,
         {{"displayName", "mine-pipeline"}, {"namespace", b_ns_}},
         200},
    };
  }

  static constexpr const char* kRuns = "/apis/v2beta1/runs";
  static constexpr const char* kJobs = "/apis/v2beta1/recurringruns";
  static constexpr const char* kExperiments = "/apis/v2beta1/experiments";
  static constexpr const char* kV1Runs = "/apis/v1beta1/runs";
  static constexpr const char* kV1Experiments = "/apis/v1beta1/experiments";
  static constexpr const char* kPipelines = "/apis/v2beta1/pipelines";
  static constexpr const char* kPipelinesCreate = "/apis/v2beta1/pipelines/create";

 private:
  using json = nlohmann::json;

  static std::string Q(const char* path, const char* key, const std::string& value) {
    return std::string(path) + "?" + key + "=" + value;
  }
  json Run(json fields) const {
    fields["display_name"] = "sneaky";
    fields["pipeline_version_reference"] = {{"pipeline_id", pipeline_id_}};
    return fields;
  }
  json Recurring(json fields) const {
    fields = Run(std::move(fields));
    fields["mode"] = "DISABLE";
    fields["trigger"] = {{"periodic_schedule", {{"interval_second", 3600}}}};
    return fields;
  }
  static json Ref(json type, const std::string& id) {
    return {{"key", {{"type", std::move(type)}, {"id", id}}}, {"relationship", "OWNER"}};
  }
  // The references as a list (initializer_list, not json: a json built from
  // `{one}` is that one element under clang's reading of the brace rules, an
  // array of it under gcc's).
  static json List(std::initializer_list<json> items) {
    json list = json::array();
    for (const json& item : items) list.push_back(item);
    return list;
  }
  json V1Run(const char* refs_name, std::initializer_list<json> refs) const {
    return {{"name", "sneaky"},
            {"pipeline_spec", {{"pipeline_id", pipeline_id_}}},
            {refs_name, List(refs)}};
  }
  static json V1Experiment(const char* refs_name, std::initializer_list<json> refs) {
    return {{"name", "sneaky"}, {refs_name, List(refs)}};
  }

  std::string a_, a_ns_, b_, b_ns_, pipeline_id_;
};

}  // namespace kfpbench::server::testing
