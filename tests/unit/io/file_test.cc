#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "io/file.h"
#include "io/file_mapping.h"

namespace pypto::io {
namespace {

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pypto_io_test_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& data) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }
  std::string WriteGzip(const std::string& name, const std::string& data) {
    std::string path = dir_ + "/" + name;
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
    gzclose(f);
    return path;
  }
  std::string dir_;
};

TEST_F(FileTest, ReadsPlainFile) {
  auto data = ReadWholeFile(Write("a.json", "{\"x\":1}"));
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(*data, "{\"x\":1}");
}

TEST_F(FileTest, SniffsGzipByContentNotExtension) {
  std::string payload(100000, 'a');
  std::string path = WriteGzip("trace.json", payload);  // gzip without .gz suffix
  auto data = ReadWholeFile(path);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(*data, payload);
}

TEST_F(FileTest, ConcatenatedGzipMembersAreRead) {
  std::string path = dir_ + "/multi.gz";
  for (const char* part : {"hello ", "world"}) {
    gzFile f = gzopen(path.c_str(), "ab");
    gzwrite(f, part, static_cast<unsigned>(std::string(part).size()));
    gzclose(f);
  }
  auto data = ReadWholeFile(path);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(*data, "hello world");
}

TEST_F(FileTest, TruncatedGzipNamesFileAndOffset) {
  std::string payload(200000, 'b');
  for (size_t i = 0; i < payload.size(); i += 7) payload[i] = static_cast<char>('a' + i % 26);
  std::string path = WriteGzip("t.gz", payload);
  auto full = ReadWholeFile(path, {});
  ASSERT_TRUE(full.ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string cut = Write("cut.gz", bytes.substr(0, bytes.size() / 2));
  auto data = ReadWholeFile(cut);
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.status().message().find("cut.gz"), std::string::npos);
  EXPECT_NE(data.status().message().find("truncated"), std::string::npos);
}

TEST_F(FileTest, GzipBombIsRefused) {
  std::string zeros(512u << 20, '\0');  // 512 MiB of zeros compresses ~1000x
  std::string path = WriteGzip("bomb.gz", zeros);
  zeros.clear();
  zeros.shrink_to_fit();
  Limits limits;
  auto source = OpenByteSource(path, limits);
  ASSERT_TRUE(source.ok());
  std::string buf(1 << 20, '\0');
  Status last;
  for (int i = 0; i < 1024; ++i) {
    auto n = (*source)->Read(buf.data(), buf.size());
    if (!n.ok()) { last = n.status(); break; }
    if (*n == 0) break;
  }
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.code(), StatusCode::kLimitExceeded);
  EXPECT_NE(last.message().find("gzip bomb"), std::string::npos);
}

TEST_F(FileTest, SymlinksAreNotFollowedByDefault) {
  std::string target = Write("real.json", "[]");
  std::string link = dir_ + "/link.json";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  auto refused = ReadWholeFile(link);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("symbolic link"), std::string::npos);
  Limits follow;
  follow.follow_symlinks = true;
  EXPECT_TRUE(ReadWholeFile(link, follow).ok());
  EXPECT_EQ(GetPathKind(link), PathKind::kSymlink);
}

TEST_F(FileTest, MissingFileAndDirectoryErrorsNameThePath) {
  auto missing = ReadWholeFile(dir_ + "/nope.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.json"), std::string::npos);
  auto dir = ReadWholeFile(dir_);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("is a directory"), std::string::npos);
}

TEST_F(FileTest, SizeCapIsEnforced) {
  std::string path = Write("big.json", std::string(1000, ' '));
  Limits limits;
  limits.max_input_bytes = 999;
  auto r = OpenByteSource(path, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
}

TEST_F(FileTest, ListDirectoryIsSorted) {
  Write("b", "");
  Write("a", "");
  auto entries = ListDirectory(dir_);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "a");
  EXPECT_EQ((*entries)[1].kind, PathKind::kFile);
}

// Bytes that differ from page to page, so that a page read from the wrong
// place shows.
std::string Pattern(size_t n) {
  std::string text(n, '\0');
  for (size_t i = 0; i < n; ++i) text[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return text;
}

TEST_F(FileTest, MappedPlainFileHoldsItsBytesGzipAndEmptyOnesAreNotMapped) {
  const std::string text = Pattern(3 * 4096 + 123);
  auto source = OpenByteSource(Write("plain.json", text));
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::unique_ptr<FileMapping> mapping = (*source)->MapWhole();
  ASSERT_NE(mapping, nullptr);
  ASSERT_EQ(mapping->size(), text.size());
  EXPECT_EQ(std::string(mapping->data(), mapping->size()), text);
  EXPECT_TRUE(mapping->Intact().ok());

  // Gzip input is inflated as it is read: nothing to parse in place.
  auto gzip = OpenByteSource(WriteGzip("t.json.gz", text));
  ASSERT_TRUE(gzip.ok());
  EXPECT_EQ((*gzip)->MapWhole(), nullptr);

  // An empty file has nothing to map: the caller reads (and finds it empty).
  auto empty = OpenByteSource(Write("empty.json", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->MapWhole(), nullptr);
}

TEST_F(FileTest, MappedPagesReleasedReadBackTheSameBytes) {
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

TEST_F(FileTest, MappedFileShrunkUnderTheMappingReadsZerosAndSaysSo) {
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
