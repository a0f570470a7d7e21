# End-to-end checks of the fk command line on bad input: exit status and message.
# Run by ctest as: cmake -DFK=<fk> -DSRC=<source dir> -DWORK=<scratch dir> -P cli_errors.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

file(WRITE ${WORK}/bad.yaml "kind: architecture
name: x
model_type: llama
source: test
hidden_size: 4096
num_hidden_layers: 32
num_attention_heads: 32
num_key_value_heads: 5
intermediate_size: 14336
vocab_size: 32000
max_position_embeddings: 8192
norm: {kind: rmsnorm, eps: 1.0e-05}
mlp: {activation: silu}
position: {kind: rope}
")
expect_run(1 "bad.yaml:8:1: num_key_value_heads: 5 does not divide num_attention_heads (32)"
           ${FK} validate ${WORK}/bad.yaml)
expect_run(1 "1 of 2 files invalid" ${FK} validate ${SRC}/specs/architectures/gpt2.yaml ${WORK}/bad.yaml)
expect_run(1 "cannot open file" ${FK} validate ${WORK}/missing.yaml)
string(ASCII 1 2 255 ctrl)
file(WRITE ${WORK}/garbage.yaml "${ctrl}: [\n{{{")
expect_run(1 "garbage.yaml" ${FK} validate ${WORK}/garbage.yaml)
expect_run(0 "ok: architecture gpt2" ${FK} validate ${SRC}/specs/architectures/gpt2.yaml)
expect_run(2 "campaign is required" ${FK} plan)
expect_run(2 "unknown command 'bogus'" ${FK} bogus)
expect_run(2 "did you mean 'plan'?" ${FK} plna x.yaml)
expect_run(0 "job file written" ${FK} plan ${SRC}/specs/campaigns/smoke.yaml --emit ${WORK}/jobs.json)
if(NOT EXISTS ${WORK}/jobs.json)
  message(FATAL_ERROR "fk plan --emit wrote no file")
endif()
expect_run(0 "\"totals\"" ${FK} plan --json ${SRC}/specs/campaigns/smoke.yaml)
# fk status on a job file of an older format (version 1): the file and the field, exit 2.
file(READ ${WORK}/jobs.json jobs_text)
string(REPLACE "\"version\": 2" "\"version\": 1" jobs_text "${jobs_text}")
file(WRITE ${WORK}/old-run/jobs.json "${jobs_text}")
expect_run(2 "old-run/jobs.json: /version: job file version 1 is not supported" ${FK} status --results ${WORK}/old-run)
# A campaign whose layout does not fit: error at the layout, exit 1.
file(WRITE ${WORK}/specs/campaigns/c.yaml
  "kind: campaign\nname: c\nscale: tiny\nspecs_dir: ${SRC}/specs\narchitectures: [bert-base]\nworkloads: [encode-512]\nlayouts: [tp1, tp8]\n")
expect_run(1 "c.yaml:7:16: layouts: tp8pp1dp1 does not fit bert-base (tiny) x encode-512: tp (8) does not divide num_attention_heads (4)"
           ${FK} plan ${WORK}/specs/campaigns/c.yaml)
# fk check --sanitize: an unknown tool, the CPU backend, a sanitizer that is not there;
# each exits 2 naming what is wrong, before anything is built. A campaign's
# kernel_stage.sanitize takes the same tools.
expect_run(2 "--sanitize: 'leakcheck' is not a compute-sanitizer tool (memcheck, racecheck, initcheck, synccheck)"
           ${FK} check ${SRC}/candidates/rms_norm/cuda --sanitize=leakcheck)
expect_run(2 "--sanitize checks device code: it needs --backend cuda"
           ${FK} check ${SRC}/candidates/rms_norm/cuda --sanitize --backend cpu)
expect_run(2 "--sanitize: FK_COMPUTE_SANITIZER=${WORK}/none is not an executable file"
           ${CMAKE_COMMAND} -E env FK_COMPUTE_SANITIZER=${WORK}/none
           ${FK} check ${SRC}/candidates/rms_norm/cuda --sanitize --backend cuda)
file(WRITE ${WORK}/specs/campaigns/s.yaml
  "kind: campaign\nname: s\nscale: tiny\nspecs_dir: ${SRC}/specs\narchitectures: [bert-base]\nworkloads: [encode-512]\nlayouts: [tp1]\nkernel_stage: {sanitize: asan}\n")
expect_run(1 "s.yaml:8:16: kernel_stage.sanitize: 'asan' is not one of [none, memcheck, racecheck, initcheck, synccheck]"
           ${FK} plan ${WORK}/specs/campaigns/s.yaml)
