// pypto's own saved profile: the SQLite file `pypto export-sqlite` writes
// (ProfileResults.save), read back into the model so that every command runs
// on it as on the original input. Tables and columns: docs/sqlite-schema.md;
// what is kept and what is recomputed: docs/formats/pypto-db.md.
#pragma once

#include <string>

#include "importers/importer.h"
#include "importers/pypto_db/pypto_db_format.h"

namespace pypto {

// Importer name "pypto".
const Importer* PyptoDbImporter();

// Reads one saved profile into `profile` (which may already hold data). Sets
// metadata "format" = "pypto" and keeps the original format as
// "source_format". Fails with a message naming the file, the table, the row and
// the reason when the file is not a saved profile or a row cannot be trusted.
Status ImportPyptoDb(const std::string& path, const ImportOptions& options, Profile* profile);

}  // namespace pypto
