// core/setting.hpp: the one parser of settings. Whole numbers (GDAP_PLAN_MAX_RUNS, GDAP_CMA_PACK_BELOW,
// GDAP_IO_THREADS): decimal digits alone within the setting's range; named choices (GDAP_GROUP_COPY,
// GDAP_PEER_ORDER, ...): one of the names exactly. Anything else, the empty string included, is
// refused with the variable, the value and the rule.
#include "core/error.hpp"
#include "core/setting.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr const char* kName = "GDAP_TEST_WHOLE_SETTING";
const gdap::WholeSetting kSetting{kName, 2, 1000, "a whole number from 2 to 1000"};
const gdap::WholeSetting kWithNegative{kName, 0, INT64_MAX, "a whole number of widgets", "negative (widgets >= 0)"};

// What parse() makes of the variable set to `value`: the error it throws, or what it took.
template <typename Parse>
std::string outcome(const char* value, Parse parse) {
  ::setenv(kName, value, 1);
  try {
    const auto got = parse();
    ::unsetenv(kName);
    return got ? "accepted as " + std::to_string(*got) : "taken as unset";
  } catch (const gdap::Error& e) {
    ::unsetenv(kName);
    EXPECT_EQ(e.status(), GDAP_ERR_INVALID_ARGUMENT) << e.what();
    return e.what();
  }
}

// The error whole_setting(s) throws with the variable set to `value`.
std::string refusal(const gdap::WholeSetting& s, const char* value) {
  return outcome(value, [&] { return gdap::whole_setting(s); });
}

TEST(WholeSetting, UnsetIsNone) {
  ::unsetenv(kName);
  EXPECT_FALSE(gdap::whole_setting(kSetting).has_value()) << "rule: an unset variable leaves the default";
}

TEST(WholeSetting, DigitsInRangeAreTaken) {
  const std::vector<std::pair<const char*, int64_t>> taken = {{"2", 2}, {"1000", 1000}, {"0042", 42}};
  for (const auto& [text, want] : taken) {
    ::setenv(kName, text, 1);
    EXPECT_EQ(gdap::whole_setting(kSetting), want) << text;
  }
  ::setenv(kName, "9223372036854775807", 1);
  EXPECT_EQ(gdap::whole_setting(kWithNegative), INT64_MAX) << "rule: INT64_MAX itself fits";
  ::unsetenv(kName);
}

TEST(WholeSetting, AnythingElseIsRefusedNamingVariableValueAndRule) {
  for (const char* bad : {"", " 5", "5 ", "+5", "-1", "1e3", "12abc", "0x10", "1180591620717411303424",
                          "9223372036854775808", "1", "1001", "-"}) {
    EXPECT_EQ(refusal(kSetting, bad), std::string(kName) + "='" + bad + "': not a whole number from 2 to 1000");
  }
}

TEST(WholeSetting, NegativeNumbersGetTheirOwnWordsWhereGiven) {
  for (const char* negative : {"-1", "-0", "-99999999999999999999"}) {
    EXPECT_EQ(refusal(kWithNegative, negative), std::string(kName) + "='" + negative + "': negative (widgets >= 0)");
  }
  for (const char* bad : {"-", "--1", "-1x", "- 1", "99999999999999999999"}) {
    EXPECT_EQ(refusal(kWithNegative, bad), std::string(kName) + "='" + bad + "': not a whole number of widgets");
  }
}

// Named choices (GDAP_GROUP_COPY, GDAP_PEER_ORDER, GDAP_CMA_ORDER, GDAP_MPI_EXCHANGE): exactly one of
// the names, case included; the empty string is set to no choice, refused like an empty number.
std::string choice_refusal(const char* value) {
  return outcome(value, [] { return gdap::choice_setting(kName, {"push", "pull"}); });
}

TEST(ChoiceSetting, UnsetIsNoneAndNamesAreTaken) {
  ::unsetenv(kName);
  EXPECT_FALSE(gdap::choice_setting(kName, {"push", "pull"}).has_value()) << "rule: unset leaves the default";
  EXPECT_EQ(choice_refusal("push"), "accepted as 0");
  EXPECT_EQ(choice_refusal("pull"), "accepted as 1");
}

TEST(ChoiceSetting, AnythingElseIsRefusedNamingVariableValueAndChoices) {
  for (const char* bad : {"", "Pull", "garbage", " pull", "pull "}) {
    EXPECT_EQ(choice_refusal(bad), std::string(kName) + "='" + bad + "': not one of push, pull")
        << "rule: '" << bad << "' is no choice (it used to mean the default)";
  }
}

}  // namespace
