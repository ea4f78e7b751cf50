#include "importers/kineto/kineto_importer.h"

namespace pypto {
namespace {

class Kineto final : public Importer {
 public:
  std::string_view name() const override { return "kineto"; }
  std::string_view description() const override { return "PyTorch profiler / Kineto Chrome trace (.json, .json.gz)"; }
  int Sniff(const SniffInput& input) const override { return 0; }
  Status Import(const std::string& path, const ImportOptions& options, Profile* profile) const override {
    return InternalError("kineto importer not implemented yet");
  }
};

}  // namespace

const Importer* KinetoImporter() {
  static const Kineto importer;
  return &importer;
}

}  // namespace pypto
