// The KFP v2 pipeline IR (PipelineSpec, schemaVersion 2.1.0) as kfpbench reads it.
//
// Parsing turns the YAML/JSON document into typed structs once, checks every
// cross reference (componentRef, executorLabel, producerTask, input names) and
// the DAGs' acyclicity, so that the engine never meets a dangling name while a
// run is in flight.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/quantity.h"   // ParseQuantityCpu/Memory, used with the IR
#include "ir/yaml_json.h"  // YamlToJson, which reads the pipeline files
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::ir {

// What one pipeline may ask of the engine (docs/RELIABILITY.md#limits).
// DAG components nest at most as deep as Argo nests templates
// (maxAllowedStackDepth); a ParallelFor iterates at most kMaxLoopItems times,
// and one run holds at most kMaxRunTasks task instances, loops included, so
// that no run can outgrow the memory of the server that executes it.
inline constexpr size_t kMaxDagNesting = 100;
inline constexpr size_t kMaxLoopItems = 10'000;
inline constexpr size_t kMaxRunTasks = 100'000;

enum class ParameterType {
  kUnspecified,
  kString,
  kNumberInteger,
  kNumberDouble,
  kBoolean,
  kList,
  kStruct,
  kTaskFinalStatus,
};

// "STRING", "NUMBER_INTEGER", ... as the IR spells them.
std::string_view ParameterTypeName(ParameterType t);
std::optional<ParameterType> ParseParameterType(std::string_view name);

struct ParameterSpec {
  std::string name;
  ParameterType type = ParameterType::kUnspecified;
  std::optional<nlohmann::json> default_value;
  bool is_optional = false;
  std::string description;
};

struct ArtifactSpec {
  std::string name;
  std::string schema_title;    // "system.Dataset"
  std::string schema_version;  // "0.0.1"
  bool is_artifact_list = false;
  bool is_optional = false;
};

// inputDefinitions / outputDefinitions of a component.
struct InterfaceSpec {
  std::map<std::string, ParameterSpec> parameters;
  std::map<std::string, ArtifactSpec> artifacts;
};

// CPU in cores, memory in bytes; 0 means "not set".
struct ResourceSpec {
  double cpu_request = 0;
  double cpu_limit = 0;
  int64_t memory_request = 0;
  int64_t memory_limit = 0;
  std::string accelerator_type;
  int64_t accelerator_count = 0;
  // Fields whose value is a placeholder the driver resolves when the task
  // starts (a pipeline input or an upstream output), by IR key
  // ("resourceCpuLimit", "accelerator.resourceCount", ...) -> the text.
  std::map<std::string, std::string> templated;
};

// Sets one field from its IR text ("500m", "4Gi", "NVIDIA_TESLA_T4", "2"), as
// parsing does; for templated fields once their placeholder is resolved.
Status SetResourceField(ResourceSpec& spec, std::string_view key, std::string_view text);

struct ContainerSpec {
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  ResourceSpec resources;
};

// Where a task may run, from kfp-kubernetes' platform spec (node_selector,
// tolerations, node_affinity), as a Pod spec says it.
struct Toleration {
  std::string key;
  std::string op = "Equal";  // Equal or Exists
  std::string value;
  std::string effect;  // empty: every effect
};
struct SelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};
struct NodeScheduling {
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  // requiredDuringScheduling terms: a node must match one (each a list of
  // requirements that must all hold). Weighted (preferred) terms only steer
  // a scheduler's choice and are not kept.
  std::vector<std::vector<SelectorRequirement>> required_terms;
  bool empty() const {
    return node_selector.empty() && tolerations.empty() && required_terms.empty();
  }
};

// An importer: no container; the driver registers an existing artifact
// (artifactUri) as the task's one output artifact.
struct ImporterSpec {
  std::string uri_constant;           // artifactUri.constant
  std::string uri_runtime_parameter;  // artifactUri.runtimeParameter: a task input's name
  nlohmann::json metadata = nlohmann::json::object();  // as written (KFP resolves nothing in it)
  std::string schema_title;
  std::string schema_version;
  bool reimport = false;
  bool download_to_workspace = false;
};

struct ExecutorSpec {
  std::string label;  // "exec-add-numbers"
  ContainerSpec container;
  std::optional<ImporterSpec> importer;  // set for importers; `container` is then empty
  NodeScheduling scheduling;             // from the platform spec, if any
  // kfp-kubernetes' CreatePVC/DeletePVC: containers with these images are
  // run by the driver itself (backend/src/v2/driver/k8s.go), never as pods.
  bool is_create_pvc() const { return container.image == "argostub/createpvc"; }
  bool is_delete_pvc() const { return container.image == "argostub/deletepvc"; }
  bool runs_in_driver() const { return importer || is_create_pvc() || is_delete_pvc(); }
};

// Where a task input parameter's value comes from.
struct ParameterBinding {
  enum class Kind {
    kComponentInput,   // componentInputParameter: a parameter of the enclosing DAG
    kConstant,         // runtimeValue.constant
    kTaskOutput,       // taskOutputParameter{producerTask, outputParameterKey}
    kTaskFinalStatus,  // taskFinalStatus{producerTask} (exit handlers)
  };
  Kind kind = Kind::kConstant;
  std::string component_input;
  nlohmann::json constant;
  std::string producer_task;
  std::string output_key;
  // parameterExpressionSelector, a CEL expression over `string_value`, e.g.
  // parseJson(string_value)["A_a"]; empty when none.
  std::string expression_selector;
};

struct ArtifactBinding {
  enum class Kind { kComponentInput, kTaskOutput };
  Kind kind = Kind::kTaskOutput;
  std::string component_input;
  std::string producer_task;
  std::string output_key;
};

struct RetryPolicy {
  int max_retry_count = 0;
  Duration backoff{};  // before the first retry
  double backoff_factor = 2;
  Duration backoff_max{};  // 0: no cap
};

// ParallelFor: run the task's DAG once per item.
struct IteratorSpec {
  std::string item_input;  // the DAG input that receives each item
  bool raw = false;
  nlohmann::json raw_items;     // parsed items.raw (a JSON list)
  std::string input_parameter;  // items.inputParameter: one of the task's inputs
  // artifactIterator: items.inputArtifact, one of the task's input
  // artifacts (a list); each iteration gets one artifact as item_input.
  std::string input_artifact;
  int parallelism_limit = 0;  // iteratorPolicy.parallelismLimit; 0: unlimited
  bool over_artifacts() const { return !input_artifact.empty(); }
};

struct TaskSpec {
  std::string name;          // key in dag.tasks
  std::string display_name;  // taskInfo.name
  std::string component_ref;
  std::vector<std::string> dependent_tasks;  // as written in the IR
  // dependent_tasks plus every producerTask of data inputs, sorted, unique.
  std::vector<std::string> upstream;
  std::map<std::string, ParameterBinding> parameters;
  std::map<std::string, ArtifactBinding> artifacts;
  bool enable_cache = false;
  std::string condition;                // triggerPolicy.condition (CEL); empty: always
  bool run_when_upstream_done = false;  // triggerPolicy.strategy ALL_UPSTREAM_TASKS_COMPLETED
  std::optional<IteratorSpec> iterator;
  std::optional<RetryPolicy> retry;
};

// A DAG output: the first producer that has a value (valueFromParameter has one
// source, valueFromOneof several).
struct OutputSource {
  std::string producer_task;
  std::string output_key;
};

struct DagSpec {
  std::map<std::string, TaskSpec> tasks;
  std::vector<std::string> topo_order;  // dependencies first, ties by name
  std::map<std::string, std::vector<OutputSource>> output_parameters;
  std::map<std::string, std::vector<OutputSource>> output_artifacts;
};

struct ComponentSpec {
  std::string name;  // "comp-add-numbers"; "root" for the pipeline itself
  InterfaceSpec inputs;
  InterfaceSpec outputs;
  std::string executor_label;    // set for container components
  std::shared_ptr<DagSpec> dag;  // set for DAG components
  bool is_dag() const { return dag != nullptr; }
};

struct PipelineSpec {
  std::string name;         // pipelineInfo.name
  std::string description;  // pipelineInfo.description, if any
  nlohmann::json json;      // the whole spec document as JSON (what the API returns)
  std::string display_name;
  std::string schema_version;
  std::string sdk_version;
  std::map<std::string, ComponentSpec> components;
  std::map<std::string, ExecutorSpec> executors;
  ComponentSpec root;
  // Things parsed but not acted on, e.g. an ignored platform spec document.
  std::vector<std::string> warnings;

  const ComponentSpec* FindComponent(std::string_view name) const;
  const ExecutorSpec* FindExecutor(std::string_view label) const;
  // Task name (and display name, where set) -> executor label, over every DAG
  // of the spec: how a run's task details name the step they ran.
  std::map<std::string, std::string> TaskExecutorLabels() const;
};

// Parses compiled IR in YAML or JSON. The first YAML document is the pipeline
// spec; an optional second one is kfp-kubernetes' platform spec, of which
// node selectors, tolerations and node affinity are kept (see
// docs/COMPATIBILITY.md for the rest). Errors name the
// offending field, e.g. "root.dag.tasks.train.componentRef.name: unknown component 'comp-x'".
Result<PipelineSpec> ParsePipelineSpec(std::string_view text);
Result<PipelineSpec> ParsePipelineSpecJson(const nlohmann::json& doc);
// A compiled pipeline file read and parsed, the one way every command and
// scenario does it: "cannot read PATH: why", or "PATH: " and the parser's
// error. `text`, when given, receives what was read (for an upload of it).
Result<PipelineSpec> LoadPipelineSpec(const std::filesystem::path& path,
                                      std::string* text = nullptr);
// Reads kfp-kubernetes' platform spec document ({"platforms": {"kubernetes":
// ...}}) into `spec`'s executors.
Status ParsePlatformSpec(const nlohmann::json& doc, PipelineSpec& spec);

// The compiled pipeline file `text` with every task's
// cachingOptions.enableCache set to `enable` (root's DAG and every
// component's), as KFP's SDK rewrites a pipeline for
// create_run_from_pipeline_package(enable_caching=...); its documents are
// written back as JSON, which KFP reads as YAML.
Result<std::string> WithCaching(std::string_view text, bool enable);

// Protobuf JSON durations: "3600s", "0.5s", "0s".
Result<Duration> ParseProtoDuration(std::string_view text);

}  // namespace kfpbench::ir
