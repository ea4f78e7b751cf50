// `msprof op` output: the single-operator profile of one Ascend C kernel
// (CANN's operator-tuning mode, not a timeline). Each run writes a folder
// (OPPROF_<time>_<id>/, which users often rename) holding
//   OpBasicInfo.csv        one row per kernel: Op Name, Op Type (vector / cube /
//                          mix), Task Duration(us), Block Dim, Mix Block Dim,
//                          Device Id, Pid, Current Freq, Rated Freq (MHz)
//   PipeUtilization.csv, Memory.csv, MemoryL0.csv, MemoryUB.csv, L2Cache.csv,
//   ArithmeticUtilization.csv, ResourceConflictRatio.csv
//                          one row per core block (block_id, sub_block_id),
//                          aic_* / aiv_* columns, "NA" for the core type not used
// Every line ends with a comma (an empty last column): the real format.
//
// Each kernel becomes one device task of its device (no start time is given:
// kernels are laid end to end from 0, clock "relative"); the block rows are
// folded into task attributes named as kernel_details.csv names its PMU
// columns (aiv_vec_ratio, aiv_mte2_ratio …): ratios, rates, bandwidths and
// times averaged over the blocks, counts (cycles, instructions, data, cache
// hits) summed. Format notes: docs/formats/ascend.md.
#pragma once

#include "importers/importer.h"

namespace pypto {

// Importer name "msprof-op".
const Importer* MsprofOpImporter();

}  // namespace pypto
