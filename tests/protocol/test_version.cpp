// The protocol version policy: "major.minor.patch" in ASCII digits; major 0 up to our minor is
// accepted, another major or a newer minor is GDAP_ERR_VERSION, anything malformed is
// GDAP_ERR_INVALID_ARGUMENT. Each case names the rule and the words the message must hold.
#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <string>

namespace {

struct VersionCase {
  const char* rule;
  const char* version;
  gdap_status expected;
  const char* words;  // nullptr for success
};

TEST(ProtocolVersion, Policy) {
  const VersionCase cases[] = {
      {"the version gdap produces", GDAP_PROTOCOL_VERSION, GDAP_SUCCESS, nullptr},
      {"any patch of our minor", "0.10.7", GDAP_SUCCESS, nullptr},
      {"an older minor is refused, saying why (0.9 reads keys otherwise)", "0.9.0", GDAP_ERR_VERSION,
       "protocol version 0.9.0 is older than 0.10, the only minor gdap reads"},
      {"0.9's meanings are named", "0.9.3", GDAP_ERR_VERSION, "dist_type 'n'; periodic padding read as communication"},
      {"the oldest minor is refused", "0.0.0", GDAP_ERR_VERSION, "older than 0.10"},
      {"leading zeros are digits", "0.010.00", GDAP_SUCCESS, nullptr},
      {"a patch as large as int", "0.10.2147483647", GDAP_SUCCESS, nullptr},
      {"a newer minor", "0.11.0", GDAP_ERR_VERSION, "protocol version 0.11.0 has minor 11"},
      {"a newer minor as large as int", "0.2147483647.0", GDAP_ERR_VERSION, "has minor 2147483647"},
      {"another major", "1.0.0", GDAP_ERR_VERSION, "protocol version 1.0.0 has major 1; gdap knows major 0 up to 0.10"},
      {"another major, older minor", "2.3.4", GDAP_ERR_VERSION, "has major 2"},
      {"two parts", "0.10", GDAP_ERR_INVALID_ARGUMENT, "'0.10' is not 'major.minor.patch'"},
      {"four parts", "0.10.0.1", GDAP_ERR_INVALID_ARGUMENT, "'0.10.0.1'"},
      {"letters", "a.b.c", GDAP_ERR_INVALID_ARGUMENT, "'a.b.c'"},
      {"a suffix", "0.10.0rc1", GDAP_ERR_INVALID_ARGUMENT, "'0.10.0rc1'"},
      {"a minus sign", "-0.10.0", GDAP_ERR_INVALID_ARGUMENT, "'-0.10.0'"},
      {"a plus sign", "0.+10.0", GDAP_ERR_INVALID_ARGUMENT, "'0.+10.0'"},
      {"a part larger than int", "0.2147483648.0", GDAP_ERR_INVALID_ARGUMENT, "each fitting in int"},
      {"a huge part", "0.99999999999999999999.0", GDAP_ERR_INVALID_ARGUMENT, "not 'major.minor.patch'"},
      {"the empty string", "", GDAP_ERR_INVALID_ARGUMENT, "''"},
      {"an empty part", "0..0", GDAP_ERR_INVALID_ARGUMENT, "'0..0'"},
      {"an empty last part", "0.10.", GDAP_ERR_INVALID_ARGUMENT, "'0.10.'"},
      {"an empty first part", ".10.0", GDAP_ERR_INVALID_ARGUMENT, "'.10.0'"},
      {"leading space", " 0.10.0", GDAP_ERR_INVALID_ARGUMENT, "' 0.10.0'"},
      {"trailing newline, shown escaped", "0.10.0\n", GDAP_ERR_INVALID_ARGUMENT, "'0.10.0\\x0a'"},
      {"non-ASCII digits", "0.\xd9\xa1.0", GDAP_ERR_INVALID_ARGUMENT, "'0.\\xd9\\xa1.0'"},
      {"a long string is quoted only in part (40 bytes)", "0.1.0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
       GDAP_ERR_INVALID_ARGUMENT, "'0.1.0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gdap_protocol_version_check(c.version), c.expected) << c.rule << ": " << gdap_last_error();
    if (c.words != nullptr) {
      EXPECT_NE(std::string(gdap_last_error()).find(c.words), std::string::npos) << c.rule << ": " << gdap_last_error();
    }
  }
  EXPECT_EQ(gdap_protocol_version_check(nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("version is NULL"), std::string::npos);
}

}  // namespace
