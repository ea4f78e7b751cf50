
#include <string>

#include "advisor/optimizers.h"
#include "io/output_file.h"

namespace pypto::advisor {

Status WriteArtifactFile(const std::string& path, std::string_view text, bool force) {
  return io::WriteTextFile(path, text, force);
}

}  // namespace pypto::advisor
