// copy_object / remove_object: whole files copied into a group of another file keep
// every group, dataset (with its storage), table and attribute; failures name the
// places and leave nothing half-copied.
#include "h5_test_util.h"
#include "results/h5/h5.h"

#include <fstream>

namespace fk::h5 {
namespace {

using testing::expect_error;

class CopyTest : public testing::H5Test {
 protected:
  // A small "job file": root attributes, a nested table, a compressed array.
  std::string write_source(const std::string& name) {
    const std::string p = path(name);
    Writer w(p);
    w.set_attr("format", "fastkernels-job");
    w.set_attr("ranks", 4);
    w.set_attr("complete", true);
    w.set_attr("hosts", std::vector<std::string>{"a", "b"});
    Group ks = w.require_group("kernel_stage");
    ks.set_attr("iterations", 20);
    ks.write_table("instances", Table()
                                    .add_column("op", std::vector<std::string>{"rms_norm", "linear"})
                                    .add_column("median_s", std::vector<double>{1e-5, 2e-4})
                                    .add_column("passed", std::vector<bool>{true, false}));
    std::vector<double> big(20000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i % 97);
    w.write_array("kernel_stage/timings/0000", big, Shape{4, 5000});
    w.commit();
    return p;
  }
};

TEST_F(CopyTest, WholeFileBecomesAGroupWithEverything) {
  const std::string src = write_source("job.h5");
  const std::string dst = path("campaign.h5");
  {
    File in = File::open_read(src);
    Writer w(dst);
    copy_object(in, ".", w, "jobs/abc");
    copy_object(in, "kernel_stage/instances", w, "tables/instances");
    w.commit();
  }
  File f = File::open_read(dst);
  const Group job = f.open_group("jobs/abc");
  EXPECT_EQ(job.attr<std::string>("format"), "fastkernels-job");
  EXPECT_EQ(job.attr<int64_t>("ranks"), 4);
  EXPECT_TRUE(job.attr<bool>("complete"));
  EXPECT_EQ(job.attr<std::vector<std::string>>("hosts"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(job.open_group("kernel_stage").attr<int64_t>("iterations"), 20);
  const Table t = job.read_table("kernel_stage/instances");
  EXPECT_EQ(t.column<std::string>("op"), (std::vector<std::string>{"rms_norm", "linear"}));
  EXPECT_EQ(t.column<bool>("passed"), (std::vector<bool>{true, false}));
  const Dataset d = job.open_dataset("kernel_stage/timings/0000");
  EXPECT_EQ(d.shape(), (Shape{4, 5000}));
  EXPECT_TRUE(d.storage().compressed);  // copied as stored
  const std::vector<double> v = d.read<double>();
  EXPECT_EQ(v[96], 96.0);
  EXPECT_EQ(v[97], 0.0);
  EXPECT_EQ(f.read_table("tables/instances").column<double>("median_s"), (std::vector<double>{1e-5, 2e-4}));
}

TEST_F(CopyTest, RefusesExistingDestinationAndMissingSource) {
  const std::string src = write_source("job.h5");
  File in = File::open_read(src);
  Writer w(path("out.h5"));
  copy_object(in, ".", w, "jobs/a");
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { copy_object(in, ".", w, "jobs/a"); });
  EXPECT_NE(what.find("/jobs/a"), std::string::npos) << what;
  EXPECT_NE(what.find("already exists"), std::string::npos) << what;
  what = expect_error(ErrorKind::kNotFound, [&] { copy_object(in, "model_stage", w, "jobs/b"); });
  EXPECT_NE(what.find("/model_stage"), std::string::npos) << what;
  EXPECT_FALSE(w.exists("jobs/b"));
  expect_error(ErrorKind::kInvalidArgument, [&] { copy_object(in, ".", w, ""); });
}

TEST_F(CopyTest, RemoveObjectUnlinksAGroup) {
  const std::string src = write_source("job.h5");
  File in = File::open_read(src);
  Writer w(path("out.h5"));
  copy_object(in, ".", w, "jobs/a");
  copy_object(in, ".", w, "jobs/b");
  remove_object(w, "jobs/a");
  EXPECT_EQ(w.open_group("jobs").children(), std::vector<std::string>{"b"});
  expect_error(ErrorKind::kNotFound, [&] { remove_object(w, "jobs/a"); });
  expect_error(ErrorKind::kInvalidArgument, [&] { remove_object(w, ""); });
}

}  // namespace
}  // namespace fk::h5
