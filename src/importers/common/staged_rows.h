// Rows a parse thread read into a profile of its own, appended to the import's
// profile in file order.
//
// The JSON importers parse events on several threads (json_stream::
// StreamJsonEventsParallel). Each thread writes rows into a thread-local
// Profile with its own string ids and track rows: one shared string table
// would need a lock per string, and names repeat so much that each local table
// stays small. At each commit the reader thread interns the thread's new
// strings, resolves its new tracks (each importer has its own rules for
// those), then appends the rows with both remapped.
#pragma once

#include <cstdint>
#include <vector>

#include "model/profile.h"

namespace pypto::staged_rows {

// Interns into `to` the strings `from` added since the last call, in their
// first-seen order, extending `remap` (from's StrId -> to's StrId). The
// remap persists across commits: the local table keeps its strings.
void ExtendStringRemap(const Profile& from, Profile* to, std::vector<StrId>* remap);

// Appends from's host ops, device tasks (with their details), attributes,
// flows, counters and data loss to `to`. String ids go through `strings`,
// track rows through `tracks`; an attribute owned by a host op or device task
// follows its owner's new row.
void Append(const Profile& from, const std::vector<StrId>& strings, const std::vector<uint32_t>& tracks,
            Profile* to);

// Empties the tables Append copies (capacity kept: the next batch is about as
// big). Strings and tracks stay, with their remaps.
void Clear(Profile* from);

}  // namespace pypto::staged_rows
