// Attributes on files, groups and datasets: every supported type round-trips,
// replacing works, and wrong reads fail with errors that name the file and object.
#include "h5_test_util.h"
#include "results/h5/h5.h"

#include <cmath>
#include <limits>

namespace fk::h5 {
namespace {

using testing::expect_error;

const std::string kUnicode = "\u03a9\u03bc\u03ad\u03b3\u03b1 \u2014 \u65e5\u672c\u8a9e \u00b5s \U0001F680";

class AttributeTest : public testing::H5Test {};

// Writes every attribute type on `object` and checks them back on `read`.
void write_all(Object& object) {
  object.set_attr("s", "plain");
  object.set_attr("u", kUnicode);
  object.set_attr("empty", std::string());
  object.set_attr("i", int64_t{-42});
  object.set_attr("i_min", std::numeric_limits<int64_t>::min());
  object.set_attr("i_small", 7);  // int
  object.set_attr("u_small", 7u);
  object.set_attr("d", 0.125);
  object.set_attr("d_inf", -std::numeric_limits<double>::infinity());
  object.set_attr("yes", true);
  object.set_attr("no", false);
  object.set_attr("iv", std::vector<int64_t>{1, -2, 3});
  object.set_attr("dv", std::vector<double>{0.5, 1e300});
  object.set_attr("sv", std::vector<std::string>{"a", kUnicode, ""});
  object.set_attr("iv0", std::vector<int64_t>{});
  object.set_attr("dv0", std::vector<double>{});
  object.set_attr("sv0", std::vector<std::string>{});
}

void check_all(const Object& object) {
  EXPECT_EQ(object.attr<std::string>("s"), "plain");
  EXPECT_EQ(object.attr<std::string>("u"), kUnicode);
  EXPECT_EQ(object.attr<std::string>("empty"), "");
  EXPECT_EQ(object.attr<int64_t>("i"), -42);
  EXPECT_EQ(object.attr<int64_t>("i_min"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(object.attr<int64_t>("i_small"), 7);
  EXPECT_EQ(object.attr<int64_t>("u_small"), 7);
  EXPECT_EQ(object.attr<double>("d"), 0.125);
  EXPECT_EQ(object.attr<double>("d_inf"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(object.attr<bool>("yes"));
  EXPECT_FALSE(object.attr<bool>("no"));
  EXPECT_EQ(object.attr<std::vector<int64_t>>("iv"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(object.attr<std::vector<double>>("dv"), (std::vector<double>{0.5, 1e300}));
  EXPECT_EQ(object.attr<std::vector<std::string>>("sv"), (std::vector<std::string>{"a", kUnicode, ""}));
  EXPECT_TRUE(object.attr<std::vector<int64_t>>("iv0").empty());
  EXPECT_TRUE(object.attr<std::vector<double>>("dv0").empty());
  EXPECT_TRUE(object.attr<std::vector<std::string>>("sv0").empty());
  // A scalar also reads as a one-element vector.
  EXPECT_EQ(object.attr<std::vector<int64_t>>("i"), (std::vector<int64_t>{-42}));
  EXPECT_EQ(object.attr_names(),
            (std::vector<std::string>{"d", "d_inf", "dv", "dv0", "empty", "i", "i_min", "i_small", "iv", "iv0", "no",
                                      "s", "sv", "sv0", "u", "u_small", "yes"}));
}

TEST_F(AttributeTest, RoundTripOnFileGroupAndDataset) {
  const std::string target = path("attrs.h5");
  {
    Writer w(target);
    write_all(w);
    Group g = w.create_group("g/h");
    write_all(g);
    Dataset d = g.write_array("data", std::vector<float>{1.5f});
    write_all(d);
    w.commit();
  }
  File f = File::open_read(target);
  check_all(f);
  check_all(f.open_group("g/h"));
  check_all(f.open_dataset("g/h/data"));
}

TEST_F(AttributeTest, NaNRoundTrips) {
  Writer w(path("nan.h5"));
  w.set_attr("nan", std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(w.attr<double>("nan")));
}

TEST_F(AttributeTest, SetReplacesEvenWithAnotherType) {
  Writer w(path("replace.h5"));
  w.set_attr("x", 1);
  w.set_attr("x", "now a string");
  EXPECT_EQ(w.attr<std::string>("x"), "now a string");
  w.set_attr("x", std::vector<double>{2.0});
  EXPECT_EQ(w.attr<double>("x"), 2.0);
  EXPECT_EQ(w.attr_names(), std::vector<std::string>{"x"});
}

TEST_F(AttributeTest, HasAttr) {
  Writer w(path("has.h5"));
  EXPECT_FALSE(w.has_attr("x"));
  w.set_attr("x", true);
  EXPECT_TRUE(w.has_attr("x"));
  EXPECT_TRUE(w.attr_names() == std::vector<std::string>{"x"});
}

TEST_F(AttributeTest, MissingAttributeNamesFileObjectAndAttribute) {
  const std::string target = path("missing.h5");
  Writer w(target);
  Group g = w.create_group("stage");
  const std::string what = expect_error(ErrorKind::kNotFound, [&] { (void)g.attr<int64_t>("nope"); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_NE(what.find("/stage"), std::string::npos) << what;
  EXPECT_NE(what.find("'nope'"), std::string::npos) << what;
}

TEST_F(AttributeTest, WrongTypeReadsAreRejected) {
  Writer w(path("types.h5"));
  w.set_attr("s", "text");
  w.set_attr("d", 1.5);
  w.set_attr("i", 3);
  w.set_attr("iv", std::vector<int64_t>{1, 2});
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.attr<int64_t>("s"); });
  EXPECT_NE(what.find("string"), std::string::npos) << what;
  what = expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.attr<int64_t>("d"); });
  EXPECT_NE(what.find("float"), std::string::npos) << what;
  expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.attr<double>("i"); });
  expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.attr<std::string>("i"); });
  what = expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.attr<int64_t>("iv"); });
  EXPECT_NE(what.find("2 elements"), std::string::npos) << what;
  // bool reads from an integer attribute.
  EXPECT_TRUE(w.attr<bool>("i"));
}

TEST_F(AttributeTest, InvalidValuesAreRejected) {
  Writer w(path("invalid.h5"));
  expect_error(ErrorKind::kInvalidArgument, [&] { w.set_attr("nul", std::string("a\0b", 3)); });
  expect_error(ErrorKind::kInvalidArgument,
               [&] { w.set_attr("nul", std::vector<std::string>{std::string("a\0b", 3)}); });
  expect_error(ErrorKind::kInvalidArgument, [&] { w.set_attr("big", std::numeric_limits<uint64_t>::max()); });
  expect_error(ErrorKind::kInvalidArgument, [&] { w.set_attr("", 1); });
  EXPECT_TRUE(w.attr_names().empty());
}

}  // namespace
}  // namespace fk::h5
