#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "io/file.h"

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

}  // namespace
}  // namespace pypto::io
