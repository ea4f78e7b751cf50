// Identity of pypto's own saved profile: the SQLite file `pypto export-sqlite`
// writes (report/sqlite_export.cc) and the "pypto" importer reads back
// (docs/sqlite-schema.md, docs/formats/pypto-db.md). Kept apart from both so
// the writer, the reader and the Ascend sniffer agree on one definition.
#pragma once

#include <cstdint>
#include <string_view>

namespace pypto::pypto_db {

// meta.schema_version; bump on any incompatible table change. 2 added the raw
// model tables (profile_steps with the Ascend step breakdown, flows, counters)
// and the Ascend detail columns of device_tasks, so that a saved profile
// reproduces every figure of the original.
inline constexpr int kSchemaVersion = 2;
// meta.schema value: "pypto.sqlite/<version>".
inline constexpr std::string_view kSchemaName = "pypto.sqlite/2";
inline constexpr std::string_view kSchemaNamePrefix = "pypto.sqlite/";
// Oldest schema the importer reads (1 lacks flows, counters and the step
// breakdown: those come back empty, with a note).
inline constexpr int kOldestReadableSchemaVersion = 1;
// SQLite header application id (PRAGMA application_id, bytes 68..71 of the
// file): ASCII "PYPT". Lets a sniffer that sees only the first bytes tell a
// saved pypto profile from other SQLite files (Ascend profiler databases
// leave it 0).
inline constexpr uint32_t kApplicationId = 0x50595054;

}  // namespace pypto::pypto_db
