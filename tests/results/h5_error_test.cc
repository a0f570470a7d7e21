// Errors: HDF5 failures become fk::Error naming the file and the object, carry
// HDF5's innermost message, and print nothing on their own.
#include "h5_test_util.h"
#include "results/h5/h5.h"

#include <fstream>

namespace fk::h5 {
namespace {

using testing::expect_error;

class ErrorTest : public testing::H5Test {};

TEST_F(ErrorTest, MissingFileIsNotFound) {
  const std::string target = path("absent.h5");
  const std::string what = expect_error(ErrorKind::kNotFound, [&] { (void)File::open_read(target); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
}

TEST_F(ErrorTest, NonHdf5FileNamesFileAndHdf5Reason) {
  const std::string target = path("not_hdf5.h5");
  std::ofstream(target) << "this is a text file, not HDF5\n";
  ::testing::internal::CaptureStderr();
  const std::string what = expect_error(ErrorKind::kIo, [&] { (void)File::open_read(target); });
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_NE(what.find("HDF5: "), std::string::npos) << what;
  EXPECT_NE(what.find("signature"), std::string::npos) << what;  // innermost HDF5 message
  EXPECT_EQ(printed, "") << "HDF5 printed its error stack";
}

TEST_F(ErrorTest, MissingDatasetNamesFileAndObjectPath) {
  const std::string target = path("job.h5");
  {
    Writer w(target);
    w.create_group("kernel_stage");
    w.commit();
  }
  File f = File::open_read(target);
  const std::string what =
      expect_error(ErrorKind::kNotFound, [&] { (void)f.open_group("kernel_stage").read_array<double>("timings"); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_NE(what.find("/kernel_stage/timings: no such dataset"), std::string::npos) << what;
}

TEST_F(ErrorTest, Hdf5FailuresInsideAFileNameTheObject) {
  const std::string target = path("inner.h5");
  Writer w(target);
  w.write_array("data", std::vector<double>{1});
  // An intermediate that is a dataset: HDF5 itself refuses to create below it.
  ::testing::internal::CaptureStderr();
  const std::string what = expect_error(ErrorKind::kIo, [&] { w.create_group("data/below"); });
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_NE(what.find("/data/below"), std::string::npos) << what;
  EXPECT_NE(what.find("cannot create group (HDF5: "), std::string::npos) << what;
}

TEST_F(ErrorTest, ErrorsRecordWhereTheyWereRaised) {
  const std::string target = path("absent.h5");
  try {
    (void)File::open_read(target);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.where_string().find("results/h5/"), std::string::npos) << e.where_string();
  }
}

}  // namespace
}  // namespace fk::h5
