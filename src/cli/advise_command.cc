#include "cli/advise_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <simdjson.h>

#include "advisor/advise_profile.h"
#include "advisor/optimizers.h"
#include "advisor/tuning_advisor.h"
#include "analysis/structure.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "io/file.h"
#include "report/advice_report.h"
#include "session/profile_session.h"

namespace pypto::cli {
namespace {

int Fail(const Status& s) {
  std::fprintf(stderr, "pypto: error: %s\n", s.ToString().c_str());
  return ExitCodeFor(s.code());
}

void AddModelOptions(CLI::App* cmd, ModelConfigArgs* m) {
  cmd->add_option("--model-config", m->config_json,
                  "A transformers config.json (num_attention_heads, num_key_value_heads, hidden_size, …)");
  cmd->add_option("--model-arch", m->model.arch, "Model architecture (llama, qwen, …): selects arch-specific rules");
  cmd->add_option("--num-layers", m->model.num_layers, "Decoder layers")->check(CLI::PositiveNumber);
  cmd->add_option("--num-heads", m->model.num_heads, "Query heads")->check(CLI::PositiveNumber);
  cmd->add_option("--num-kv-heads", m->model.num_kv_heads, "KV heads (GQA)")->check(CLI::PositiveNumber);
  cmd->add_option("--head-dim", m->model.head_dim, "Head dimension")->check(CLI::PositiveNumber);
  cmd->add_option("--hidden", m->model.hidden, "Model dimension")->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", m->model.dtype, "Weights / activations dtype (bf16, fp16, fp32)");
  cmd->add_option("--max-seq", m->model.max_seq, "KV-cache capacity in tokens")->check(CLI::PositiveNumber);
}

// Flags, then config.json: the user's model config.
StatusOr<advisor::ModelConfig> UserModel(const ModelConfigArgs& args) {
  advisor::ModelConfig m = args.model;
  const bool any = !m.arch.empty() || m.num_layers > 0 || m.num_heads > 0 || m.num_kv_heads > 0 || m.head_dim > 0 ||
                   m.hidden > 0 || !m.dtype.empty() || m.max_seq > 0;
  if (any) m.source = "command line";
  if (!args.config_json.empty()) {
    PYPTO_ASSIGN_OR_RETURN(advisor::ModelConfig file, advisor::ReadHfConfigFile(args.config_json));
    m.FillFrom(file);
  }
  advisor::CompleteDerivedFields(&m);
  return m;
}

}  // namespace

CLI::App* AddAdviseCommand(CLI::App* app, AdviseArgs* args) {
  CLI::App* cmd = app->add_subcommand(
      "advise",
      "Diagnose the profile, then print recommendations ranked by estimated end-to-end speedup: the\n"
      "remedy per issue from the rule library (code, env var, config or command, prerequisite, gain and\n"
      "its source), with the evidence; with -o DIR also write the artifacts that apply them (AOE\n"
      "tuning input and script, padded GEMM shapes, KV-cache layout patch, norm fusion plan).");
  auto* fmt_group = cmd->add_option_group("output");
  fmt_group->add_flag("--json", args->json, "Print JSON (schema \"pypto.advise/1\", see docs/advisor.md)");
  fmt_group->add_flag("--markdown", args->markdown, "Print a Markdown report");
  fmt_group->require_option(0, 1);
  cmd->add_option("-o,--output-dir", args->output_dir, "Write the artifacts into DIR (created if missing)");
  cmd->add_flag("--force", args->force, "Overwrite existing artifacts in DIR (default: refuse)");
  cmd->add_option("--backend", args->backend, "Advise for this backend instead of the detected one")
      ->check(CLI::IsMember({"ascend", "cuda", "rocm", "cpu"}));
  cmd->add_option("--hardware", args->options.hardware_name,
                  "Use this hardware table entry (910B3, H100, MI300X, …) instead of detecting it");
  cmd->add_option("--tiling-utilization-threshold", args->options.tiling_utilization_threshold,
                  "Matmul utilisation below which tiling is examined")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--step", args->step, "Diagnose only step N (ProfilerStep#N / Step Id); default: all steps");
  AddModelOptions(cmd, &args->model);
  cmd->footer(ExitCodeHelp());
  return cmd;
}

int RunAdvise(const AdviseArgs& args, const std::string& path, const ImportOptions& import,
              TerminalProgress* progress) {
  StatusOr<advisor::ModelConfig> user = UserModel(args.model);
  if (!user.ok()) return Fail(user.status());
  StatusOr<std::unique_ptr<ProfileSession>> session = ProfileSession::Open(path, import);
  progress->Working("advising");
  if (Interrupted()) {
    progress->Finish();
    std::fprintf(stderr, "pypto: error: interrupted by Ctrl-C while reading %s\n", path.c_str());
    return kExitCancelled;
  }
  if (!session.ok()) {
    progress->Finish();
    return Fail(session.status());
  }
  advisor::AdviseProfileOptions options;
  options.diagnose = args.options;
  options.diagnose.step = args.step;
  options.user_model = *user;
  options.advise.backend = args.backend;
  options.output_dir = args.output_dir;
  options.force = args.force;
  StatusOr<advisor::AdviseProfileResult> result = (*session)->Advise(options);
  progress->Finish();
  if (!result.ok()) return Fail(result.status());
  const advisor::AdviceReport* advice = &result->advice;
  const std::string text = args.json       ? report::RenderAdviceJson(*advice)
                           : args.markdown ? report::RenderAdviceMarkdown(*advice)
                                           : report::RenderAdviceText(*advice);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) return Fail(IoError("standard output: write failed"));
  return kExitOk;
}

CLI::App* AddKvPatchCommand(CLI::App* app, KvPatchArgs* args) {
  CLI::App* cmd = app->add_subcommand(
      "kv-patch",
      "Write the KV-cache layout patch (a Python module with apply_kv_cache_layout_optimization(model):\n"
      "preallocated BNSD cache, in-place writes instead of torch.cat) for a model config, without a profile.");
  cmd->add_option("-o,--output", args->output, "Python file to write (e.g. kv_cache_layout_patch.py)")->required();
  cmd->add_flag("--force", args->force, "Overwrite OUT if it exists (default: refuse)");
  AddModelOptions(cmd, &args->model);
  cmd->footer(ExitCodeHelp());
  return cmd;
}

int RunKvPatch(const KvPatchArgs& args) {
  StatusOr<advisor::ModelConfig> model = UserModel(args.model);
  if (!model.ok()) return Fail(model.status());
  StatusOr<advisor::LayoutPatch> patch = advisor::KVCacheLayoutOptimizer(*model).GenerateLayoutTransformPatch();
  if (!patch.ok()) return Fail(patch.status());
  if (Status s = patch->Save(args.output, args.force); !s.ok()) return Fail(s);
  std::printf("wrote %s\n", args.output.c_str());
  return kExitOk;
}

}  // namespace pypto::cli
