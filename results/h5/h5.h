// fk::h5 — the generic HDF5 layer of results/: atomic file creation (Writer), reading
// (File), groups, attributes, N-D numeric datasets, tables (compound datasets) and
// copies of whole groups between files (copy.h).
// The job and campaign schemas are built on top of it; docs/results-schema.md
// ("HDF5 conventions") says how the files look from h5py, pandas and h5dump.
//
//   fk::h5::Writer w("job.h5");
//   w.set_attr("schema_version", 1);
//   auto g = w.require_group("kernel_stage/timings");
//   g.write_table("ops", fk::h5::Table()
//                            .add_column("op", std::vector<std::string>{"rms_norm"})
//                            .add_column("median_us", std::vector<double>{12.5}));
//   w.commit();
//   fk::h5::Table t = fk::h5::File::open_read("job.h5").read_table("kernel_stage/timings/ops");
#pragma once

#include "results/h5/copy.h"
#include "results/h5/dataset.h"
#include "results/h5/error.h"
#include "results/h5/file.h"
#include "results/h5/group.h"
#include "results/h5/object.h"
#include "results/h5/storage_policy.h"
#include "results/h5/table.h"
#include "results/h5/writer.h"
