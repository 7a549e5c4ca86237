// IPC handles for host sections in POSIX shared memory: the round trip (in this process and in a
// forked child, which writes and is seen by the parent without a copy), the handle's fields, and
// the table of refusals: every bad handle, bad name and unshareable section gives its status and a
// message naming what was wrong, and leaves the caller's buffers untouched.
#include "ipc/handle.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr gdap_dtype kFloat64 = {GDAP_DTYPE_FLOAT, 64, 1};
using Bytes = std::vector<unsigned char>;

std::string unique_name(const char* tag) {
  static int n = 0;
  return "/gdap-test-" + std::string(tag) + "-" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

// Rank 1 of a 2 x 3 grid of a 6 x 9 float64 array: rows 'b' [3, 6) with padding 1 below, columns
// block-cyclic (block 2): a section with both kinds of dictionary.
std::vector<gdap_dim> rank_dims() {
  std::vector<gdap_dim> d(2);
  gdap_dim_set_block(&d[0], 6, 2, 1, 2, 6);
  gdap_dim_set_padding(&d[0], 1, 0);
  gdap_dim_set_cyclic(&d[1], 9, 3, 1, 2, 2);
  return d;
}

struct Shm {
  gdap_array* array = nullptr;
  std::string name;
  explicit Shm(const char* tag) : name(unique_name(tag)) {
    const std::vector<gdap_dim> d = rank_dims();
    EXPECT_EQ(gdap_array_create_shm(&array, name.c_str(), kFloat64, d.data(), 2), GDAP_SUCCESS) << gdap_last_error();
  }
  ~Shm() { gdap_array_destroy(array); }
  double* data() const {
    void* p = nullptr;
    gdap_array_data(&p, array);
    return static_cast<double*>(p);
  }
};

Bytes export_handle(const gdap_array* a) {
  Bytes h(GDAP_IPC_HANDLE_SIZE);
  EXPECT_EQ(gdap_ipc_export(h.data(), static_cast<int64_t>(h.size()), a), GDAP_SUCCESS) << gdap_last_error();
  return h;
}

gdap::ipc::HandleData fields(const Bytes& h) {
  gdap::ipc::HandleData d;
  std::memcpy(&d, h.data(), sizeof d);
  return d;
}

Bytes with_fields(const gdap::ipc::HandleData& d, bool fix_checksum) {
  gdap::ipc::HandleData c = d;
  if (fix_checksum) c.checksum = gdap::ipc::checksum(c);
  Bytes h(sizeof c);
  std::memcpy(h.data(), &c, sizeof c);
  return h;
}

// Opens `h` expecting `status` and a message containing `needle`; *out must stay NULL.
void expect_open_fails(const Bytes& h, int64_t size, gdap_status status, const std::string& needle,
                       const char* rule) {
  gdap_array* out = nullptr;
  EXPECT_EQ(gdap_ipc_open(&out, h.data(), size), status) << rule << ": " << gdap_last_error();
  EXPECT_EQ(out, nullptr) << rule;
  EXPECT_NE(std::string(gdap_last_error()).find(needle), std::string::npos)
      << rule << ": message '" << gdap_last_error() << "' lacks '" << needle << "'";
}

TEST(IpcShm, SegmentIsNamedSizedAndZeroFilled) {
  Shm s("named");
  const std::string path = "/dev/shm" + s.name;
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0) << "rule: the segment exists under its name";
  int64_t shape[2] = {};
  gdap_array_shape(shape, s.array);
  EXPECT_EQ(shape[0], 4);  // rows [2, 6): padding 1 + owned 3
  EXPECT_EQ(shape[1], 3);  // columns 2, 3, 8: blocks [2, 4) and [8, 9) of block-cyclic(2) on grid rank 1 of 3
  EXPECT_GE(st.st_size, static_cast<off_t>(shape[0] * shape[1] * 8)) << "rule: the segment holds the section";
  for (int64_t i = 0; i < shape[0] * shape[1]; ++i) EXPECT_EQ(s.data()[i], 0.0) << "rule: zero-filled";
  gdap_array_destroy(s.array);
  s.array = nullptr;
  EXPECT_NE(stat(path.c_str(), &st), 0) << "rule: destroying the array unlinks the segment";
}

TEST(IpcShm, OpenInThisProcessSharesPagesAndDescription) {
  Shm s("roundtrip");
  const Bytes h = export_handle(s.array);
  gdap_array* opened = nullptr;
  ASSERT_EQ(gdap_ipc_open(&opened, h.data(), GDAP_IPC_HANDLE_SIZE), GDAP_SUCCESS) << gdap_last_error();
  void* p = nullptr;
  gdap_array_data(&p, opened);
  EXPECT_NE(p, static_cast<void*>(s.data())) << "rule: a second mapping, another address";
  static_cast<double*>(p)[5] = 42.5;
  EXPECT_EQ(s.data()[5], 42.5) << "rule: a write through the importer is seen by the exporter";
  s.data()[6] = -1.25;
  EXPECT_EQ(static_cast<double*>(p)[6], -1.25) << "rule: and the other way";
  const std::vector<gdap_dim> want = rank_dims();
  for (int64_t i = 0; i < 2; ++i) {
    gdap_dim d = GDAP_DIM_INIT;
    ASSERT_EQ(gdap_array_dim(&d, opened, i), GDAP_SUCCESS);
    EXPECT_EQ(d.dist_type, want[i].dist_type) << "dimension " << i;
    EXPECT_EQ(d.start, want[i].start) << "dimension " << i;
    EXPECT_EQ(d.stop, want[i].stop) << "dimension " << i;
    EXPECT_EQ(d.padding[0], want[i].padding[0]) << "dimension " << i;
    EXPECT_EQ(d.block_size, want[i].block_size) << "dimension " << i;
    EXPECT_EQ(d.proc_grid_rank, want[i].proc_grid_rank) << "dimension " << i;
  }
  gdap_device dev{};
  gdap_array_device(&dev, opened);
  EXPECT_EQ(dev.type, GDAP_DEVICE_CPU);
  const gdap::ipc::HandleData f = fields(h);
  EXPECT_EQ(std::string(f.shm_name), s.name) << "rule: the handle names the segment";
  EXPECT_EQ(f.exporter_pid, getpid());
  gdap_array_destroy(opened);
  EXPECT_EQ(s.data()[5], 42.5) << "rule: closing an importer leaves the exporter's memory";
}

TEST(IpcShm, ChildProcessWritesInPlace) {
  Shm s("fork");
  for (int i = 0; i < 12; ++i) s.data()[i] = i;
  const Bytes h = export_handle(s.array);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    gdap_array* a = nullptr;
    if (gdap_ipc_open(&a, h.data(), GDAP_IPC_HANDLE_SIZE) != GDAP_SUCCESS) _exit(2);
    void* p = nullptr;
    gdap_array_data(&p, a);
    for (int i = 0; i < 12; ++i) static_cast<double*>(p)[i] = 10.0 * static_cast<double*>(p)[i] + 1;
    gdap_array_destroy(a);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed to open or write";
  for (int i = 0; i < 12; ++i) EXPECT_EQ(s.data()[i], 10.0 * i + 1) << "element " << i;
}

TEST(IpcShm, ImporterOutlivesExporterMapping) {
  auto* s = new Shm("outlive");
  s->data()[0] = 7;
  const Bytes h = export_handle(s->array);
  gdap_array* opened = nullptr;
  ASSERT_EQ(gdap_ipc_open(&opened, h.data(), GDAP_IPC_HANDLE_SIZE), GDAP_SUCCESS) << gdap_last_error();
  delete s;  // unmaps and unlinks: an importer's mapping stays valid
  void* p = nullptr;
  gdap_array_data(&p, opened);
  EXPECT_EQ(static_cast<double*>(p)[0], 7.0) << "rule: an open mapping survives the unlink";
  gdap_array_destroy(opened);
  expect_open_fails(h, GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "no longer exists",
                    "an unlinked segment cannot be opened again");
}

TEST(IpcShm, BadHandles) {
  Shm s("bad");
  const Bytes good = export_handle(s.array);
  const gdap::ipc::HandleData f = fields(good);

  Bytes longer = good;
  longer.push_back(0);
  expect_open_fails(good, GDAP_IPC_HANDLE_SIZE - 1, GDAP_ERR_INVALID_ARGUMENT, "2047 bytes", "truncated handle");
  expect_open_fails(longer, GDAP_IPC_HANDLE_SIZE + 1, GDAP_ERR_INVALID_ARGUMENT, "2049 bytes", "padded handle");
  expect_open_fails(good, 0, GDAP_ERR_INVALID_ARGUMENT, "0 bytes", "empty handle");

  gdap::ipc::HandleData d = f;
  std::memcpy(d.magic, "NOT-GDAP", 8);
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "magic", "wrong magic");

  d = f;
  d.format_version = GDAP_IPC_FORMAT_VERSION + 1;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_VERSION,
                    "format version " + std::to_string(GDAP_IPC_FORMAT_VERSION + 1), "newer format version");

  Bytes flipped = good;
  flipped[600] ^= 1;  // inside shape[]: an altered handle
  expect_open_fails(flipped, GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "checksum", "corrupted bytes");

  d = f;
  std::snprintf(d.hostname, sizeof d.hostname, "%s", "some-other-node");
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "'some-other-node'",
                    "handle from another node");

  d = f;
  std::snprintf(d.boot_id, sizeof d.boot_id, "%s", "00000000-0000-0000-0000-000000000000");
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "boot id",
                    "handle from an earlier boot");

  d = f;
  std::snprintf(d.protocol_version, sizeof d.protocol_version, "%s", "1.0.0");
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_VERSION, "1.0.0",
                    "unknown protocol major");

  d = f;
  d.ndim = GDAP_IPC_MAX_NDIM + 1;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "ndim 9",
                    "ndim past GDAP_IPC_MAX_NDIM");

  d = f;
  d.dims[0].stop = 7;  // > size 6
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_PROTOCOL, "dimension 0",
                    "dictionaries are checked against the protocol");

  d = f;
  d.offset = f.allocation_bytes;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "outside",
                    "section past the end of its segment");

  d = f;
  d.shm_inode += 1;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "not the one",
                    "a segment re-created under the same name");

  d = f;
  d.exporter_start += 1;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT,
                    "the pid now belongs to another process", "a pid reused by another process is not the exporter");

  d = f;
  d.shm_uid += 1;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "when it was exported",
                    "the segment's owner is the one recorded at export");

  d = f;
  std::snprintf(d.shm_name, sizeof d.shm_name, "%s", "/gdap-test-never-created");
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "no longer exists",
                    "a segment that does not exist");

  gdap_array* out = nullptr;
  EXPECT_EQ(gdap_ipc_open(&out, nullptr, GDAP_IPC_HANDLE_SIZE), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_ipc_open(nullptr, good.data(), GDAP_IPC_HANDLE_SIZE), GDAP_ERR_INVALID_ARGUMENT);
}

// Hunt 14, defect 5: an offset that is not a multiple of the element's alignment would open a
// float64 array at an odd address (typed loops then read misaligned doubles, CUDA kernels fault).
TEST(IpcShm, MisalignedOffsetIsRefused) {
  Shm s("misaligned");
  gdap::ipc::HandleData d = fields(export_handle(s.array));
  d.offset += 3;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT,
                    "offset 0x3 is not aligned for float64: it must be a multiple of 8 bytes", "offset 3 for float64");
}

// Hunt 14, defect 2: a writable section whose strides give two indices one address would let a
// redistribution or a GEMM write one element twice (a silent wrong answer); read-only, it is a
// legitimate broadcast view and opens.
TEST(IpcShm, WritableSectionWithOverlappingElementsIsRefused) {
  Shm s("overlap");
  gdap::ipc::HandleData d = fields(export_handle(s.array));
  d.strides[0] = 0;
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT,
                    "IPC handle: the writable section has strides (0, 1) on shape 4 x 3: axis 0 (extent 4, stride 0)",
                    "stride 0, writable");
  d.strides[0] = 1;  // rows and columns both step one element: (0, 1) and (1, 0) are one element
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "strides (1, 1)",
                    "strides (1, 1), writable");
  d.strides[0] = 0;
  d.readonly = 1;
  gdap_array* view = nullptr;
  ASSERT_EQ(gdap_ipc_open(&view, with_fields(d, true).data(), GDAP_IPC_HANDLE_SIZE), GDAP_SUCCESS) << gdap_last_error();
  int readonly = 0;
  EXPECT_EQ(gdap_array_readonly(&readonly, view), GDAP_SUCCESS);
  EXPECT_EQ(readonly, 1);
  gdap_array_destroy(view);
}

// Issue 27, item 14: an exporter killed by SIGKILL never unlinks its segment, so the name still
// opens, onto data no live process owns; the exporter's pid and start time in the handle say so.
TEST(IpcShm, HandleOfAKilledExporterIsRefused) {
  const std::string name = unique_name("killed");
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    const std::vector<gdap_dim> d = rank_dims();
    gdap_array* a = nullptr;
    Bytes h(GDAP_IPC_HANDLE_SIZE);
    if (gdap_array_create_shm(&a, name.c_str(), kFloat64, d.data(), 2) != GDAP_SUCCESS ||
        gdap_ipc_export(h.data(), GDAP_IPC_HANDLE_SIZE, a) != GDAP_SUCCESS) {
      _exit(1);
    }
    if (write(pipe_fds[1], h.data(), h.size()) != static_cast<ssize_t>(h.size())) _exit(1);
    raise(SIGKILL);  // no destructor runs: the segment stays in /dev/shm
  }
  close(pipe_fds[1]);
  Bytes h(GDAP_IPC_HANDLE_SIZE);
  const ssize_t got = read(pipe_fds[0], h.data(), h.size());
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(got, static_cast<ssize_t>(h.size())) << "the child did not export";
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  struct stat st {};
  ASSERT_EQ(stat(("/dev/shm" + name).c_str(), &st), 0) << "the killed exporter's segment is still there";
  expect_open_fails(h, GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "has exited",
                    "a killed exporter's handle does not open its stale segment");
  shm_unlink(name.c_str());
}

// Issue 27, item 14: the segment's mode and owner are checked on open.
TEST(IpcShm, ModeChangedSinceExportOrWritableByAllIsRefused) {
  Shm s("mode");
  const std::string path = "/dev/shm" + s.name;
  const Bytes h = export_handle(s.array);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  expect_open_fails(h, GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "mode 0644, but owner",
                    "a segment whose mode changed since the export");
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  Bytes out(GDAP_IPC_HANDLE_SIZE, 0xab);
  EXPECT_EQ(gdap_ipc_export(out.data(), GDAP_IPC_HANDLE_SIZE, s.array), GDAP_ERR_INVALID_ARGUMENT)
      << "rule: a segment every user may write is not exported";
  EXPECT_NE(std::string(gdap_last_error()).find("has mode 0666"), std::string::npos) << gdap_last_error();
  gdap::ipc::HandleData d = fields(h);
  d.shm_mode = 0666;  // a handle that claims the mode: refused all the same
  expect_open_fails(with_fields(d, true), GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "every user of the node",
                    "a world-writable segment is not opened");
}

TEST(IpcShm, ReusedNameIsRefused) {
  auto* s = new Shm("reuse");
  const std::string name = s->name;
  const Bytes h = export_handle(s->array);
  delete s;
  gdap_array* again = nullptr;
  const std::vector<gdap_dim> d = rank_dims();
  ASSERT_EQ(gdap_array_create_shm(&again, name.c_str(), kFloat64, d.data(), 2), GDAP_SUCCESS) << gdap_last_error();
  expect_open_fails(h, GDAP_IPC_HANDLE_SIZE, GDAP_ERR_INVALID_ARGUMENT, "name reused",
                    "a stale handle does not open a new segment that took the name");
  gdap_array_destroy(again);
}

TEST(IpcShm, ExportRefusals) {
  const std::vector<gdap_dim> d = rank_dims();
  Bytes h(GDAP_IPC_HANDLE_SIZE, 0xab);
  const Bytes untouched = h;

  gdap_array* plain = nullptr;
  ASSERT_EQ(gdap_array_create(&plain, kFloat64, {GDAP_DEVICE_CPU, 0}, d.data(), 2), GDAP_SUCCESS);
  EXPECT_EQ(gdap_ipc_export(h.data(), GDAP_IPC_HANDLE_SIZE, plain), GDAP_ERR_UNSUPPORTED)
      << "rule: ordinary host memory cannot be shared";
  EXPECT_NE(std::string(gdap_last_error()).find("gdap_array_create_shm"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(h, untouched) << "rule: a failed export leaves the buffer";
  gdap_array_destroy(plain);

  Shm s("refuse");
  EXPECT_EQ(gdap_ipc_export(h.data(), GDAP_IPC_HANDLE_SIZE - 1, s.array), GDAP_ERR_BUFFER_TOO_SMALL);
  EXPECT_NE(std::string(gdap_last_error()).find("2047"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(h, untouched);
  EXPECT_EQ(gdap_ipc_export(nullptr, GDAP_IPC_HANDLE_SIZE, s.array), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_ipc_export(h.data(), GDAP_IPC_HANDLE_SIZE, nullptr), GDAP_ERR_INVALID_ARGUMENT);

  // An unstructured dimension: its indices do not fit a fixed-size handle.
  const int64_t idx[3] = {4, 0, 2};
  gdap_dim u = GDAP_DIM_INIT;
  gdap_dim_set_unstructured(&u, 5, 1, 0, idx, 3, -1);
  gdap_array* ua = nullptr;
  const std::string uname = unique_name("u");
  ASSERT_EQ(gdap_array_create_shm(&ua, uname.c_str(), kFloat64, &u, 1), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(gdap_ipc_export(h.data(), GDAP_IPC_HANDLE_SIZE, ua), GDAP_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(gdap_last_error()).find("dimension 0"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(h, untouched);
  gdap_array_destroy(ua);

  // More dimensions than a handle carries.
  std::vector<gdap_dim> many(GDAP_IPC_MAX_NDIM + 1);
  for (gdap_dim& m : many) gdap_dim_set_undistributed(&m, 1);
  gdap_array* big = nullptr;
  const std::string bname = unique_name("ndim");
  ASSERT_EQ(gdap_array_create_shm(&big, bname.c_str(), kFloat64, many.data(), GDAP_IPC_MAX_NDIM + 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_ipc_export(h.data(), GDAP_IPC_HANDLE_SIZE, big), GDAP_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(gdap_last_error()).find("9 dimensions"), std::string::npos) << gdap_last_error();
  gdap_array_destroy(big);
}

TEST(IpcShm, CreateRefusals) {
  const std::vector<gdap_dim> d = rank_dims();
  gdap_array* a = nullptr;
  EXPECT_EQ(gdap_array_create_shm(&a, "no-slash", kFloat64, d.data(), 2), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("'no-slash'"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_array_create_shm(&a, "/a/b", kFloat64, d.data(), 2), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, nullptr);
  const std::string newline = unique_name("new\nline");
  EXPECT_EQ(gdap_array_create_shm(&a, newline.c_str(), kFloat64, d.data(), 2), GDAP_ERR_INVALID_ARGUMENT)
      << "rule: a name with a newline is refused at creation (it could never be exported)";
  EXPECT_NE(std::string(gdap_last_error()).find("control character 0x0a"), std::string::npos) << gdap_last_error();
  EXPECT_NE(access(("/dev/shm" + newline).c_str(), F_OK), 0) << "rule: nothing is created";
  EXPECT_EQ(a, nullptr);
  // Hunt 11 item 7e: "/." and "/.." are folders, not segments (they failed "File exists"), and
  // "/sem.*" is glibc's named-semaphore namespace (it was accepted).
  const struct {
    const char* rule;
    std::string name;
    const char* words;
  } names[] = {{"'/.' names /dev/shm itself", "/.", "names a folder, not a segment"},
               {"'/..' names its parent", "/..", "names a folder, not a segment"},
               {"'/sem.' names are glibc's semaphores", unique_name("sem.x").replace(0, 1, "/sem."), "which glibc keeps for named semaphores"}};
  for (const auto& n : names) {
    EXPECT_EQ(gdap_array_create_shm(&a, n.name.c_str(), kFloat64, d.data(), 2), GDAP_ERR_INVALID_ARGUMENT) << n.rule;
    EXPECT_NE(std::string(gdap_last_error()).find(n.words), std::string::npos) << n.rule << ": " << gdap_last_error();
    EXPECT_EQ(a, nullptr) << n.rule;
  }
  EXPECT_NE(access(("/dev/shm" + names[2].name).c_str(), F_OK), 0) << "rule: nothing is created";
  Shm s("exists");
  EXPECT_EQ(gdap_array_create_shm(&a, s.name.c_str(), kFloat64, d.data(), 2), GDAP_ERR_INVALID_ARGUMENT)
      << "rule: an existing segment is never overwritten";
  EXPECT_NE(std::string(gdap_last_error()).find("exists"), std::string::npos) << gdap_last_error();
  gdap_dim empty = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_array_create_shm(&a, nullptr, kFloat64, &empty, 1), GDAP_ERR_PROTOCOL);
  EXPECT_EQ(gdap_array_create_shm(&a, nullptr, {GDAP_DTYPE_FLOAT, 12, 1}, d.data(), 2), GDAP_ERR_UNSUPPORTED);
  EXPECT_EQ(a, nullptr);
  // NULL name: a fresh one, and a handle that opens.
  ASSERT_EQ(gdap_array_create_shm(&a, nullptr, kFloat64, d.data(), 2), GDAP_SUCCESS) << gdap_last_error();
  const Bytes h = export_handle(a);
  EXPECT_EQ(std::string(fields(h).shm_name).rfind("/gdap-", 0), 0u) << fields(h).shm_name;
  gdap_array* o = nullptr;
  EXPECT_EQ(gdap_ipc_open(&o, h.data(), GDAP_IPC_HANDLE_SIZE), GDAP_SUCCESS) << gdap_last_error();
  gdap_array_destroy(o);
  gdap_array_destroy(a);
}


// ---- two mappings of one segment in one process (hunt 12, item 2) ---------------------------------

// A 1-d block dictionary of an 8-element array over `ranks` ranks.
gdap_dim block_of_8(int64_t ranks, int64_t rank) {
  gdap_dim d = GDAP_DIM_INIT;
  const int64_t per = 8 / ranks;
  EXPECT_EQ(gdap_dim_set_block(&d, 8, ranks, rank, rank * per, (rank + 1) * per), GDAP_SUCCESS);
  return d;
}

gdap_map* blocks_of_8(int64_t ranks) {
  std::vector<gdap_dim> dims;
  for (int64_t r = 0; r < ranks; ++r) dims.push_back(block_of_8(ranks, r));
  gdap_map* m = nullptr;
  EXPECT_EQ(gdap_map_create(&m, ranks, 1, dims.data()), GDAP_SUCCESS) << gdap_last_error();
  return m;
}

// gdap_ipc_open of this process's own export maps the segment a second time, at another address:
// a redistribution reading one mapping and writing the other must be refused as the address
// checks refuse one mapping read and written, and leave the source untouched.
TEST(IpcShm, TwoMappingsOfOneSegmentAreOneMemoryForARank) {
  const std::string name = unique_name("twice");
  const gdap_dim d = block_of_8(1, 0);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_create_shm(&a, name.c_str(), kFloat64, &d, 1), GDAP_SUCCESS) << gdap_last_error();
  gdap_array* b = nullptr;
  ASSERT_EQ(gdap_ipc_open(&b, export_handle(a).data(), GDAP_IPC_HANDLE_SIZE), GDAP_SUCCESS) << gdap_last_error();
  void* pa = nullptr;
  void* pb = nullptr;
  gdap_array_data(&pa, a);
  gdap_array_data(&pb, b);
  ASSERT_NE(pa, pb) << "the second mapping should lie at another address";
  for (int i = 0; i < 8; ++i) static_cast<double*>(pa)[i] = i;
  gdap_map* m = blocks_of_8(1);
  gdap_plan* plan = nullptr;
  ASSERT_EQ(gdap_plan_create(&plan, m, m, kFloat64, 0), GDAP_SUCCESS) << gdap_last_error();
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_redistribute(comm, plan, a, b), GDAP_ERR_INVALID_ARGUMENT);
  const std::string message = gdap_last_error();
  EXPECT_NE(message.find("dst (bytes 0..63 of shared-memory segment '" + name + "') and src"), std::string::npos) << message;
  EXPECT_NE(message.find("another mapping of it in this process"), std::string::npos) << message;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(static_cast<double*>(pa)[i], i);
  gdap_comm_destroy(comm);
  gdap_plan_destroy(plan);
  gdap_map_destroy(m);
  gdap_array_destroy(b);
  gdap_array_destroy(a);
}

// The same across the ranks of an in-process group (two threads): rank 1 writes, through the
// second mapping, the bytes rank 0 reads through the first. Every rank must get the refusal and
// rank 0's source must stay as it was.
TEST(IpcShm, TwoMappingsOfOneSegmentAreOneMemoryAcrossGroupRanks) {
  const std::string name = unique_name("twice-group");
  const gdap_dim d0 = block_of_8(2, 0), d1 = block_of_8(2, 1);
  gdap_array* a = nullptr;  // rank 0's source, in the segment
  ASSERT_EQ(gdap_array_create_shm(&a, name.c_str(), kFloat64, &d0, 1), GDAP_SUCCESS) << gdap_last_error();
  gdap_array* b = nullptr;  // the second mapping
  ASSERT_EQ(gdap_ipc_open(&b, export_handle(a).data(), GDAP_IPC_HANDLE_SIZE), GDAP_SUCCESS) << gdap_last_error();
  void* pa = nullptr;
  void* pb = nullptr;
  gdap_array_data(&pa, a);
  gdap_array_data(&pb, b);
  for (int i = 0; i < 4; ++i) static_cast<double*>(pa)[i] = i;
  gdap_array* dst1 = nullptr;  // rank 1's destination: the second mapping's bytes, as rank 1's section
  ASSERT_EQ(gdap_array_wrap(&dst1, pb, kFloat64, {GDAP_DEVICE_CPU, 0}, nullptr, &d1, 1), GDAP_SUCCESS)
      << gdap_last_error();
  gdap_array* src1 = nullptr;
  gdap_array* dst0 = nullptr;
  ASSERT_EQ(gdap_array_create(&src1, kFloat64, {GDAP_DEVICE_CPU, 0}, &d1, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_create(&dst0, kFloat64, {GDAP_DEVICE_CPU, 0}, &d0, 1), GDAP_SUCCESS);
  void* p1 = nullptr;
  gdap_array_data(&p1, src1);
  for (int i = 0; i < 4; ++i) static_cast<double*>(p1)[i] = 4 + i;
  gdap_map* m = blocks_of_8(2);
  gdap_comm* comms[2] = {nullptr, nullptr};
  ASSERT_EQ(gdap_comm_create_group(comms, 2), GDAP_SUCCESS);
  gdap_status status[2] = {GDAP_SUCCESS, GDAP_SUCCESS};
  std::string message[2];
  auto rank = [&](int r) {
    gdap_plan* plan = nullptr;
    status[r] = gdap_plan_create(&plan, m, m, kFloat64, r);
    if (status[r] == GDAP_SUCCESS) status[r] = gdap_redistribute(comms[r], plan, r == 0 ? a : src1, r == 0 ? dst0 : dst1);
    message[r] = gdap_last_error();
    gdap_plan_destroy(plan);
  };
  std::thread t0(rank, 0), t1(rank, 1);
  t0.join();
  t1.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(status[r], GDAP_ERR_INVALID_ARGUMENT) << "rank " << r << ": " << message[r];
    EXPECT_NE(message[r].find("of shared-memory segment '" + name + "'"), std::string::npos) << message[r];
  }
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<double*>(pa)[i], i) << "rank 0's source was overwritten";
  for (gdap_comm* c : comms) gdap_comm_destroy(c);
  gdap_map_destroy(m);
  gdap_array_destroy(dst0);
  gdap_array_destroy(src1);
  gdap_array_destroy(dst1);
  gdap_array_destroy(b);
  gdap_array_destroy(a);
}

// Review 12b, item 5: the two-mapping check compares the sections' exact bytes in the segment,
// not their spans. A segment of 32 float64 holding sections of 8 elements `stride` apart.
struct ShmOf32 {
  std::string name = unique_name("strided");
  gdap_array* array = nullptr;
  gdap_array* second = nullptr;  // the second mapping (gdap_ipc_open of its own export)
  double* first_data = nullptr;
  double* second_data = nullptr;
  ShmOf32() {
    gdap_dim d = GDAP_DIM_INIT;
    EXPECT_EQ(gdap_dim_set_block(&d, 32, 1, 0, 0, 32), GDAP_SUCCESS);
    EXPECT_EQ(gdap_array_create_shm(&array, name.c_str(), kFloat64, &d, 1), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_ipc_open(&second, export_handle(array).data(), GDAP_IPC_HANDLE_SIZE), GDAP_SUCCESS)
        << gdap_last_error();
    void* p = nullptr;
    gdap_array_data(&p, array);
    first_data = static_cast<double*>(p);
    gdap_array_data(&p, second);
    second_data = static_cast<double*>(p);
    for (int i = 0; i < 32; ++i) first_data[i] = i;
  }
  ~ShmOf32() {
    gdap_array_destroy(second);
    gdap_array_destroy(array);
  }
};

gdap_array* strided_view(double* start, int64_t stride) {
  const gdap_dim d = block_of_8(1, 0);
  gdap_array* view = nullptr;
  EXPECT_EQ(gdap_array_wrap(&view, start, kFloat64, {GDAP_DEVICE_CPU, 0}, &stride, &d, 1), GDAP_SUCCESS)
      << gdap_last_error();
  return view;
}

// A one-rank gdap_redistribute of `src` into `dst` (the identity plan); the views are destroyed.
gdap_status redistribute_alone(gdap_array* src, gdap_array* dst, std::string& message) {
  gdap_map* m = blocks_of_8(1);
  gdap_plan* plan = nullptr;
  EXPECT_EQ(gdap_plan_create(&plan, m, m, kFloat64, 0), GDAP_SUCCESS) << gdap_last_error();
  gdap_comm* comm = nullptr;
  EXPECT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  const gdap_status status = gdap_redistribute(comm, plan, src, dst);
  message = gdap_last_error();
  gdap_comm_destroy(comm);
  gdap_plan_destroy(plan);
  gdap_map_destroy(m);
  gdap_array_destroy(dst);
  gdap_array_destroy(src);
  return status;
}

// The first 16 elements after an even -> odd redistribution of element values 0, 1, ...: each odd
// element holds its even neighbour's value, and the even ones (the source) are unchanged.
void expect_odd_copied_from_even(const double* data) {
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(data[2 * i + 1], 2 * i) << "odd element " << 2 * i + 1;
    EXPECT_EQ(data[2 * i], 2 * i) << "even element " << 2 * i << " (the source) changed";
  }
}

TEST(IpcShm, InterleavedColumnsOfOneMappingAreApart) {
  ShmOf32 s;
  std::string message;
  ASSERT_EQ(redistribute_alone(strided_view(s.first_data, 2), strided_view(s.first_data + 1, 2), message), GDAP_SUCCESS)
      << message;
  expect_odd_copied_from_even(s.first_data);
}

TEST(IpcShm, InterleavedColumnsThroughTwoMappingsAreApart) {
  ShmOf32 s;
  std::string message;
  ASSERT_EQ(redistribute_alone(strided_view(s.first_data, 2), strided_view(s.second_data + 1, 2), message), GDAP_SUCCESS)
      << message;
  expect_odd_copied_from_even(s.first_data);
}

TEST(IpcShm, OneSharedElementThroughTwoMappingsIsRefused) {
  ShmOf32 s;
  std::string message;
  // src: elements 0, 2, .., 14 through the first mapping; dst: elements 14..21 through the second.
  EXPECT_EQ(redistribute_alone(strided_view(s.first_data, 2), strided_view(s.second_data + 14, 1), message),
            GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("dst (bytes 112..175 of shared-memory segment '" + s.name + "') and src (bytes 0..119"),
            std::string::npos) << message;
  EXPECT_NE(message.find("another mapping of it in this process) share a byte"), std::string::npos) << message;
  for (int i = 0; i < 32; ++i) EXPECT_EQ(s.first_data[i], i) << "element " << i;
}

// Issue 27, item 9: a segment larger than /dev/shm can hold is refused at creation, where sizing
// alone (ftruncate) succeeded and the first write past the free space killed the process (SIGBUS).
TEST(IpcShm, SegmentLargerThanDevShmIsRefusedAtCreation) {
  struct statvfs fs {};
  ASSERT_EQ(statvfs("/dev/shm", &fs), 0);
  const int64_t total = static_cast<int64_t>(fs.f_blocks) * static_cast<int64_t>(fs.f_frsize);
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, total + (int64_t{1} << 30));  // bytes: 1 GiB more than /dev/shm's size
  const std::string name = unique_name("huge");
  gdap_array* a = nullptr;
  EXPECT_EQ(gdap_array_create_shm(&a, name.c_str(), {GDAP_DTYPE_UINT, 8, 1}, &d, 1), GDAP_ERR_NO_MEMORY)
      << gdap_last_error();
  EXPECT_NE(std::string(gdap_last_error()).find("cannot be reserved in /dev/shm"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(a, nullptr);
  EXPECT_NE(access(("/dev/shm" + name).c_str(), F_OK), 0) << "rule: the refused segment is removed";
}

}  // namespace
