// io/files.hpp, the one way gdap opens a caller's files: reads take regular files only and never
// block (a FIFO, a device, a directory are refused by name), whole-file reads are bounded, the
// command-line tool's stream reads stop at their limit (/dev/zero), and writes go through a fresh
// temporary that is removed on failure and renamed over (never written through) a planted link.
// Each case names the rule it checks (issue 27, items 10, 11, 12, 15).
#include "io/files.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace {

namespace fs = std::filesystem;
using gdap::io::Dir;
using gdap::io::NewFile;

fs::path fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("gdap_files_test_" + std::to_string(getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `body`, expecting gdap::Error with GDAP_ERR_IO and `words` in its message.
void expect_io_error(const std::function<void()>& body, const std::string& words, const char* rule) {
  const gdap_status s = gdap::guard(body);
  EXPECT_EQ(s, GDAP_ERR_IO) << rule << ": " << gdap_last_error();
  EXPECT_NE(std::string(gdap_last_error()).find(words), std::string::npos)
      << rule << ": message '" << gdap_last_error() << "' lacks '" << words << "'";
}

TEST(Files, ReadsTakeRegularFilesOnly) {
  const fs::path dir = fresh_dir("read");
  put(dir / "file", "abc");
  fs::create_symlink(dir / "file", dir / "link");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  fs::create_directory(dir / "folder");
  struct Case {
    const char* rule;
    fs::path path;
    const char* words;
  };
  const Case refused[] = {
      {"a FIFO is refused at once, never waited on", dir / "fifo", "is a FIFO (named pipe), not a regular file"},
      {"a directory is no file (no 'absent chunk')", dir / "folder", "is a directory, not a regular file"},
      {"a device is refused without being opened", "/dev/zero", "is a character device, not a regular file"},
      {"a missing file, when one is required", dir / "none", "cannot open: No such file or directory"},
  };
  for (const Case& c : refused) {
    expect_io_error([&] { (void)gdap::io::read_regular(c.path.string(), 100, false); }, c.words, c.rule);
  }
  EXPECT_EQ(*gdap::io::read_regular((dir / "file").string(), 100, false), "abc") << "rule: a regular file is read";
  EXPECT_EQ(*gdap::io::read_regular((dir / "link").string(), 100, false), "abc") << "rule: a link to one is followed";
  EXPECT_FALSE(gdap::io::read_regular((dir / "none").string(), 100, true)) << "rule: absent when that is allowed";
  expect_io_error([&] { (void)gdap::io::read_regular((dir / "file").string(), 2, false); },
                  "3 bytes, more than the 2 a valid file can have", "rule: whole-file reads are bounded");
  fs::remove_all(dir);
}

TEST(Files, StreamReadsStopAtTheirLimit) {
  expect_io_error([] { (void)gdap::io::read_bounded("/dev/zero", 1 << 20); }, "longer than the 1048576 bytes",
                  "rule: an endless stream is refused once the limit is read");
  const fs::path dir = fresh_dir("stream");
  expect_io_error([&] { (void)gdap::io::read_bounded(dir.string(), 1 << 20); }, "is a directory",
                  "rule: a directory is not a stream");
  put(dir / "f", "[1]");
  EXPECT_EQ(gdap::io::read_bounded((dir / "f").string(), 3), "[1]") << "rule: exactly the limit is read";
  fs::remove_all(dir);
}

TEST(Files, NulBytesAreFound) {
  EXPECT_FALSE(gdap::io::nul_in("{}"));
  EXPECT_EQ(gdap::io::nul_in(std::string_view("{}\0x", 4)), 2u) << "rule: the offset of the first NUL";
}

TEST(Files, NewFilesNeverWriteThroughAPlantedLink) {
  const fs::path dir = fresh_dir("write");
  put(dir / "victim", "victim");
  fs::create_symlink(dir / "victim", dir / "out");
  const Dir d = Dir::open(dir.string(), false);
  gdap::io::write_new(d, "out", "new");
  EXPECT_EQ(contents(dir / "victim"), "victim") << "rule: the link's target is not written";
  EXPECT_FALSE(fs::is_symlink(dir / "out")) << "rule: the link is replaced by the new file";
  EXPECT_EQ(contents(dir / "out"), "new");
  fs::create_directory(dir / "outside");
  fs::create_directory_symlink(dir / "outside", dir / "c");
  expect_io_error([&] { (void)d.sub("c", true); }, "is a symbolic link: gdap never writes through a link",
                  "rule: a linked folder inside a store is not entered");
  EXPECT_TRUE(fs::is_empty(dir / "outside"));
  fs::remove_all(dir);
}

TEST(Files, AFileNeverCommittedLeavesNothing) {
  const fs::path dir = fresh_dir("abandon");
  {
    const Dir d = Dir::open(dir.string(), false);
    NewFile f(d, "x.dnpy");
    f.write("partial", 7);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "the temporary exists";
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "rule: a file destroyed before commit leaves no temporary";
  fs::remove_all(dir);
}

}  // namespace
