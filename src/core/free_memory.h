// Giving freed heap pages back to the system between phases.
//
// glibc serves an allocation above its mmap threshold (128 KiB at start) with
// a mapping of its own, but raises that threshold to the size of each such
// block freed (up to 32 MiB). After the import has freed its staging buffers,
// the working arrays of later phases therefore come from the heap, and when
// they are freed their pages stay resident in the heap's middle until they are
// reused. A path over a whole trace without steps builds 20 MB of arrays after
// the builder's transient ones were freed: without giving those back, the
// peak was 6-7 MB above the live data (no-step bench shape, 300 MB).
#pragma once

namespace pypto {

// Returns the pages of every free heap chunk to the system (glibc's
// malloc_trim); a walk over the free chunks, well under a millisecond. Does
// nothing with other C libraries.
void ReleaseFreeHeapPages();

}  // namespace pypto
