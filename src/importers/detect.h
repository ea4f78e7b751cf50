// Format detection and loading: the one entry point front ends call to turn a
// path (file or directory) into a Profile.
#pragma once

#include <string>
#include <vector>

#include "importers/importer.h"

namespace pypto {

// Every importer pypto has, in detection order.
const std::vector<const Importer*>& AllImporters();
const Importer* FindImporter(std::string_view name);

// How many leading bytes sniffers may look at.
inline constexpr size_t kSniffPrefixBytes = 4096;

// Which importer would read `path`, or an error naming the path and reason.
StatusOr<const Importer*> DetectFormat(const std::string& path, const ImportOptions& options = {});

// Detects and imports `path`. Sets metadata "format" and "source_path".
StatusOr<Profile> LoadProfile(const std::string& path, const ImportOptions& options = {});

}  // namespace pypto
