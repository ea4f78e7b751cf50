// Ascend profiler SQLite export importer: torch_npu `ascend_pytorch_profiler[_{rank}].db`
// and msprof `msprof_{ts}.db` (same schema family). Opened read-only and
// immutable; every text column is an id into STRING_IDS. How connection ids
// become correlation / external ids: docs/formats/ascend-db.md.
#pragma once

#include <string>

#include "importers/importer.h"

namespace pypto {

// Importer name "ascend-db".
const Importer* AscendDbImporter();

// Reads one profiler database into `profile` (which may already hold other
// files of the same run). Fails with a clear message when the file is not an
// SQLite database, is corrupt, or lacks a required table.
Status ImportAscendDb(const std::string& path, const ImportOptions& options, Profile* profile);

}  // namespace pypto
