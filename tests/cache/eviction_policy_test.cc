#include "cache/eviction_policy.h"

#include <gtest/gtest.h>

#include <limits>

namespace graphfs::cache {
namespace {

class FakeUnit final : public UnitView {
 public:
  explicit FakeUnit(UnitKey key, bool part_way = false) : key_(key), part_way_(part_way) {}
  const UnitKey& key() const override { return key_; }
  bool PartWay(int64_t) const override { return part_way_; }
  bool TakenInVisit(uint32_t, int64_t) const override { return false; }

 private:
  UnitKey key_;
  bool part_way_;
};

TEST(EvictionPolicy, FactoryKnowsItsNamesAndRefusesOthers) {
  ASSERT_EQ(EvictionPolicyNames().front(), "priority");  // the default first
  for (const std::string& name : EvictionPolicyNames()) {
    auto p = NewEvictionPolicy(name, {});
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->name(), name);
  }
  EXPECT_EQ(NewEvictionPolicy("mru", {}), nullptr);
  EXPECT_EQ(NewEvictionPolicy("", {}), nullptr);
}

TEST(EvictionPolicy, LruTakesTheOrderAsItComesUntilEnoughIsFree) {
  auto lru = NewEvictionPolicy("lru", {});
  EXPECT_EQ(lru->Rank(5, 3.0), 0.0);  // recency alone orders the units
  FakeUnit a({1, 0}), b({1, 1}), c({1, 2}), n({1, 3});
  std::vector<EvictionCandidate> residents = {{&a, 0, 10}, {&b, 0, 10}, {&c, 0, 10}};
  std::vector<size_t> victims;
  lru->ChooseVictims({&n, 0, 10}, residents, 15, 0, &victims);
  EXPECT_EQ(victims, (std::vector<size_t>{0, 1}));
}

TEST(EvictionPolicy, PriorityRanksVisitsTimesWeightAndKeepsWhatItBeats) {
  auto p = NewEvictionPolicy("priority", {});
  EXPECT_EQ(p->Rank(3, 2.0), 6.0);
  // No stream predicts anything: the static rank decides, and the newcomer evicts only
  // residents it outranks.
  FakeUnit low({1, 0}), high({1, 1}), n({1, 2});
  std::vector<EvictionCandidate> residents = {{&low, 1.0, 10}, {&high, 9.0, 10}};
  std::vector<size_t> victims;
  p->ChooseVictims({&n, 5.0, 10}, residents, 20, 0, &victims);
  EXPECT_EQ(victims, (std::vector<size_t>{0}));  // not enough: the cache will refuse the newcomer
  // A unit some process is part-way through is needed now; it is never chosen before one
  // nobody will read.
  FakeUnit busy({1, 4}, /*part_way=*/true);
  residents = {{&busy, 0.0, 10}, {&high, 9.0, 10}};
  victims.clear();
  p->ChooseVictims({&n, 10.0, 10}, residents, 10, 0, &victims);
  EXPECT_EQ(victims, (std::vector<size_t>{1}));
}

TEST(EvictionPolicy, AtAnEqualRankANewcomerBeatsOnlyResidentsNobodyReadSinceItsPreviousVisit) {
  auto p = NewEvictionPolicy("priority", {});
  FakeUnit stale({1, 0}), fresh({1, 1}), n({2, 0});
  // `stale` was last read at 100, `fresh` at 300; the newcomer was read before at 200.
  std::vector<EvictionCandidate> residents = {{&stale, 1.0, 10, 100}, {&fresh, 1.0, 10, 300}};
  std::vector<size_t> victims;
  p->ChooseVictims({&n, 1.0, 10, 200}, residents, 20, 0, &victims);
  EXPECT_EQ(victims, (std::vector<size_t>{0}));
  // A newcomer never read before beats no resident of its rank.
  victims.clear();
  p->ChooseVictims({&n, 1.0, 10, 0}, residents, 10, 0, &victims);
  EXPECT_TRUE(victims.empty());
  // A lower rank still loses, however recent its previous visit.
  victims.clear();
  p->ChooseVictims({&n, 0.0, 10, 1000}, residents, 10, 0, &victims);
  EXPECT_TRUE(victims.empty());
}

}  // namespace
}  // namespace graphfs::cache
