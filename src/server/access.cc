#include "server/access.h"

#include <fmt/format.h>

#include "server/api_util.h"

namespace kfpbench::server {
namespace {

constexpr const char* kPipelines = "pipelines";
constexpr const char* kExperiments = "experiments";
constexpr const char* kRuns = "runs";
constexpr const char* kJobs = "jobs";

// What a rule's finder is given.
struct Lookup {
  const http::Request& request;
  const http::PathParams& params;
  store::Store& store;
  const CreateBody* body;  // create routes: the body the handler will act on

  std::string Param(const char* name) const {
    auto it = params.find(name);
    return it == params.end() ? "" : it->second;
  }
};

using Finder = Result<AccessTarget> (*)(const Lookup&);

struct Rule {
  const char* route;
  const char* resource;  // empty: any authenticated caller
  const char* verb;
  Finder find;  // null: no namespace (healthz, metrics)
};

Error Wrapped(const Error& e, std::string_view context) {
  return Error{fmt::format("{}: {}", context, e.message), e.code};
}

// --- Namespaces of stored resources (resource_manager.go) ---

Result<AccessTarget> OfPipeline(const Lookup& l, const std::string& id) {
  auto p = l.store.GetPipeline(id);
  if (!p.ok()) {
    return Wrapped(p.error(), fmt::format("Failed to access pipeline {}. Check if it exists and "
                                          "have a namespace assigned",
                                          id));
  }
  return AccessTarget{"", "", p->namespace_, p->name, id};
}

Result<AccessTarget> OfExperiment(const Lookup& l, const std::string& id) {
  auto e = l.store.GetExperiment(id);
  if (!e.ok()) return Wrapped(e.error(), "Failed to authorize with the experiment ID");
  return AccessTarget{"", "", e->namespace_, e->display_name, id};
}

Result<AccessTarget> OfRun(const Lookup& l, const std::string& id) {
  auto run = l.store.GetRun(id);
  if (!run.ok())
    return Wrapped(run.error(), fmt::format("Failed to authorize with the run ID {}", id));
  // A run belongs to the namespace of its experiment.
  auto e = l.store.GetExperiment(run->experiment_id);
  if (!e.ok()) {
    return Error{fmt::format("run {} has an empty namespace and the parent experiment {} could "
                             "not be fetched: {}",
                             id, run->experiment_id, e.error().message),
                 kHttpBadRequest};
  }
  return AccessTarget{"", "", e->namespace_, run->display_name, id};
}

Result<AccessTarget> OfRecurringRun(const Lookup& l, const std::string& id) {
  auto r = l.store.GetRecurringRun(id);
  if (!r.ok()) return Wrapped(r.error(), "failed to authorize with the recurring run ID");
  std::string ns = r->namespace_;
  if (ns.empty()) {
    auto e = l.store.GetExperiment(r->experiment_id);
    if (!e.ok()) {
      return Error{fmt::format("recurring run {} has an empty namespace and the parent experiment "
                               "{} could not be fetched",
                               id, r->experiment_id),
                   kHttpInternalError};
    }
    ns = e->namespace_;
  }
  return AccessTarget{"", "", ns, r->display_name, id};
}

// GetValidExperimentNamespacePair: a run or recurring run is created in the
// namespace of its experiment, which multi-user mode requires.
Result<AccessTarget> OfNewRunIn(const Lookup& l, const std::string& experiment_id,
                                const std::string& claimed_namespace) {
  if (experiment_id.empty()) {
    return Error{"Experiment id can not be empty in multi-user mode", kHttpBadRequest};
  }
  auto e = OfExperiment(l, experiment_id);
  if (!e.ok()) return e.error();
  if (!claimed_namespace.empty() && claimed_namespace != e->namespace_) {
    return Error{fmt::format("Experiment {} belongs to namespace '{}' instead of '{}'",
                             experiment_id, e->namespace_, claimed_namespace),
                 kHttpBadRequest};
  }
  e->id.clear();
  return e;
}

// listRuns and listJobs: the experiment's namespace when one is named (and
// the namespace named with it must be the same), else the namespace's.
Result<AccessTarget> OfListIn(const Lookup& l, const std::string& experiment_id,
                              const std::string& namespace_) {
  if (experiment_id.empty()) return AccessTarget{"", "", namespace_, "", ""};
  auto e = OfExperiment(l, experiment_id);
  if (!e.ok()) return e.error();
  if (!namespace_.empty() && namespace_ != e->namespace_) {
    return Error{fmt::format("Failed to validate the namespace of experiment: experiment {} "
                             "belongs to namespace '{}' (claimed a different namespace '{}')",
                             experiment_id, e->namespace_, namespace_),
                 kHttpBadRequest};
  }
  return AccessTarget{"", "", e->namespace_, "", ""};
}

// v1beta1 lists' resource_reference_key: the id when its type is `type`.
std::string V1KeyOf(const http::Request& r, const char* type) {
  return r.Query("resource_reference_key.type") == type ? r.Query("resource_reference_key.id") : "";
}

AccessTarget In(std::string namespace_) {
  return AccessTarget{"", "", std::move(namespace_), "", ""};
}

// --- The finders, one per way a route names its namespace ---

Result<AccessTarget> QueryNamespace(const Lookup& l) { return In(l.request.Query("namespace")); }

Result<AccessTarget> PathPipeline(const Lookup& l) { return OfPipeline(l, l.Param("pipeline_id")); }
Result<AccessTarget> PathId(const Lookup& l,
                            Result<AccessTarget> (*of)(const Lookup&, const std::string&)) {
  return of(l, l.Param("id"));
}
Result<AccessTarget> V1PathPipeline(const Lookup& l) { return PathId(l, OfPipeline); }
Result<AccessTarget> V1PathExperiment(const Lookup& l) { return PathId(l, OfExperiment); }
Result<AccessTarget> V1PathRun(const Lookup& l) { return PathId(l, OfRun); }

Result<AccessTarget> V1PathVersion(const Lookup& l) {
  auto v = l.store.FindPipelineVersion(l.Param("version_id"));
  if (!v.ok()) return v.error();
  return OfPipeline(l, v->pipeline_id);
}

Result<AccessTarget> QueryPipelineId(const Lookup& l) {
  std::string id = l.request.Query("pipelineid");
  if (id.empty()) return Error{"the query parameter pipelineid is required", kHttpBadRequest};
  return OfPipeline(l, id);
}

Result<AccessTarget> V1QueryPipeline(const Lookup& l) {
  std::string id = l.request.Query("resource_key.id");
  if (id.empty()) return Error{"resource_key.id (the pipeline) is required", kHttpBadRequest};
  return OfPipeline(l, id);
}

Result<AccessTarget> PathExperiment(const Lookup& l) {
  return OfExperiment(l, l.Param("experiment_id"));
}
Result<AccessTarget> PathRun(const Lookup& l) { return OfRun(l, l.Param("run_id")); }
Result<AccessTarget> PathRecurringRun(const Lookup& l) {
  return OfRecurringRun(l, l.Param("recurring_run_id"));
}

// The body create_requests.h read, which the handler acts on: never a
// second reading of the bytes.
template <typename T>
Result<const T*> Parsed(const Lookup& l) {
  const T* body = l.body ? std::get_if<T>(l.body) : nullptr;
  if (!body)
    return Error{"the request body was not read before authorizing it", kHttpInternalError};
  return body;
}

Result<AccessTarget> OfCreateRun(const Lookup& l) {
  auto body = Parsed<NewRun>(l);
  if (!body.ok()) return body.error();
  return OfNewRunIn(l, (*body)->run.experiment_id, "");
}

Result<AccessTarget> OfCreateRecurringRun(const Lookup& l) {
  auto body = Parsed<NewRecurringRun>(l);
  if (!body.ok()) return body.error();
  const kfp::RecurringRun& r = (*body)->recurring_run;
  return OfNewRunIn(l, r.experiment_id, r.namespace_);
}

Result<AccessTarget> OfCreateExperiment(const Lookup& l) {
  auto body = Parsed<NewExperiment>(l);
  if (!body.ok()) return body.error();
  AccessTarget t = In((*body)->experiment.namespace_);
  t.name = (*body)->experiment.display_name;
  return t;
}

AccessTarget PipelineIn(const kfp::Pipeline& p) {
  AccessTarget t = In(p.namespace_);
  t.name = p.display_name;
  return t;
}

Result<AccessTarget> OfCreatePipeline(const Lookup& l) {
  auto body = Parsed<NewPipeline>(l);
  if (!body.ok()) return body.error();
  return PipelineIn((*body)->pipeline);
}

Result<AccessTarget> OfCreatePipelineAndVersion(const Lookup& l) {
  auto body = Parsed<NewPipelineAndVersion>(l);
  if (!body.ok()) return body.error();
  return PipelineIn((*body)->pipeline);
}

Result<AccessTarget> OfV1CreateRun(const Lookup& l) {
  auto body = Parsed<V1NewRun>(l);
  if (!body.ok()) return body.error();
  return OfNewRunIn(l, (*body)->run.experiment_id, (*body)->namespace_);
}

Result<AccessTarget> ListIn(const Lookup& l) {
  return OfListIn(l, l.request.Query("experiment_id"), l.request.Query("namespace"));
}

Result<AccessTarget> V1KeyNamespace(const Lookup& l) { return In(V1KeyOf(l.request, "NAMESPACE")); }

Result<AccessTarget> V1ListRunsIn(const Lookup& l) {
  return OfListIn(l, V1KeyOf(l.request, "EXPERIMENT"), V1KeyOf(l.request, "NAMESPACE"));
}

// Every route of Handlers::Register, with what KFP's server for it checks.
constexpr Rule kRules[] = {
    {"GetMetrics", "", "", nullptr},
    {"GetHealthz", "", "", nullptr},
    {"V1GetHealthz", "", "", nullptr},

    {"UploadPipeline", kPipelines, "create", QueryNamespace},
    {"UploadPipelineVersion", kPipelines, "create", QueryPipelineId},
    {"CreatePipelineAndVersion", kPipelines, "create", OfCreatePipelineAndVersion},
    {"CreatePipeline", kPipelines, "create", OfCreatePipeline},
    {"ListPipelines", kPipelines, "list", QueryNamespace},
    {"GetPipelineByName", kPipelines, "get", QueryNamespace},
    {"GetPipeline", kPipelines, "get", PathPipeline},
    {"UpdatePipeline", kPipelines, "update", PathPipeline},
    {"DeletePipeline", kPipelines, "delete", PathPipeline},
    {"ListPipelineVersions", kPipelines, "list", PathPipeline},
    {"CreatePipelineVersion", kPipelines, "create", PathPipeline},
    {"GetPipelineVersion", kPipelines, "get", PathPipeline},
    {"UpdatePipelineVersion", kPipelines, "update", PathPipeline},
    {"DeletePipelineVersion", kPipelines, "delete", PathPipeline},

    {"CreateExperiment", kExperiments, "create", OfCreateExperiment},
    {"ListExperiments", kExperiments, "list", QueryNamespace},
    {"GetExperiment", kExperiments, "get", PathExperiment},
    {"DeleteExperiment", kExperiments, "delete", PathExperiment},
    {"ArchiveExperiment", kExperiments, "archive", PathExperiment},
    {"UnarchiveExperiment", kExperiments, "unarchive", PathExperiment},

    {"CreateRun", kRuns, "create", OfCreateRun},
    {"ListRuns", kRuns, "list", ListIn},
    {"GetRun", kRuns, "get", PathRun},
    {"DeleteRun", kRuns, "delete", PathRun},
    {"ArchiveRun", kRuns, "archive", PathRun},
    {"UnarchiveRun", kRuns, "unarchive", PathRun},
    {"TerminateRun", kRuns, "terminate", PathRun},
    {"RetryRun", kRuns, "retry", PathRun},
    {"ReadArtifact", kRuns, "readArtifact", PathRun},

    {"CreateRecurringRun", kJobs, "create", OfCreateRecurringRun},
    {"ListRecurringRuns", kJobs, "list", ListIn},
    {"GetRecurringRun", kJobs, "get", PathRecurringRun},
    {"DeleteRecurringRun", kJobs, "delete", PathRecurringRun},
    {"EnableRecurringRun", kJobs, "enable", PathRecurringRun},
    {"DisableRecurringRun", kJobs, "disable", PathRecurringRun},

    {"V1UploadPipeline", kPipelines, "create", QueryNamespace},
    {"V1ListPipelines", kPipelines, "list", V1KeyNamespace},
    {"V1GetPipeline", kPipelines, "get", V1PathPipeline},
    {"V1DeletePipeline", kPipelines, "delete", V1PathPipeline},
    {"V1ListPipelineVersions", kPipelines, "list", V1QueryPipeline},
    {"V1DeletePipelineVersion", kPipelines, "delete", V1PathVersion},
    {"V1CreateExperiment", kExperiments, "create", OfCreateExperiment},
    {"V1ListExperiments", kExperiments, "list", V1KeyNamespace},
    {"V1GetExperiment", kExperiments, "get", V1PathExperiment},
    {"V1DeleteExperiment", kExperiments, "delete", V1PathExperiment},
    {"V1CreateRun", kRuns, "create", OfV1CreateRun},
    {"V1ListRuns", kRuns, "list", V1ListRunsIn},
    {"V1GetRun", kRuns, "get", PathRun},
    {"V1DeleteRun", kRuns, "delete", V1PathRun},
    {"V1ReadArtifact", kRuns, "readArtifact", PathRun},
};

const Rule* RuleOf(std::string_view route) {
  for (const auto& rule : kRules) {
    if (route == rule.route) return &rule;
  }
  return nullptr;
}

// The message a resource's canAccess* gives for an empty namespace.
const char* EmptyNamespaceMessage(std::string_view resource) {
  if (resource == kExperiments)
    return "An experiment cannot have an empty namespace in multi-user mode";
  if (resource == kRuns) return "A run cannot have an empty namespace in multi-user mode";
  return "a recurring run cannot have an empty namespace in multi-user mode";
}

// How each resource's canAccess* wraps IsAuthorized's error.
std::string DeniedContext(const AccessTarget& t) {
  if (t.resource == kRuns) {
    return fmt::format("Failed to access run {}. Check if you have access to namespace {}", t.id,
                       t.namespace_);
  }
  if (t.resource == kPipelines) {
    return fmt::format("Failed to access pipeline {}. Check if you have access to namespace {}",
                       t.id, t.namespace_);
  }
  if (t.resource == kJobs) return "failed to authorize with API";
  return "Failed to authorize with API";
}

}  // namespace

std::vector<std::string_view> AccessRuleRoutes() {
  std::vector<std::string_view> out;
  for (const auto& rule : kRules) out.emplace_back(rule.route);
  return out;
}

Result<AccessTarget> AccessTargetOf(std::string_view route, const http::Request& request,
                                    const http::PathParams& params, store::Store& store,
                                    const CreateBody* body) {
  const Rule* rule = RuleOf(route);
  if (!rule) {
    return Error{fmt::format("{} has no authorization rule in multi-user mode", route),
                 kHttpForbidden};
  }
  AccessTarget target;
  if (rule->find) {
    auto found = rule->find(Lookup{request, params, store, body});
    if (!found.ok()) return found.error();
    target = std::move(*found);
  }
  target.resource = rule->resource;
  target.verb = rule->verb;
  return target;
}

std::optional<http::Response> CheckAccess(const AccessTarget& target, const Caller& caller,
                                          const Authenticator& auth) {
  if (target.resource.empty()) return std::nullopt;
  AccessTarget t = target;
  if (t.namespace_.empty() || t.namespace_ == "-") {
    if (t.resource != kPipelines) {
      std::string message = EmptyNamespaceMessage(t.resource);
      return UserErrorResponse(kHttpBadRequest, "Invalid input error: " + message, message);
    }
    // Shared pipelines: KFP lets anyone read them; writing them needs
    // KFP's own namespace.
    if (t.verb == "get" || t.verb == "list") return std::nullopt;
    t.namespace_ = auth.config().shared_namespace;
  }
  if (caller.user.empty()) {
    // resource_manager.go, IsAuthorized: no authenticator found a user.
    constexpr const char* kEmpty =
        "Failed to check authorization. User identity is empty in the request header";
    return UserErrorResponse(
        kHttpUnauthorized,
        fmt::format("Failed to authorize with API: Unauthenticated: {}: {}", kEmpty,
                    caller.no_user.empty() ? "no user" : caller.no_user),
        kEmpty);
  }
  if (auth.Allows(caller.user, t.namespace_)) return std::nullopt;
  // resource_manager.go, IsAuthorized: a SubjectAccessReview that says no.
  std::string external = fmt::format(
      "User '{}' is not authorized with reason: namespace '{}' is not among the user's namespaces "
      "in the policy file (request: &ResourceAttributes{{Namespace:{},Verb:{},Group:pipelines."
      "kubeflow.org,Version:v1beta1,Resource:{},Subresource:,Name:{},}})",
      caller.user, t.namespace_, t.namespace_, t.verb, t.resource, t.name);
  std::string context = target.namespace_.empty()
                            ? fmt::format(
                                  "Failed to access shared pipeline {}. Check if you have "
                                  "permission to {} shared pipelines",
                                  t.id, t.verb)
                            : DeniedContext(t);
  return UserErrorResponse(
      kHttpForbidden,
      fmt::format("{}: PermissionDenied: {}: Unauthorized access", context, external), external);
}

std::optional<http::Response> Authorize(std::string_view route, const http::Request& request,
                                        const http::PathParams& params, store::Store& store,
                                        const CreateBody* body, const Caller& caller,
                                        const Authenticator& auth) {
  auto target = AccessTargetOf(route, request, params, store, body);
  if (!target.ok()) return ErrorResponse(target.error());
  return CheckAccess(*target, caller, auth);
}

}  // namespace kfpbench::server
