// Splitting alone: every record of a CSV file read through csv::CsvReader,
// on one thread (NextRecord, byte by byte) and read ahead (the helper thread
// splits plain records in its buffer), nothing done with the cells. Prints
// the median of a few rounds of each, so that a change to the splitter is
// measured apart from the importer's work on the rows.
//
//   csv_split FILE [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "importers/common/csv_reader.h"

namespace {

struct Round {
  double ms = 0;
  size_t records = 0, cells = 0;
};

// One pass over `path`; false (with the error printed) when it cannot be read.
bool ReadAll(const std::string& path, bool read_ahead, Round* out) {
  const auto start = std::chrono::steady_clock::now();
  auto opened = pypto::csv::CsvReader::Open(path);
  if (!opened.ok()) {
    std::fprintf(stderr, "csv_split: %s\n", opened.status().ToString().c_str());
    return false;
  }
  pypto::csv::CsvReader& reader = **opened;
  bool first = true;
  while (true) {
    auto more = reader.Next();
    if (!more.ok()) {
      std::fprintf(stderr, "csv_split: %s\n", more.status().ToString().c_str());
      return false;
    }
    if (!*more) break;
    ++out->records;
    out->cells += reader.size();
    if (first && read_ahead) reader.StartReadAhead({});  // after the header, as the importer does
    first = false;
  }
  out->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: csv_split FILE [ROUNDS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  for (const bool read_ahead : {false, true}) {
    std::vector<double> ms;
    Round last;
    for (int r = 0; r < rounds; ++r) {
      Round round;
      if (!ReadAll(path, read_ahead, &round)) return 1;
      ms.push_back(round.ms);
      last = round;
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::error_code error;
    const double megabytes = static_cast<double>(std::filesystem::file_size(path, error)) / 1e6;
    std::printf("csv split, %s: %zu records, %zu cells, median %.1f ms of %d rounds (%.1f-%.1f ms), %.0f MB/s\n",
                read_ahead ? "read ahead" : "one thread", last.records, last.cells, median, rounds, ms.front(),
                ms.back(), error ? 0.0 : megabytes / (median / 1000));
  }
  return 0;
}
