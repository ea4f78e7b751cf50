#include "io/file_mapping.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "io/file.h"

namespace pypto::io {
namespace {

class FileMappingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pypto_mapping_test_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& data) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }
  std::string dir_;
};

// Bytes that differ from page to page, so that a page read from the wrong
// place shows.
std::string Pattern(size_t n) {
  std::string text(n, '\0');
  for (size_t i = 0; i < n; ++i) text[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return text;
}

TEST_F(FileMappingTest, PlainFileMapsToItsBytesGzipAndEmptyOnesDoNot) {
  const std::string text = Pattern(3 * 4096 + 123);
  auto source = OpenByteSource(Write("plain.json", text));
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::unique_ptr<FileMapping> mapping = (*source)->MapWhole();
  ASSERT_NE(mapping, nullptr);
  ASSERT_EQ(mapping->size(), text.size());
  EXPECT_EQ(std::string(mapping->data(), mapping->size()), text);
  EXPECT_TRUE(mapping->Intact().ok());

  // Gzip input is inflated as it is read: nothing to parse in place.
  const std::string gz_path = dir_ + "/t.json.gz";
  gzFile gz = gzopen(gz_path.c_str(), "wb");
  gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
  auto gzip = OpenByteSource(gz_path);
  ASSERT_TRUE(gzip.ok());
  EXPECT_EQ((*gzip)->MapWhole(), nullptr);

  // An empty file has nothing to map: the caller reads (and finds it empty).
  auto empty = OpenByteSource(Write("empty.json", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->MapWhole(), nullptr);
}

TEST_F(FileMappingTest, ReleasedPagesReadBackTheSameBytes) {
  // ReleaseBefore drops this process's pages, not the file's: a byte read
  // again afterwards comes back from the page cache unchanged.
  const std::string text = Pattern(10 * 4096);
  auto source = OpenByteSource(Write("r.json", text));
  ASSERT_TRUE(source.ok());
  std::unique_ptr<FileMapping> mapping = (*source)->MapWhole();
  ASSERT_NE(mapping, nullptr);
  mapping->ReleaseBefore(5 * 4096 + 100);
  mapping->ReleaseBefore(2 * 4096);  // behind what is released already: nothing
  mapping->ReleaseBefore(~uint64_t{0});  // past the end: up to the end
  EXPECT_EQ(std::string(mapping->data(), mapping->size()), text);
}

TEST_F(FileMappingTest, FileShrunkWhileMappedReadsZerosAndSaysSo) {
  // Another process truncates the file under the mapping: the pages past the
  // new end would raise SIGBUS. They read as zeros instead, and Intact()
  // names the file. 4 pages, cut to 1 page and 10 bytes: bytes from page 2 on
  // are past the end (the rest of page 1 is zeros by the kernel's rule for a
  // file's last page).
  const std::string text = Pattern(4 * 4096);
  const std::string path = Write("shrinks.json", text);
  auto source = OpenByteSource(path);
  ASSERT_TRUE(source.ok());
  std::unique_ptr<FileMapping> mapping = (*source)->MapWhole();
  ASSERT_NE(mapping, nullptr);
  ASSERT_EQ(::truncate(path.c_str(), 4096 + 10), 0);
  const volatile char* bytes = mapping->data();
  EXPECT_EQ(bytes[0], text[0]);
  EXPECT_EQ(bytes[4096 + 9], text[4096 + 9]);
  EXPECT_TRUE(mapping->Intact().ok());  // nothing past the end read yet
  EXPECT_EQ(bytes[3 * 4096 + 5], '\0');
  EXPECT_EQ(bytes[2 * 4096], '\0');
  Status intact = mapping->Intact();
  ASSERT_FALSE(intact.ok());
  EXPECT_NE(intact.message().find(path), std::string::npos) << intact.ToString();
  EXPECT_NE(intact.message().find("shrank while it was read"), std::string::npos) << intact.ToString();

  // A later mapping in the same slot starts intact.
  mapping.reset();
  auto again = OpenByteSource(Write("whole.json", text));
  ASSERT_TRUE(again.ok());
  std::unique_ptr<FileMapping> fresh = (*again)->MapWhole();
  ASSERT_NE(fresh, nullptr);
  EXPECT_TRUE(fresh->Intact().ok());
}

}  // namespace
}  // namespace pypto::io
