// fk::Error carries where it was raised: fail() records its caller's file and line
// (not core/error.h's), with the formatted message and the kind.
#include "core/error.h"

#include <gtest/gtest.h>

#include <string>

namespace fk {
namespace {

int line_of_fail = 0;

[[noreturn]] void raise_it(int value) {
  line_of_fail = __LINE__ + 1;
  fail(ErrorKind::kInvalidArgument, "value {} is {}", value, std::string("bad"));
}

TEST(Error, FailRecordsTheCallersLocationKindAndMessage) {
  try {
    raise_it(7);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_STREQ(e.what(), "value 7 is bad");
    EXPECT_NE(std::string(e.where().file_name()).find("error_test.cc"), std::string::npos) << e.where_string();
    EXPECT_EQ(static_cast<int>(e.where().line()), line_of_fail);
    return;
  }
  FAIL() << "fail() did not throw";
}

TEST(Error, FailWithoutArgumentsToo) {
  const int line = __LINE__ + 2;
  try {
    fail(ErrorKind::kIo, "plain message");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "plain message");
    EXPECT_EQ(static_cast<int>(e.where().line()), line);
    EXPECT_NE(e.where_string().find("error_test.cc:"), std::string::npos) << e.where_string();
  }
}

}  // namespace
}  // namespace fk
