// Tasks KFP's driver or launcher does itself, without a pod of their own:
// importers, and kfp-kubernetes' CreatePVC/DeletePVC. They take no node and no
// time.
#include "engine/engine_impl.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "ir/artifact_uri.h"
#include "ir/placeholders.h"
#include "ir/values.h"

namespace kfpbench::engine {

using namespace detail;  // NOLINT: the run state types are the engine's vocabulary

namespace {

using nlohmann::json;

// A claim's name is a Kubernetes object name (a DNS-1123 subdomain), as
// the API server would insist; it is also a folder name here, so nothing
// else (a '/', "..") may reach the filesystem.
Status CheckPvcName(const std::string& name) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok = !name.empty() && name.size() <= 253 && alnum(name.front()) && alnum(name.back());
  for (char c : name) ok = ok && (alnum(c) || c == '-' || c == '.');
  if (ok) return Ok();
  return Error{fmt::format(
      "PersistentVolumeClaim \"{}\" is invalid: metadata.name: a lowercase RFC 1123 "
      "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
      "start and end with an alphanumeric character",
      name)};
}

}  // namespace

void Engine::Impl::RunInDriver(DagExec& dag, int i, const ir::ExecutorSpec& exec) {
  SetState(*dag.run, dag.tasks[i].record, RuntimeState::kRunning);
  Status s = exec.importer          ? Import(dag, i, *exec.importer)
             : exec.is_create_pvc() ? CreatePvc(dag, i)
                                    : DeletePvc(dag, i);
  if (!s.ok()) return FinishTask(dag, i, RuntimeState::kFailed, s.error().message);
  FinishTask(dag, i, RuntimeState::kSucceeded);
}

// importer_launcher.go: the URI is a constant or the parent DAG's value of
// the input the runtimeParameter names; the metadata is kept as written.
Status Engine::Impl::Import(DagExec& dag, int i, const ir::ImporterSpec& importer) {
  TaskExec& task = dag.tasks[i];
  const ir::TaskSpec& spec = *dag.plan->tasks[i];
  const ir::ComponentSpec& comp = *dag.plan->components[i];
  auto failed = [](const std::string& why) {
    return Error{
        "failed to execute importer component: failed to create MLMD artifact from "
        "ImporterSpec: " +
        why};
  };
  std::string uri = importer.uri_constant;
  if (const std::string& param = importer.uri_runtime_parameter; !param.empty()) {
    auto binding = spec.parameters.find(param);
    if (binding == spec.parameters.end()) {
      return failed(
          fmt::format("cannot find parameter {} in task input to fetch artifact uri", param));
    }
    const std::string& input = binding->second.component_input;
    const json& inputs = dag.Inputs();
    auto value = inputs.find(input);
    if (binding->second.kind != ir::ParameterBinding::Kind::kComponentInput ||
        value == inputs.end()) {
      return failed(fmt::format(
          "error resolving artifact URI: parent DAG does not have input parameter {}", input));
    }
    uri = value->is_string() ? value->get<std::string>() : std::string();
    if (uri.empty()) {
      return failed(fmt::format("empty artifact URI runtime value for parameter {}", param));
    }
  } else if (uri.empty()) {
    return failed("empty Artifact URI constant value");
  }
  if (comp.outputs.artifacts.size() != 1) {
    return Error{
        "failed to execute importer component: failed to extract output artifact name "
        "from componentOutputSpec"};
  }
  const auto& [name, def] = *comp.outputs.artifacts.begin();
  ArtifactMap& out = task.Rare().out_artifacts;
  out.clear();
  // KFP's importer records the URI and reads nothing, so any URI is
  // imported; what a step may read of it is confined: the local path is set
  // only when the URI maps below the artifact roots, else the artifact has
  // no local copy (under the stub executor an upstream URI is a stand-in).
  auto path = ir::LocalPathForUri(uri, artifact_roots);
  out[name] = {{name, uri, path.ok() ? std::move(*path) : std::string(),
                importer.schema_title.empty() ? def.schema_title : importer.schema_title,
                importer.schema_title.empty() ? def.schema_version : importer.schema_version,
                importer.metadata}};
  return Ok();
}

// k8s.go createPVC: the name is pvc_name, a UUID + pvc_name_suffix, or a
// UUID; access_modes and size are required. Locally a PVC is a folder.
Status Engine::Impl::CreatePvc(DagExec& dag, int i) {
  TaskExec& task = dag.tasks[i];
  auto text = [&task](const char* key) {
    auto it = task.params().find(key);
    return it != task.params().end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (!task.params().contains("access_modes") || task.params()["access_modes"].is_null()) {
    return Error{"failed to create pvc: parameter access_modes not provided"};
  }
  if (!task.params().contains("size") || task.params()["size"].is_null()) {
    return Error{"failed to create pvc: parameter volumeSize not provided"};
  }
  std::string name = text("pvc_name");
  std::string suffix = text("pvc_name_suffix");
  if (!name.empty() && !suffix.empty()) {
    return Error{
        "failed to create pvc: at most one of pvc_name and pvc_name_suffix can be "
        "non-empty"};
  }
  if (name.empty()) name = NewId() + suffix;
  if (Status s = CheckPvcName(name); !s.ok()) return s;
  if (!options.work_root.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(PvcDir(name), ec);
    if (ec) return Error{fmt::format("failed to create pvc {}: {}", name, ec.message())};
  }
  task.Outputs() = {{"name", name}};
  return Ok();
}

// k8s.go deletePVC: deletes the claim pvc_name names.
Status Engine::Impl::DeletePvc(DagExec& dag, int i) {
  TaskExec& task = dag.tasks[i];
  auto it = task.params().find("pvc_name");
  if (it == task.params().end() || !it->is_string() || it->get<std::string>().empty()) {
    return Error{"failed to delete pvc: parameter pvc_name not provided"};
  }
  const std::string name = it->get<std::string>();
  if (Status s = CheckPvcName(name); !s.ok()) return s;
  if (!options.work_root.empty()) {
    std::error_code ec;
    if (std::filesystem::remove_all(PvcDir(name), ec) == 0 || ec) {
      return Error{
          fmt::format("failed to delete pvc: persistentvolumeclaims \"{}\" not found", name)};
    }
  }
  return Ok();
}

std::filesystem::path Engine::Impl::PvcDir(const std::string& name) const {
  return options.work_root / "pvcs" / name;
}

}  // namespace kfpbench::engine
