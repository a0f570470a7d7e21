// fk_h5_sample_writer <file>: writes the sample file that external readers check
// (h5dump and h5_reader_check.py). Keep the two in step: the Python script asserts
// exactly the values written here.
#include "results/h5/h5.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <file.h5>\n", argv[0]);
    return 2;
  }
  try {
    using fk::h5::Table;
    const std::string kUnicode = "\u03a9\u03bc\u03ad\u03b3\u03b1 \u2014 \u65e5\u672c\u8a9e \u00b5s";
    fk::h5::Writer w(argv[1]);
    w.set_attr("title", kUnicode);
    w.set_attr("schema_version", 3);
    w.set_attr("ratio", 0.5);
    w.set_attr("complete", true);
    w.set_attr("failed", false);
    w.set_attr("ranks", std::vector<int64_t>{0, 1, 2, 3});
    w.set_attr("scales", std::vector<double>{0.25, 4.0});
    w.set_attr("tags", std::vector<std::string>{"smoke", "\u03b2eta"});

    fk::h5::Group timings = w.require_group("kernel_stage/timings");
    Table ops;
    ops.add_column("op", std::vector<std::string>{"rms_norm", "silu_and_mul"})
        .add_column("calls", std::vector<int64_t>{10, 20})
        .add_column("tp", std::vector<int32_t>{1, 2})
        .add_column("median_us", std::vector<double>{12.5, 3.25})
        .add_column("passed", std::vector<bool>{true, false});
    fk::h5::Dataset table = timings.write_table("ops", ops);
    table.set_attr("median_us_unit", "microseconds");
    Table more;
    more.add_column("op", std::vector<std::string>{kUnicode})
        .add_column("calls", std::vector<int64_t>{30})
        .add_column("tp", std::vector<int32_t>{4})
        .add_column("median_us", std::vector<double>{0.125})
        .add_column("passed", std::vector<bool>{true});
    timings.append_table("ops", more);
    timings.write_table(
        "empty", Table().add_column("op", std::vector<std::string>{}).add_column("median_us", std::vector<double>{}));

    w.write_array("arrays/f64", std::vector<double>{0, 1, 2, 3, 4, 5}, fk::Shape{2, 3});
    w.write_array("arrays/f32", std::vector<float>{-1.5f, 2.5f});
    w.write_array("arrays/i64", std::vector<int64_t>{-9000000000LL, 9000000000LL});
    w.write_array("arrays/i32", std::vector<int32_t>{-7, 7}, fk::Shape{1, 2});
    w.write_array("arrays/u8", std::vector<uint8_t>{0, 128, 255});
    w.write_array("arrays/empty", std::vector<double>{});
    std::vector<double> big(200000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i % 1000);
    w.write_array("arrays/big", big, fk::Shape{400, 500});
    w.commit();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fk_h5_sample_writer: %s\n", e.what());
    return 1;
  }
  return 0;
}
