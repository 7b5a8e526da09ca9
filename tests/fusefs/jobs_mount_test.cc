// The .graphfs/jobs/ control directory on a real mount: the shell protocol delivers every
// active chunk exactly once per iteration, in the graph's bytes; LPs are loaded once and
// shared; bad input gets EINVAL and a message; other users cannot touch a job; a killed
// job is removed and never waited on.
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>
#include <sstream>
#include <thread>

#include <sys/mman.h>
#include <sys/resource.h>

#include <optional>

#include "engines/graphfs_client.hpp"
#include "tests/fusefs/striped_fixture.h"

namespace graphfs::testing {
namespace {

constexpr int kScale = 12;  // 4096 vertices, 64 Ki weighted edges: column is 768 KiB
constexpr uint64_t kVertices = 1u << kScale;
constexpr uint64_t kEdgeSize = 12;

std::string Bin(const std::string& tool) { return BinDir() + "/" + tool; }

// Writes `data` to `path` in one write and closes it; returns 0 or the errno of the first
// step that failed (job files report a bad value at close).
int WriteAndClose(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) return errno;
  if (::write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
    int e = errno;
    ::close(fd);
    return e;
  }
  return ::close(fd) == 0 ? 0 : errno;
}

struct MapLine {
  uint64_t id, column_offset, length, offset;
};

std::vector<MapLine> ParseMap(const std::string& text) {
  std::vector<MapLine> out;
  std::istringstream in(text);
  MapLine m;
  while (in >> m.id >> m.column_offset >> m.length >> m.offset) out.push_back(m);
  return out;
}

// One LP as the job read it.
struct Partition {
  std::string name;
  std::string bytes;
  std::vector<MapLine> map;
};

class JobsMount : public StripedMount {
 protected:
  void SetUp() override {
    StripedMount::SetUp();
    const std::string edges = tmp.path() + "/edges.bin";
    Run({Bin("gen-rmat"), "--scale", std::to_string(kScale), "--weighted", "--seed", "5", "-o", edges});
    std::filesystem::remove(graph);
    Run({Bin("preprocess"), "-i", edges, "-o", graph, "-v", std::to_string(kVertices), "-p", "4", "-t", "1"});
    Run({Bin("graphfs-index"), "--chunk-size", "16K", graph});
    column = ReadFile(graph + "/column");
    jobs = mnt + "/.graphfs/jobs";
  }
  void Run(const std::vector<std::string>& argv) {
    CommandResult r = RunCommand(argv, 300);
    ASSERT_EQ(r.status, 0) << argv[0] << ":\n" << r.output;
  }
  void StripeGraph() {
    StripeRequest req = TestStripeRequest(graph, disks);
    req.min_size = 256 << 10;
    auto r = StripeFiles(req);
    ASSERT_TRUE(r.ok()) << r.error().message();
  }
  // Registers job NAME on the graph with the given partition size.
  void Register(const std::string& name, const std::string& partition) {
    ASSERT_EQ(::mkdir((jobs + "/" + name).c_str(), 0755), 0) << std::strerror(errno);
    ASSERT_EQ(WriteAndClose(jobs + "/" + name + "/graph", "graph\n"), 0);
    ASSERT_EQ(WriteAndClose(jobs + "/" + name + "/partition_size", partition + "\n"), 0);
  }
  // Reads `next` once; "" on error (errno in *err).
  std::string Next(const std::string& name, int* err = nullptr) {
    int fd = ::open((jobs + "/" + name + "/next").c_str(), O_RDONLY);
    if (fd < 0) {
      if (err) *err = errno;
      return "";
    }
    char buf[64];
    ssize_t n = ::read(fd, buf, sizeof buf);
    int e = errno;
    ::close(fd);
    if (n < 0) {
      if (err) *err = e;
      return "";
    }
    std::string s(buf, static_cast<size_t>(n));
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  // Reads every LP of one iteration of job NAME.
  std::vector<Partition> Iteration(const std::string& name) {
    std::vector<Partition> out;
    for (int guard = 0; guard < 10000; ++guard) {
      std::string lp = Next(name);
      EXPECT_FALSE(lp.empty()) << "next of " << name << " failed";
      if (lp.empty() || lp == "end") break;
      Partition p;
      p.name = lp;
      p.bytes = ReadFile(jobs + "/" + name + "/" + lp);
      p.map = ParseMap(ReadFile(jobs + "/" + name + "/" + lp + ".map"));
      out.push_back(std::move(p));
    }
    return out;
  }
  // Checks each LP against `column` and returns the chunk ids it delivered (with repeats).
  std::multiset<uint64_t> CheckAgainstColumn(const std::vector<Partition>& lps) {
    std::multiset<uint64_t> ids;
    for (const Partition& p : lps) {
      uint64_t at = 0;
      for (const MapLine& m : p.map) {
        EXPECT_EQ(m.offset, at) << p.name;
        EXPECT_EQ(m.length % kEdgeSize, 0u);
        EXPECT_LE(m.column_offset + m.length, column.size());
        EXPECT_TRUE(p.bytes.compare(m.offset, m.length, column, m.column_offset, m.length) == 0)
            << p.name << ": chunk " << m.id << " does not hold column's bytes";
        ids.insert(m.id);
        at += m.length;
      }
      EXPECT_EQ(at, p.bytes.size()) << p.name << ": the map does not cover the file";
    }
    return ids;
  }
  // Registers job NAME (64K partitions) with every vertex active; `next` opened read-write (-1:
  // errno says why).
  int OpenNextOfAllActiveJob(const std::string& name) {
    Register(name, "64K");
    EXPECT_EQ(WriteAndClose(jobs + "/" + name + "/active.list", "all\n"), 0);
    return ::open((jobs + "/" + name + "/next").c_str(), O_RDWR);
  }
  nlohmann::json Status(const std::string& name) {
    return nlohmann::json::parse(ReadFile(jobs + "/" + name + "/status"));
  }

  std::string column, jobs;
};

TEST_F(JobsMount, AllActiveDeliversEveryChunkOnceInColumnBytes) {
  DoMount();
  Register("a", "64K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all\n"), 0);
  std::vector<Partition> lps = Iteration("a");
  ASSERT_GT(lps.size(), 4u) << "768 KiB in 64 KiB partitions";
  for (const Partition& p : lps) EXPECT_LE(p.bytes.size(), 64u << 10);
  std::multiset<uint64_t> ids = CheckAgainstColumn(lps);
  uint64_t total = 0;
  for (const Partition& p : lps) total += p.bytes.size();
  EXPECT_EQ(total, column.size()) << "every byte of column once";
  EXPECT_EQ(std::set<uint64_t>(ids.begin(), ids.end()).size(), ids.size()) << "a chunk came twice";
  EXPECT_EQ(Next("a"), "end");  // stays at the end until a new active set
  nlohmann::json st = Status("a");
  EXPECT_EQ(st["vertices"], kVertices);
  EXPECT_EQ(st["iterations"].size(), 1u);
  EXPECT_EQ(st["iterations"][0]["lps"], lps.size());
  EXPECT_TRUE(st["iterations"][0]["finished"].get<bool>());

  // A second iteration with a new active set starts over.
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  EXPECT_EQ(CheckAgainstColumn(Iteration("a")).size(), ids.size());
}

// `next` opened read-write: each answer carries the LP's pieces (what lp-SEQ.pieces holds), read
// on past the first read when longer, and a write of "done" ends the job's use of the LP — two
// requests an LP. Write-only it cannot be opened; any other word is refused.
TEST_F(JobsMount, NextOpenedReadWriteCarriesThePiecesAndTakesDone) {
  DoMount();
  Register("a", "64K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all\n"), 0);
  const std::string next = jobs + "/a/next";
  EXPECT_EQ(::open(next.c_str(), O_WRONLY), -1);
  EXPECT_EQ(errno, EACCES);
  const int fd = ::open(next.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  int lps = 0;
  for (int guard = 0; guard < 1000; ++guard) {
    std::string answer(16, '\0');  // short on purpose: the rest is read at its offset
    ssize_t n = ::pread(fd, answer.data(), answer.size(), 0);
    ASSERT_GT(n, 0) << std::strerror(errno);
    for (ssize_t more = n; more == 16;) {
      answer.resize(answer.size() + 16);
      more = ::pread(fd, answer.data() + n, 16, n);
      ASSERT_GE(more, 0) << std::strerror(errno);
      n += more;
    }
    answer.resize(static_cast<size_t>(n));
    if (answer == "end\n") break;
    const size_t eol = answer.find('\n');
    ASSERT_NE(eol, std::string::npos) << answer;
    const std::string header = answer.substr(0, eol);
    const size_t space = header.find(' ');
    ASSERT_NE(space, std::string::npos) << header;
    const std::string lp = header.substr(0, space);
    ASSERT_EQ(lp.rfind("lp-", 0), 0u) << header;
    const std::string carried = answer.substr(eol + 1);
    EXPECT_EQ(std::stoull(header.substr(space + 1)), carried.size()) << header;
    EXPECT_GT(carried.size(), 0u);
    EXPECT_EQ(carried, ReadFile(jobs + "/a/" + lp + ".pieces")) << lp;
    ++lps;
    ASSERT_EQ(::pwrite(fd, "done\n", 5, 0), 5) << std::strerror(errno);
    EXPECT_EQ(::open((jobs + "/a/" + lp).c_str(), O_RDONLY), -1) << lp << " is let go at done";
    EXPECT_EQ(errno, ENOENT);
  }
  EXPECT_GT(lps, 4) << "768 KiB in 64 KiB partitions";
  EXPECT_EQ(::pwrite(fd, "finished\n", 9, 0), -1);
  EXPECT_EQ(errno, EINVAL);
  ::close(fd);
  EXPECT_TRUE(Status("a")["iterations"][0]["finished"].get<bool>());
}

// One read of `next` opened read-write, at offset 0 and on past a first short read: the answer.
std::string ReadAnswer(int fd) {
  std::string answer(4096, '\0');
  size_t have = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, answer.data() + have, answer.size() - have, static_cast<off_t>(have));
    if (n < 0) return "error: " + std::string(std::strerror(errno));
    have += static_cast<size_t>(n);
    if (have < answer.size()) break;
    answer.resize(answer.size() * 2);
  }
  answer.resize(have);
  return answer;
}

// "lp-SEQ BYTES turn\n...": whether the answer is a turn at the cores.
bool IsTurn(const std::string& answer) {
  const std::string line = answer.substr(0, answer.find('\n'));
  return line.size() > 5 && line.compare(line.size() - 5, 5, " turn") == 0;
}

TEST_F(JobsMount, JobsTakingTurnsComputeNoMoreThanTheSlotsAtOnce) {
  DoMount({"compute_slots=1"});
  const std::string stats_path = mnt + "/.graphfs/stats";
  EXPECT_EQ(nlohmann::json::parse(ReadFile(stats_path))["compute_turns"]["slots"], 1);
  int fd[3];
  for (int i = 0; i < 3; ++i) {
    ASSERT_NO_FATAL_FAILURE(fd[i] = OpenNextOfAllActiveJob(std::string(1, 'a' + i)));
    ASSERT_GE(fd[i], 0) << std::strerror(errno);
  }
  // a and b take turns; c does not (an engine that never yields is never held back).
  ASSERT_EQ(::pwrite(fd[0], "turns\n", 6, 0), 6) << std::strerror(errno);
  ASSERT_EQ(::pwrite(fd[1], "turns\n", 6, 0), 6) << std::strerror(errno);
  EXPECT_TRUE(Status("a")["yields"].get<bool>());
  EXPECT_FALSE(Status("c")["yields"].get<bool>());

  const std::string first = ReadAnswer(fd[0]);
  ASSERT_EQ(first.rfind("lp-", 0), 0u) << first;
  EXPECT_TRUE(IsTurn(first)) << "two jobs take turns on one slot: " << first.substr(0, 40);
  // b's answer waits for a's turn.
  std::atomic<bool> b_answered{false};
  std::string b_answer;
  std::thread b([&] {
    b_answer = ReadAnswer(fd[1]);
    b_answered = true;
  });
  const std::string c_answer = ReadAnswer(fd[2]);
  EXPECT_EQ(c_answer.rfind("lp-", 0), 0u) << c_answer;
  EXPECT_FALSE(IsTurn(c_answer)) << "c does not take turns";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(b_answered) << "b computed while a held the only turn";
  const nlohmann::json waiting = nlohmann::json::parse(ReadFile(stats_path))["compute_turns"];
  EXPECT_EQ(waiting["computing"], 1) << waiting.dump();
  EXPECT_EQ(waiting["waiting"], 1) << waiting.dump();
  EXPECT_EQ(waiting["jobs"], 2) << waiting.dump();
  ASSERT_EQ(::pwrite(fd[0], "yield\n", 6, 0), 6) << std::strerror(errno);
  b.join();
  EXPECT_TRUE(b_answered);
  EXPECT_EQ(b_answer.rfind("lp-", 0), 0u) << b_answer;
  EXPECT_TRUE(IsTurn(b_answer)) << b_answer.substr(0, 40);

  // Both go to the end of the iteration, yielding each turn: never both computing at once, and
  // each gets the whole column in its LPs' views.
  std::atomic<int> computing{0}, most{0};
  auto run = [&](int i, std::string answer, uint64_t* view_bytes, int* lps) {
    const std::string name(1, static_cast<char>('a' + i));
    for (int guard = 0; guard < 1000 && answer != "end\n"; ++guard) {
      ASSERT_EQ(answer.rfind("lp-", 0), 0u) << answer;
      EXPECT_TRUE(IsTurn(answer)) << answer.substr(0, 40);
      const int now = ++computing;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      const std::string pieces = answer.substr(answer.find('\n') + 1);
      ASSERT_GE(pieces.size(), 32u) << answer.substr(0, 40);
      uint64_t bytes;
      std::memcpy(&bytes, pieces.data() + 24, 8);  // "GFSPIEC1", count, memory id, view bytes
      *view_bytes += bytes;
      ++*lps;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      --computing;
      ASSERT_EQ(::pwrite(fd[i], "yield\n", 6, 0), 6) << std::strerror(errno);
      answer = ReadAnswer(fd[i]);
    }
    EXPECT_EQ(answer, "end\n");
  };
  uint64_t a_bytes = 0, b_bytes = 0;
  int a_lps = 0, b_lps = 0;
  {
    // a's first LP was computed and yielded above; count it.
    const std::string pieces = first.substr(first.find('\n') + 1);
    ASSERT_GE(pieces.size(), 32u);
    std::memcpy(&a_bytes, pieces.data() + 24, 8);
    a_lps = 1;
  }
  std::thread tb(run, 1, b_answer, &b_bytes, &b_lps);
  std::thread ta([&] { run(0, ReadAnswer(fd[0]), &a_bytes, &a_lps); });
  ta.join();
  tb.join();
  EXPECT_EQ(most.load(), 1) << "one slot: one job computing at a time";
  EXPECT_EQ(a_bytes, column.size());
  EXPECT_EQ(b_bytes, column.size());
  EXPECT_GT(a_lps, 4);
  EXPECT_GT(b_lps, 4);
  const nlohmann::json turns = nlohmann::json::parse(ReadFile(stats_path))["compute_turns"];
  EXPECT_EQ(turns["turns"].get<int>(), a_lps + b_lps) << turns.dump();
  EXPECT_GT(turns["waited"].get<int>(), 0) << turns.dump();
  EXPECT_EQ(turns["overdue"], 0) << turns.dump();
  EXPECT_EQ(turns["computing"], 0) << turns.dump();
  EXPECT_EQ(::pwrite(fd[2], "yield\n", 6, 0), 6) << "a yield without a turn is harmless";
  EXPECT_EQ(nlohmann::json::parse(ReadFile(stats_path))["compute_turns"]["stray_yields"], 1);
  for (int i = 0; i < 3; ++i) ::close(fd[i]);
}

TEST_F(JobsMount, AJobRemovedWhileItsAnswerWaitsForATurnGetsEnoent) {
  DoMount({"compute_slots=1"});
  int fd[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_NO_FATAL_FAILURE(fd[i] = OpenNextOfAllActiveJob(std::string(1, 'a' + i)));
    ASSERT_GE(fd[i], 0) << std::strerror(errno);
    ASSERT_EQ(::pwrite(fd[i], "turns\n", 6, 0), 6) << std::strerror(errno);
  }
  ASSERT_TRUE(IsTurn(ReadAnswer(fd[0])));
  std::string b_answer;
  std::thread b([&] { b_answer = ReadAnswer(fd[1]); });
  for (int i = 0; i < 200; ++i) {
    if (nlohmann::json::parse(ReadFile(mnt + "/.graphfs/stats"))["compute_turns"]["waiting"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(nlohmann::json::parse(ReadFile(mnt + "/.graphfs/stats"))["compute_turns"]["waiting"], 1);
  ASSERT_EQ(::rmdir((jobs + "/b").c_str()), 0) << std::strerror(errno);
  b.join();
  EXPECT_EQ(b_answer, "error: " + std::string(std::strerror(ENOENT)));
  const nlohmann::json turns = nlohmann::json::parse(ReadFile(mnt + "/.graphfs/stats"))["compute_turns"];
  EXPECT_EQ(turns["waiting"], 0) << turns.dump();
  EXPECT_EQ(turns["jobs"], 1) << turns.dump();
  for (int i = 0; i < 2; ++i) ::close(fd[i]);
}

TEST_F(JobsMount, WithoutSlotsOrWithFewJobsNobodyWaitsForATurn) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  const int cores = CPU_COUNT(&cpus);
  for (const char* option : {"compute_slots=0", "compute_slots=2", "compute_slots=auto"}) {
    SCOPED_TRACE(option);
    DoMount({option});
    int fd[2];
    for (int i = 0; i < 2; ++i) {
      ASSERT_NO_FATAL_FAILURE(fd[i] = OpenNextOfAllActiveJob(std::string(1, 'a' + i)));
      ASSERT_GE(fd[i], 0) << std::strerror(errno);
      ASSERT_EQ(::pwrite(fd[i], "turns\n", 6, 0), 6) << std::strerror(errno);
    }
    // Neither yields, and neither waits: answers are not turns.
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 2; ++i) {
        const std::string answer = ReadAnswer(fd[i]);
        ASSERT_EQ(answer.rfind("lp-", 0), 0u) << answer;
        EXPECT_FALSE(IsTurn(answer)) << answer.substr(0, 40);
      }
    }
    const nlohmann::json turns = nlohmann::json::parse(ReadFile(mnt + "/.graphfs/stats"))["compute_turns"];
    const std::string given = option;
    EXPECT_EQ(turns["slots"], given == "compute_slots=0" ? 0 : given == "compute_slots=2" ? 2 : cores) << turns.dump();
    // auto: turns only once more than twice the cores' jobs take them (two jobs here never do).
    if (given == "compute_slots=auto") {
      EXPECT_EQ(turns["engage_above"], 2 * cores) << turns.dump();
    }
    EXPECT_EQ(turns.value("turns", 0), 0) << turns.dump();
    for (int i = 0; i < 2; ++i) ::close(fd[i]);
    ASSERT_EQ(::rmdir((jobs + "/a").c_str()), 0);
    ASSERT_EQ(::rmdir((jobs + "/b").c_str()), 0);
    mount.Unmount();
  }
}

TEST_F(JobsMount, ABitmapSelectsExactlyTheChunksWithAnActiveSource) {
  DoMount();
  Register("a", "128K");
  std::string bitmap(kVertices / 8, '\0');
  std::set<uint32_t> active;
  for (uint32_t v = 5; v < kVertices; v += 97) {
    active.insert(v);
    bitmap[v / 8] = static_cast<char>(bitmap[v / 8] | (1 << (v % 8)));
  }
  ASSERT_EQ(WriteAndClose(jobs + "/a/active", bitmap), 0);
  std::vector<Partition> lps = Iteration("a");
  CheckAgainstColumn(lps);
  // Every edge of column with an active source is delivered once; every chunk delivered has one.
  auto count_active = [&](const std::string& bytes) {
    uint64_t n = 0;
    for (size_t k = 0; k + kEdgeSize <= bytes.size(); k += kEdgeSize) {
      int32_t source;
      std::memcpy(&source, bytes.data() + k, 4);
      n += active.count(static_cast<uint32_t>(source));
    }
    return n;
  };
  uint64_t delivered = 0;
  for (const Partition& p : lps) {
    delivered += count_active(p.bytes);
    for (const MapLine& m : p.map) EXPECT_GT(count_active(column.substr(m.column_offset, m.length)), 0u) << m.id;
  }
  EXPECT_EQ(delivered, count_active(column));
  EXPECT_GT(delivered, 0u);
  EXPECT_LT(std::accumulate(lps.begin(), lps.end(), uint64_t{0},
                            [](uint64_t s, const Partition& p) { return s + p.bytes.size(); }),
            column.size())
      << "a sparse active set must not read all of column";
}

// `granularity`: vertex (default) views hold only the active sources' edges of a source-sorted
// graph; chunk views hold the whole chunks (for engines that re-enter loaded edges).
TEST_F(JobsMount, GranularityChunkHandsOutTheWholeChunks) {
  const std::string edges = tmp.path() + "/sorted.bin";
  Run({Bin("gen-rmat"), "--scale", std::to_string(kScale), "--weighted", "--seed", "5", "-o", edges});
  std::filesystem::remove_all(graph);
  Run({Bin("preprocess"), "-i", edges, "-o", graph, "-v", std::to_string(kVertices), "-p", "4", "-t", "1",
       "--sort-sources"});
  Run({Bin("graphfs-index"), "--chunk-size", "16K", graph});
  column = ReadFile(graph + "/column");
  DoMount();
  Register("a", "128K");
  EXPECT_EQ(ReadFile(jobs + "/a/granularity"), "vertex\n");
  std::string bitmap(kVertices / 8, '\0');
  std::set<uint32_t> active;
  for (uint32_t v = 3; v < kVertices; v += 61) {
    active.insert(v);
    bitmap[v / 8] = static_cast<char>(bitmap[v / 8] | (1 << (v % 8)));
  }
  // (edges delivered, edges of active sources, chunks) of one iteration
  auto iteration = [&] {
    std::vector<Partition> lps = Iteration("a");
    std::multiset<uint64_t> ids = CheckAgainstColumn(lps);
    uint64_t all = 0, mine = 0;
    for (const Partition& p : lps) {
      for (size_t k = 0; k + kEdgeSize <= p.bytes.size(); k += kEdgeSize) {
        int32_t source;
        std::memcpy(&source, p.bytes.data() + k, 4);
        ++all;
        mine += active.count(static_cast<uint32_t>(source));
      }
    }
    return std::make_tuple(all, mine, std::set<uint64_t>(ids.begin(), ids.end()));
  };
  ASSERT_EQ(WriteAndClose(jobs + "/a/active", bitmap), 0);
  const auto [runs_all, runs_mine, runs_chunks] = iteration();
  EXPECT_EQ(runs_all, runs_mine) << "a vertex-granular view holds only active sources' edges";

  EXPECT_EQ(WriteAndClose(jobs + "/a/granularity", "whole\n"), EINVAL);
  ASSERT_EQ(WriteAndClose(jobs + "/a/granularity", "chunk\n"), 0);
  EXPECT_EQ(ReadFile(jobs + "/a/granularity"), "chunk\n");
  EXPECT_EQ(Status("a")["granularity"], "chunk");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active", bitmap), 0);
  const auto [whole_all, whole_mine, whole_chunks] = iteration();
  EXPECT_EQ(whole_mine, runs_mine) << "the same active edges";
  EXPECT_GT(whole_all, whole_mine) << "whole chunks hold other sources' edges too";
  EXPECT_EQ(whole_chunks, runs_chunks) << "the same chunks";
  uint64_t chunk_bytes = 0;
  for (const Partition& p : Iteration("a")) chunk_bytes += p.bytes.size();  // ended: nothing more
  EXPECT_EQ(chunk_bytes, 0u);
}

// `hold`: with 2, reading `next` ends the job's use of the LP before the one it holds, so the
// LP it read last stays readable (and listed) while it asks for the next; with 1 it goes.
TEST_F(JobsMount, HoldTwoKeepsTheLpBeforeTheLastReadableUntilTheNextAsk) {
  DoMount();
  Register("a", "64K");
  EXPECT_EQ(ReadFile(jobs + "/a/hold"), "1\n");
  EXPECT_EQ(WriteAndClose(jobs + "/a/hold", "3\n"), EINVAL);
  EXPECT_EQ(WriteAndClose(jobs + "/a/hold", "two\n"), EINVAL);
  ASSERT_EQ(WriteAndClose(jobs + "/a/hold", "2\n"), 0);
  EXPECT_EQ(ReadFile(jobs + "/a/hold"), "2\n");
  EXPECT_EQ(Status("a")["hold"], 2);
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  std::vector<std::string> lps;
  std::string delivered;
  for (int guard = 0; guard < 1000; ++guard) {
    const std::string lp = Next("a");
    ASSERT_FALSE(lp.empty()) << "next failed";
    if (!lps.empty()) {
      // The LP before: still the job's, whole, and listed beside the new one.
      const std::string before = jobs + "/a/" + lps.back();
      std::string bytes = ReadFile(before);
      EXPECT_FALSE(bytes.empty()) << lps.back() << " let go at the next ask with hold 2";
      delivered += bytes;
      std::set<std::string> names;
      for (const auto& e : std::filesystem::directory_iterator(jobs + "/a")) names.insert(e.path().filename());
      EXPECT_TRUE(names.count(lps.back())) << lps.back() << " not listed";
      if (lp != "end") {
        EXPECT_TRUE(names.count(lp)) << lp << " not listed";
      }
    }
    if (lps.size() >= 2) {  // the one before that is gone
      EXPECT_EQ(::open((jobs + "/a/" + lps[lps.size() - 2]).c_str(), O_RDONLY), -1);
      EXPECT_EQ(errno, ENOENT);
    }
    if (lp == "end") break;
    lps.push_back(lp);
  }
  ASSERT_GT(lps.size(), 2u);
  EXPECT_EQ(delivered.size(), column.size()) << "every LP read once, the last after the end";
  // A new active set ends the use of the last one.
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  EXPECT_EQ(::open((jobs + "/a/" + lps.back()).c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT);

  // With hold 1 the LP read last goes at the next ask.
  ASSERT_EQ(WriteAndClose(jobs + "/a/hold", "1\n"), 0);
  const std::string first = Next("a"), second = Next("a");
  ASSERT_EQ(first.rfind("lp-", 0), 0u) << first;
  ASSERT_EQ(second.rfind("lp-", 0), 0u) << second;
  EXPECT_EQ(::open((jobs + "/a/" + first).c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST_F(JobsMount, JobsReadingTogetherShareOneLoadThroughTheStripedCache) {
  StripeGraph();
  DoMount({"cache_size=256K"});
  Register("a", "128K");
  Register("b", "128K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  ASSERT_EQ(WriteAndClose(jobs + "/b/active.list", "all"), 0);
  std::vector<Partition> la, lb;
  std::thread ta([&] { la = Iteration("a"); });
  std::thread tb([&] { lb = Iteration("b"); });
  ta.join();
  tb.join();
  std::multiset<uint64_t> ia = CheckAgainstColumn(la), ib = CheckAgainstColumn(lb);
  EXPECT_EQ(ia, ib);
  nlohmann::json st = Stats();
  ASSERT_EQ(st["schedulers"].size(), 1u);
  const nlohmann::json& s = st["schedulers"][0];
  EXPECT_TRUE(s["striped"].get<bool>());
  EXPECT_EQ(s["bytes_delivered"].get<uint64_t>(), 2 * column.size());
  // Each byte was loaded once (a preload that turned out different may add some).
  EXPECT_LE(s["bytes_loaded"].get<uint64_t>(), column.size() + (128u << 10));
  EXPECT_GE(s["bytes_loaded"].get<uint64_t>() + s["bytes_reused"].get<uint64_t>(), column.size());
  EXPECT_EQ(st["jobs"].size(), 2u);
  // The daemon's CPU per delivered byte, by path: the LP files' bytes, their READs' and the
  // loaders' CPU; then `column` read as a striped file.
  const nlohmann::json& lp = st["cpu"]["by_path"]["lp"];
  EXPECT_EQ(lp["bytes"].get<uint64_t>(), 2 * column.size()) << st["cpu"].dump();
  EXPECT_GT(lp["read_cpu_seconds"].get<double>(), 0.0);
  EXPECT_GT(lp["load_cpu_seconds"].get<double>(), 0.0);
  EXPECT_GT(lp["cpu_seconds_per_gb"].get<double>(), 0.0);
  EXPECT_EQ(st["cpu"]["by_path"]["striped"]["bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(ReadFile(mnt + "/graph/column"), column);
  const nlohmann::json after = Stats()["cpu"];
  EXPECT_EQ(after["by_path"]["striped"]["bytes"].get<uint64_t>(), column.size()) << after.dump();
  EXPECT_GT(after["by_path"]["striped"]["read_cpu_seconds"].get<double>(), 0.0);
  EXPECT_GT(after["user_seconds"].get<double>() + after["system_seconds"].get<double>(), 0.0);
  // The daemon's memory by use: the index the schedule loaded is counted, the rest adds up.
  const nlohmann::json mem = Stats()["memory"];
  EXPECT_GT(mem["rss"].get<uint64_t>(), 0u) << mem.dump();
  EXPECT_GE(mem["peak_rss"].get<uint64_t>(), mem["rss"].get<uint64_t>());
  EXPECT_GT(mem["by_use"]["indexes"].get<uint64_t>(), 0u) << mem.dump();
  // Without memory= the cache is cache_size and, while the graph has jobs, what its LP window
  // lends it of the memory that window would keep idle (MemoryBudget::Lend).
  const uint64_t lent = Stats()["memory_budget"]["lent"].get<uint64_t>();
  EXPECT_GT(lent, 0u) << "the graph has jobs";
  EXPECT_LE(mem["by_use"]["cache_admitted"].get<uint64_t>(), (256u << 10) + lent) << "cache_size=256K and the loan";
  uint64_t sum = 0;
  for (const auto& [k, v] : mem["by_use"].items()) sum += v.get<uint64_t>();
  EXPECT_GE(sum, mem["rss"].get<uint64_t>()) << "`other` is the rest of the resident memory";
}

// memory=: one budget. While the graph has a job, its index and the memory its LPs own (not the
// window's ceiling: what they hold) are set aside and the cache gets the rest; when the job
// goes, the cache gets them back.
TEST_F(JobsMount, TheMemoryBudgetGivesTheCacheWhatAGraphInUseLeaves) {
  StripeGraph();
  DoMount({"memory=64M", "lp_memory=4M", "readahead_mem=2M"});
  nlohmann::json b = Stats()["memory_budget"];
  ASSERT_TRUE(b.is_object()) << Stats().dump();
  EXPECT_EQ(b["total"].get<uint64_t>(), 64u << 20);
  EXPECT_EQ(b["staging"].get<uint64_t>(), 2u << 20);
  EXPECT_EQ(b["reserved"].get<uint64_t>(), 0u);
  EXPECT_EQ(b["cache_capacity"].get<uint64_t>(), (64u << 20) - (2u << 20));
  EXPECT_EQ(Stats()["cache"]["capacity"].get<uint64_t>(), (64u << 20) - (2u << 20));
  Register("a", "128K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  std::vector<Partition> la = Iteration("a");
  CheckAgainstColumn(la);
  nlohmann::json st = Stats();
  b = st["memory_budget"];
  const uint64_t index = st["schedulers"][0]["memory"]["index_bytes"].get<uint64_t>();
  EXPECT_GT(index, 0u);
  EXPECT_EQ(b["reservations"].get<uint64_t>(), 1u);
  const uint64_t reserved = b["reserved"].get<uint64_t>();
  EXPECT_GE(reserved, index) << b.dump();
  EXPECT_LE(reserved, index + (4u << 20)) << "at most the window's own memory beside the index: " << b.dump();
  EXPECT_EQ(st["cache"]["capacity"].get<uint64_t>(), b["units_capacity"].get<uint64_t>()) << "decoded units";
  // Staging is charged what it held at the last samples (at most its ceiling unless it holds more).
  EXPECT_EQ(b["cache_capacity"].get<uint64_t>(), (64u << 20) - b["staging"].get<uint64_t>() - reserved);
  EXPECT_TRUE(st["schedulers"][0]["finder_inverted_form"].get<bool>()) << "its ~150 KiB are within a 32nd of 64M";
  EXPECT_LE(st["cache"]["used"].get<uint64_t>(), st["cache"]["capacity"].get<uint64_t>());
  ASSERT_EQ(::rmdir((jobs + "/a").c_str()), 0);
  // The schedule goes when no job holds it (at the latest when the reclaimer looks for users).
  for (int i = 0; i < 200 && Stats()["memory_budget"]["reservations"].get<uint64_t>() != 0; ++i) ::usleep(20000);
  EXPECT_EQ(Stats()["memory_budget"]["reserved"].get<uint64_t>(), 0u);
  EXPECT_EQ(Stats()["cache"]["capacity"].get<uint64_t>(), (64u << 20) - (2u << 20));
}

// Under a budget that the active-chunk finder's inverted form would take more than a 32nd of
// (here ~150 KiB of 2 MiB), the finder keeps the forward form alone: the reservation is smaller
// by it, and the LPs are the same.
TEST_F(JobsMount, ASmallBudgetKeepsTheIndexWithoutItsInvertedForm) {
  StripeGraph();
  DoMount({"memory=2M", "lp_memory=256K", "readahead_mem=256K"});
  Register("a", "128K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  CheckAgainstColumn(Iteration("a"));
  // A sparse set: the query that the inverted form would have answered.
  std::string bitmap(kVertices / 8, '\0');
  for (uint32_t v = 7; v < kVertices; v += 101) bitmap[v / 8] = static_cast<char>(bitmap[v / 8] | (1 << (v % 8)));
  ASSERT_EQ(WriteAndClose(jobs + "/a/active", bitmap), 0);
  std::vector<Partition> sparse = Iteration("a");
  EXPECT_FALSE(sparse.empty());
  CheckAgainstColumn(sparse);
  const nlohmann::json st = Stats();
  EXPECT_FALSE(st["schedulers"][0]["finder_inverted_form"].get<bool>()) << st["schedulers"][0].dump();
  EXPECT_EQ(st["schedulers"][0]["active_set_queries"].get<uint64_t>(), 2u);
  ASSERT_EQ(::rmdir((jobs + "/a").c_str()), 0);
}

// The daemon's threads (FUSE workers, I/O workers, LP loaders) run at nice=N (default -5), so
// they wake ahead of the jobs' compute threads; nice=0 leaves them as inherited.
std::vector<int> ThreadNiceValues(int pid) {
  std::vector<int> values;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::string stat = ReadFile(t.path().string() + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));  // field 3 (state) on
    std::string f;
    for (int i = 3; i <= 19 && (fields >> f); ++i) {
      if (i == 19) values.push_back(std::stoi(f));
    }
  }
  return values;
}

TEST_F(JobsMount, TheDaemonsThreadsRunAtItsNiceValue) {
  if (::geteuid() != 0) GTEST_SKIP() << "lowering a nice value needs root";
  StripeGraph();
  DoMount({"nice=-7"});
  Register("a", "128K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  CheckAgainstColumn(Iteration("a"));  // the loaders and I/O workers exist now
  std::vector<int> nice = ThreadNiceValues(mount.pid());
  ASSERT_GT(nice.size(), 4u);
  for (int n : nice) EXPECT_EQ(n, -7);
  mount.Unmount();
  DoMount({"nice=0"});
  const int own = ::getpriority(PRIO_PROCESS, 0);
  for (int n : ThreadNiceValues(mount.pid())) EXPECT_EQ(n, own) << "as inherited";
}

TEST_F(JobsMount, BadInputGetsEinvalAndAMessage) {
  DoMount();
  EXPECT_NE(::mkdir((jobs + "/.hidden").c_str(), 0755), 0);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_NE(::mkdir((jobs + "/" + std::string(65, 'x')).c_str(), 0755), 0);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_NE(::mkdir((jobs + "/a b").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((jobs + "/a").c_str(), 0755), 0);
  EXPECT_NE(::mkdir((jobs + "/a").c_str(), 0755), 0);
  EXPECT_EQ(errno, EEXIST);

  EXPECT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), EINVAL) << "no graph yet";
  EXPECT_EQ(WriteAndClose(jobs + "/a/graph", "/etc"), EINVAL);
  EXPECT_EQ(WriteAndClose(jobs + "/a/graph", "graph/../../x"), EINVAL);
  EXPECT_EQ(WriteAndClose(jobs + "/a/graph", "nothing-here"), ENOENT);
  EXPECT_NE(Status("a")["last_error"].get<std::string>().find("not a graph directory"), std::string::npos);
  EXPECT_EQ(WriteAndClose(jobs + "/a/partition_size", "lots"), EINVAL);
  EXPECT_EQ(WriteAndClose(jobs + "/a/partition_size", "0"), EINVAL);
  ASSERT_EQ(WriteAndClose(jobs + "/a/graph", mnt + "/graph"), 0) << "an absolute path inside the mount";
  EXPECT_EQ(Status("a")["graph"], "graph");

  EXPECT_EQ(WriteAndClose(jobs + "/a/active", std::string(10, '\xff')), EINVAL) << "too short";
  EXPECT_NE(Status("a")["last_error"].get<std::string>().find("expected a bitmap of 512 bytes"), std::string::npos);
  EXPECT_EQ(WriteAndClose(jobs + "/a/active", std::string(513, '\0')), EINVAL) << "too long";
  EXPECT_EQ(WriteAndClose(jobs + "/a/active.list", "1 2 4096"), EINVAL) << "past the last vertex";
  EXPECT_EQ(WriteAndClose(jobs + "/a/active.list", "1 -2"), EINVAL);
  EXPECT_EQ(WriteAndClose(jobs + "/a/active.list", "7 8 4095"), 0);
  EXPECT_EQ(Status("a")["active_vertices"], 3u);
  EXPECT_GT(Status("a")["errors"].get<uint64_t>(), 5u);

  // Vertex counts that are not a multiple of 8 are refused a bit past V in the last byte.
  // (This graph has 4096 vertices, so use the list form to check the V boundary above.)
  int err = 0;
  EXPECT_EQ(Next("nobody-registered", &err), "");
  EXPECT_EQ(err, ENOENT);

  // A stale index is refused with the reason, not used.
  ASSERT_EQ(::rmdir((jobs + "/a").c_str()), 0);
  ASSERT_EQ(::mkdir((jobs + "/b").c_str(), 0755), 0);
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (graph + "/column").c_str(), times, 0), 0);
  EXPECT_NE(WriteAndClose(jobs + "/b/graph", "graph"), 0);
  EXPECT_NE(Status("b")["last_error"].get<std::string>().find("graphfs-index"), std::string::npos)
      << Status("b")["last_error"];
}

// Runs `body` in a child as nobody:nogroup; returns its exit status (body's return value).
int AsNobody(const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

TEST_F(JobsMount, OtherUsersCannotTouchAJob) {
  for (const std::string& d : {tmp.path(), src, graph, mnt}) ::chmod(d.c_str(), 0755);
  DoMount({"allow_other"});
  Register("roots", "64K");
  // Each check returns 0 when the expected error came, else a distinct code.
  EXPECT_EQ(AsNobody([&] {
              if (WriteAndClose(jobs + "/roots/active.list", "all") != EACCES) return 1;
              if (WriteAndClose(jobs + "/roots/graph", "graph") != EACCES) return 2;
              if (::open((jobs + "/roots/next").c_str(), O_RDONLY) >= 0 || errno != EACCES) return 3;
              if (::open((jobs + "/roots/lease").c_str(), O_RDONLY) >= 0 || errno != EACCES) return 4;
              if (::rmdir((jobs + "/roots").c_str()) == 0 || (errno != EPERM && errno != EACCES)) return 5;
              if (::open((jobs + "/roots/status").c_str(), O_RDONLY) < 0) return 6;  // status is public
              // Its own job works.
              if (::mkdir((jobs + "/mine").c_str(), 0755) != 0) return 7;
              if (WriteAndClose(jobs + "/mine/graph", "graph") != 0) return 8;
              if (WriteAndClose(jobs + "/mine/active.list", "1") != 0) return 9;
              return 0;
            }),
            0);
  struct stat st;
  ASSERT_EQ(::stat((jobs + "/mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(Status("roots")["errors"], 0u);
  ASSERT_EQ(::stat((jobs + "/roots").c_str(), &st), 0) << "still there";
  ASSERT_EQ(::rmdir((jobs + "/mine").c_str()), 0) << "root may remove any job";
}

// The daemon reads graphs as root, so a job only gets a graph its writer could read
// itself, and never one outside SOURCE through a symlink.
TEST_F(JobsMount, AGraphTheWriterCannotReadOrOutsideTheSourceIsRefused) {
  for (const std::string& d : {tmp.path(), src, graph, mnt}) ::chmod(d.c_str(), 0755);
  std::filesystem::copy(graph, tmp.Sub("outside"), std::filesystem::copy_options::recursive);
  std::filesystem::create_directory_symlink(tmp.path() + "/outside", src + "/escape");
  std::filesystem::create_directory_symlink("graph", src + "/alias");
  DoMount({"allow_other"});
  ASSERT_EQ(::mkdir((jobs + "/r").c_str(), 0755), 0);
  EXPECT_EQ(WriteAndClose(jobs + "/r/graph", "escape"), EACCES) << "a symlink led the daemon out of SOURCE";
  EXPECT_NE(Status("r")["last_error"].get<std::string>().find("outside"), std::string::npos);
  EXPECT_EQ(WriteAndClose(jobs + "/r/graph", "alias"), 0) << "a symlink that stays inside is fine";
  ::chmod((graph + "/column").c_str(), 0600);
  EXPECT_EQ(AsNobody([&] {
              if (::mkdir((jobs + "/n").c_str(), 0755) != 0) return 1;
              if (WriteAndClose(jobs + "/n/graph", "graph") != EACCES) return 2;
              return 0;
            }),
            0);
  EXPECT_NE(Status("n")["last_error"].get<std::string>().find("column"), std::string::npos);
  ::chmod((graph + "/column").c_str(), 0644);
  EXPECT_EQ(AsNobody([&] { return WriteAndClose(jobs + "/n/graph", "graph"); }), 0);
  ::chmod(graph.c_str(), 0700);
  EXPECT_EQ(AsNobody([&] { return WriteAndClose(jobs + "/n/graph", "graph"); }), EACCES);
}

// A child registers job `b` holding a lease, and reads `next` once or twice; returns its pid.
pid_t StartLeasedJob(const std::string& jobs, int reads) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::mkdir((jobs + "/b").c_str(), 0755) != 0) ::_exit(1);
    if (WriteAndClose(jobs + "/b/graph", "graph") != 0) ::_exit(2);
    if (WriteAndClose(jobs + "/b/partition_size", "64K") != 0) ::_exit(3);
    int lease = ::open((jobs + "/b/lease").c_str(), O_RDONLY);
    if (lease < 0) ::_exit(4);
    if (WriteAndClose(jobs + "/b/active.list", "all") != 0) ::_exit(5);
    for (int i = 0; i < reads; ++i) {
      int fd = ::open((jobs + "/b/next").c_str(), O_RDONLY);
      char buf[32];
      if (fd < 0 || ::read(fd, buf, sizeof buf) <= 0) ::_exit(6);
      ::close(fd);
    }
    ::pause();
    ::_exit(0);
  }
  return pid;
}

// Kills and reaps the child when the test ends, failed or not (an ASSERT returns early).
struct KillAtExit {
  pid_t pid;
  ~KillAtExit() {
    if (::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
  }
};

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Waits up to `seconds` for `pred`.
bool WaitFor(const std::function<bool()>& pred, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

// No LP of the graph is in use any more: none live or loading, none holding units the cache
// refused, and what the graph's shared memory still holds is the cache's units loaded there
// (each in granules of 64 KiB), not LPs.
bool NoLpInUse(const nlohmann::json& stats) {
  const nlohmann::json& cache = stats["cache"];
  // Under a memory budget (the default) the graph's schedule goes with its last job, LPs and all.
  if (stats["schedulers"].empty()) return cache["held"].get<uint64_t>() == 0;
  const nlohmann::json& s = stats["schedulers"][0];
  auto num = [](const nlohmann::json& o, const char* k) { return o[k].get<uint64_t>(); };
  const uint64_t units_bytes = num(cache, "used") + num(cache, "staged") +
                               (num(cache, "units") + num(cache, "staged_units")) * (64u << 10);
  return num(s["window"], "live_bytes") == 0 && num(s["window"], "loading_bytes") == 0 && num(cache, "held") == 0 &&
         num(s["shared_memory"], "used_bytes") <= units_bytes;
}

// lp_memory=128K: LPs of at most 32K (a quarter), four of them live at once. A job waits for
// another only when those four are all held or queued for a job that does not move on.
TEST_F(JobsMount, AJobKilledWhileWaitingDiesAtOnceAndIsRemoved) {
  DoMount({"lp_memory=128K"});
  Register("a", "64K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  ASSERT_EQ(Next("a").rfind("lp-", 0), 0u);  // a holds an LP and has the next three queued ...
  pid_t child = StartLeasedJob(jobs, 5);  // ... which b shares; b's fifth LP finds the window full
  KillAtExit reap{child};
  ASSERT_TRUE(WaitFor([&] { return Exists(jobs + "/b") && Status("b")["state"] == "waiting"; }, 20))
      << "b did not start waiting";
  const nlohmann::json window = Stats()["schedulers"][0]["window"];
  EXPECT_EQ(window["live_lps"].get<uint64_t>(), 4u) << window.dump();
  EXPECT_LE(window["live_bytes"].get<uint64_t>(), 128u << 10) << window.dump();
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_TRUE(WaitFor([&] { return ::waitpid(child, &status, WNOHANG) == child; }, 10))
      << "a job killed in a blocking read of next must not hang";
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(WaitFor([&] { return !Exists(jobs + "/b"); }, 10)) << "its lease closed: the job is gone";
  // a goes on alone to the end of its iteration.
  std::vector<Partition> rest = Iteration("a");
  EXPECT_FALSE(rest.empty());
}

// A fast job is not held by a slow one until the window is full; a job killed while it holds an
// LP frees the window.
TEST_F(JobsMount, AJobKilledWhileHoldingAnLpIsNotWaitedOn) {
  DoMount({"lp_memory=128K"});
  Register("a", "64K");
  ASSERT_EQ(WriteAndClose(jobs + "/a/active.list", "all"), 0);
  pid_t child = StartLeasedJob(jobs, 1);  // b takes an LP and keeps it
  KillAtExit reap{child};
  ASSERT_TRUE(WaitFor([&] { return Exists(jobs + "/b") && Status("b")["state"] == "holding"; }, 20));
  std::set<std::string> seen;  // LPs may be published out of order: two load at once
  for (int k = 1; k <= 4; ++k) {
    const std::string lp = Next("a");
    ASSERT_EQ(lp.rfind("lp-", 0), 0u) << lp << ": a is not held by b";
    seen.insert(lp);
  }
  EXPECT_EQ(seen.size(), 4u);
  std::string fifth;
  std::atomic<bool> answered{false};
  std::thread t([&] {
    fifth = Next("a");  // waits: b's LP and the three queued for b fill the window
    answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(answered.load()) << "the window is full: the next LP must wait for b";
  EXPECT_EQ(Status("a")["state"], "waiting");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  t.join();  // answered once b is gone
  ASSERT_EQ(fifth.rfind("lp-", 0), 0u) << fifth;
  EXPECT_FALSE(seen.count(fifth)) << "a new LP";
  const nlohmann::json s = Stats()["schedulers"][0];
  EXPECT_GT(s["window_full_while_waiting_seconds"].get<double>(), 0.2) << s.dump();
}

// The client maps the graph's LP memory (`memory`, in FUSE passthrough): each piece of a job's
// view holds column's bytes, the pieces together are what lp-SEQ serves through the daemon,
// and two jobs' views of one LP lie at the same place in that memory: one copy for both.
TEST_F(JobsMount, JobsMapOneSharedCopyOfEachLpThatHoldsTheLpFilesBytes) {
  StripeGraph();
  DoMount({});
  if (!Stats()["passthrough"]["active"].get<bool>()) GTEST_SKIP() << "no FUSE passthrough here";
  {
    auto a = graphfs_client::Job::Init(mnt + "/graph", 64 << 10, "a");
    auto b = graphfs_client::Job::Init(mnt + "/graph", 64 << 10, "b");
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_TRUE(b.ok()) << b.error().message;
    ASSERT_TRUE(a->SetAllActive().ok());
    ASSERT_TRUE(b->SetAllActive().ok());
    uint64_t shared_lps = 0, view_bytes = 0;
    for (int guard = 0; guard < 1000; ++guard) {
      auto la = a->Next();
      auto lb = b->Next();
      ASSERT_TRUE(la.ok() && lb.ok()) << (la.ok() ? lb.error().message : la.error().message);
      ASSERT_EQ(la->end, lb->end);
      if (la->end) break;
      ASSERT_TRUE(la->mapped() && lb->mapped());
      EXPECT_TRUE(a->maps_lps());
      EXPECT_LT(la->fd(), 0) << "a mapped LP opens no file";
      std::string view;
      for (const graphfs_client::Piece& p : la->pieces) {
        ASSERT_LE(p.column_offset + p.length, column.size());
        EXPECT_TRUE(std::string_view(p.data, p.length) == std::string_view(column).substr(p.column_offset, p.length))
            << la->path << ": a piece does not hold column's bytes";
        view.append(p.data, p.length);
      }
      EXPECT_EQ(view.size(), la->bytes);
      view_bytes += view.size();
      EXPECT_TRUE(view == ReadFile(la->path)) << la->path << ": the mapped view differs from the file's";
      if (la->seq == lb->seq) {
        ++shared_lps;
        EXPECT_EQ(ReadFile(la->path + ".pieces"), ReadFile(lb->path + ".pieces")) << "one LP, one place in memory";
      }
      const nlohmann::json stats = Stats();
      EXPECT_EQ(stats["passthrough"]["backing_ids"].get<uint64_t>(), 2u) << "each job's `memory`, in passthrough";
      const nlohmann::json shared = stats["schedulers"][0]["shared_memory"];
      EXPECT_GT(shared["used_bytes"].get<uint64_t>(), 0u) << shared.dump();
      EXPECT_EQ(shared["heap_fallbacks"].get<uint64_t>(), 0u) << shared.dump();
      ASSERT_TRUE(a->Done().ok());
      ASSERT_TRUE(b->Done().ok());
    }
    EXPECT_GT(shared_lps, 0u);
    EXPECT_EQ(view_bytes, column.size()) << "all active: every chunk once";
  }
  // Both jobs gone: their `memory` opens are closed, and no LP is left in use.
  EXPECT_TRUE(WaitFor([&] { return Stats()["passthrough"]["backing_ids"].get<uint64_t>() == 0; }, 10));
  EXPECT_TRUE(WaitFor([&] { return NoLpInUse(Stats()); }, 10)) << Stats()["schedulers"].dump() << Stats()["cache"].dump();
  // The split at the daemon's peak (sampled every 100 ms), kept after the peak has passed.
  ASSERT_TRUE(WaitFor([&] { return Stats()["memory"]["at_peak"].contains("by_use"); }, 5));
  const nlohmann::json at_peak = Stats()["memory"]["at_peak"];
  EXPECT_GT(at_peak["peak_rss"].get<uint64_t>(), 0u);
  // The kernel's VmHWM is the larger of its recorded high-water mark and the current RSS, which it
  // reads from per-CPU counters without summing them exactly: once the heap is trimmed (RSS falls
  // without a new mark), two reads of the same peak may differ by a few pages.
  constexpr uint64_t kRssCounterSlack = 1ull << 20;
  EXPECT_LE(at_peak["peak_rss"].get<uint64_t>(), Stats()["memory"]["peak_rss"].get<uint64_t>() + kRssCounterSlack);
  // What by_use.lps is made of, kept with the split: the windows' figures and the cache's held units.
  ASSERT_TRUE(at_peak.contains("lps")) << at_peak.dump();
  const nlohmann::json now = Stats();
  EXPECT_EQ(now["memory"]["lps"]["live_bytes"].get<uint64_t>(),
            now["schedulers"].empty() ? 0u : now["schedulers"][0]["window"]["live_bytes"].get<uint64_t>());
  EXPECT_EQ(now["memory"]["lps"]["held_bytes"].get<uint64_t>(), now["cache"]["held"].get<uint64_t>());
}

// `memory` is read-only for its job, and its mapping too.
TEST_F(JobsMount, TheSharedMemoryCannotBeWrittenOrMappedWritable) {
  StripeGraph();
  DoMount({});
  if (!Stats()["passthrough"]["active"].get<bool>()) GTEST_SKIP() << "no FUSE passthrough here";
  Register("a", "64K");
  const std::string memory = jobs + "/a/memory";
  EXPECT_EQ(::open(memory.c_str(), O_RDWR), -1);
  EXPECT_EQ(errno, EACCES);
  const int fd = ::open(memory.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_GE(st.st_size, 64ll << 30) << "sparse: the whole memory is mapped once";
  void* rw = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  EXPECT_EQ(rw, MAP_FAILED);
  EXPECT_EQ(errno, EACCES);
  void* ro = ::mmap(nullptr, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(ro, MAP_FAILED) << std::strerror(errno);
  ::munmap(ro, 1 << 20);
  ::close(fd);
}

// A job that maps its graph's memory cannot switch graphs under the mapping: the open `memory`
// has the old graph's memory as its backing file until it is closed.
TEST_F(JobsMount, AJobCannotChangeGraphWhileItsMemoryIsOpen) {
  const std::string other = tmp.Sub("src/other");
  std::filesystem::remove(other);  // Sub made it: cp would copy into it
  Run({"cp", "-a", graph, other});
  Run({Bin("graphfs-index"), "--chunk-size", "16K", other});
  DoMount({});
  if (!Stats()["passthrough"]["active"].get<bool>()) GTEST_SKIP() << "no FUSE passthrough here";
  Register("a", "64K");
  const int fd = ::open((jobs + "/a/memory").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  EXPECT_EQ(WriteAndClose(jobs + "/a/graph", "other"), EBUSY);
  EXPECT_NE(ReadFile(jobs + "/a/status").find("close `memory` first"), std::string::npos) << ReadFile(jobs + "/a/status");
  ::close(fd);
  EXPECT_TRUE(WaitFor([&] { return WriteAndClose(jobs + "/a/graph", "other") == 0; }, 5))
      << "closed: the job may change graphs";
  EXPECT_EQ(ReadFile(jobs + "/a/graph"), "other\n");
}

// Without passthrough the client reads lp-SEQ through the daemon, with the same bytes.
TEST_F(JobsMount, WithoutPassthroughTheClientReadsTheLpFiles) {
  StripeGraph();
  DoMount({"passthrough=off"});
  auto a = graphfs_client::Job::Init(mnt + "/graph", 64 << 10, "a");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->SetAllActive().ok());
  uint64_t view_bytes = 0;
  for (int guard = 0; guard < 1000; ++guard) {
    auto lp = a->Next();
    ASSERT_TRUE(lp.ok()) << lp.error().message;
    if (lp->end) break;
    EXPECT_FALSE(lp->mapped());
    ASSERT_GE(lp->fd(), 0);
    for (const graphfs_client::ChunkExtent& c : lp->chunks) {
      std::string bytes(c.length, '\0');
      ASSERT_EQ(::pread(lp->fd(), bytes.data(), c.length, static_cast<off_t>(c.lp_offset)), static_cast<ssize_t>(c.length));
      EXPECT_TRUE(bytes == column.substr(c.column_offset, c.length));
    }
    view_bytes += lp->bytes;
  }
  EXPECT_FALSE(a->maps_lps());
  EXPECT_EQ(view_bytes, column.size());
}

// A job killed while it maps an LP leaves nothing: its `memory` open and its LPs are released.
TEST_F(JobsMount, AJobKilledWhileMappingAnLpLeavesNothingBehind) {
  StripeGraph();
  DoMount({});
  if (!Stats()["passthrough"]["active"].get<bool>()) GTEST_SKIP() << "no FUSE passthrough here";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const std::string graph_dir = mnt + "/graph";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    auto job = graphfs_client::Job::Init(graph_dir, 64 << 10, "b");
    if (!job.ok() || !job->SetAllActive().ok()) ::_exit(1);
    auto lp = job->Next();
    if (!lp.ok() || lp->end || !lp->mapped()) ::_exit(2);
    volatile char sum = 0;
    for (const graphfs_client::Piece& p : lp->pieces) sum = static_cast<char>(sum + p.data[0]);
    if (::write(ready[1], "r", 1) != 1) ::_exit(3);
    ::pause();
    ::_exit(0);
  }
  KillAtExit reap{child};
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the child could not map an LP";
  ::close(ready[0]);
  EXPECT_EQ(Stats()["passthrough"]["backing_ids"].get<uint64_t>(), 1u);
  EXPECT_GT(Stats()["schedulers"][0]["shared_memory"]["used_bytes"].get<uint64_t>(), 0u);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(WaitFor([&] { return !Exists(jobs + "/b"); }, 10));
  EXPECT_TRUE(WaitFor([&] { return Stats()["passthrough"]["backing_ids"].get<uint64_t>() == 0; }, 10));
  EXPECT_TRUE(WaitFor([&] { return NoLpInUse(Stats()); }, 10)) << Stats()["schedulers"].dump() << Stats()["cache"].dump();
}

}  // namespace
}  // namespace graphfs::testing
