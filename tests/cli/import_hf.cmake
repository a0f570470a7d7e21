# `fk import-hf` end to end: writes a spec fk validate accepts (with a checkpoint
# relative to the spec), prints to stdout, and exits 2 with
# "fk import-hf: <file>: <field>: ..." on configs it cannot import.
# Run by ctest as: cmake -DFK=<fk> -DSRC=<source dir> -DWORK=<scratch dir> -P import_hf.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

set(HF ${SRC}/tests/fixtures/hf)
# Every 5.17 fixture: written, then valid for fk validate; the checkpoint is relative.
# Each fixture is copied under WORK first: fk writes a relative path only when the
# spec and the checkpoint share a folder below the root, which the source tree and a
# build folder elsewhere (/tmp/build) need not.
file(GLOB configs ${HF}/*/config.json)
foreach(cfg ${configs})
  get_filename_component(dir ${cfg} DIRECTORY)
  get_filename_component(mt ${dir} NAME)
  file(COPY ${dir}/config.json ${dir}/model.safetensors DESTINATION ${WORK}/hf/${mt})
  expect_run(0 "wrote ${WORK}/specs/${mt}.yaml" ${FK} import-hf ${WORK}/hf/${mt}/config.json -o ${WORK}/specs/${mt}.yaml)
  expect_run(0 "ok: architecture ${mt} (1 presets: full)" ${FK} validate ${WORK}/specs/${mt}.yaml)
  file(READ ${WORK}/specs/${mt}.yaml text)
  string(FIND "${text}" "checkpoint: ../hf/${mt}/model.safetensors\n" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${mt}: no relative checkpoint ../hf/${mt}/model.safetensors in\n${text}")
  endif()
endforeach()
# 4.x: gemma-3's text_config, to stdout.
expect_run(0 "model_type: gemma3_text" ${FK} import-hf ${SRC}/tests/fixtures/hf_v4/gemma-3-27b/config.json)
expect_run(0 "name: renamed" ${FK} import-hf ${HF}/llama/config.json --name renamed --dtype bf16)
expect_run(0 "checkpoint: ${HF}/llama/model.safetensors" ${FK} import-hf ${HF}/llama/config.json)
expect_run(0 "checkpoint: ${HF}/qwen2" ${FK} import-hf ${HF}/llama/config.json --checkpoint ${HF}/qwen2)

# Bad input: exit 2, the file, the field, what was found.
file(READ ${HF}/llama/config.json llama)
string(REPLACE "\"model_type\": \"llama\"" "\"model_type\": \"my_own_model\"" unknown "${llama}")
file(WRITE ${WORK}/unknown/config.json "${unknown}")
expect_run(2 "fk import-hf: ${WORK}/unknown/config.json: model_type: found \"my_own_model\", expected one of ["
           ${FK} import-hf ${WORK}/unknown/config.json -o ${WORK}/unknown.yaml)
if(EXISTS ${WORK}/unknown.yaml)
  message(FATAL_ERROR "a failed import wrote its output")
endif()
# A known model type fk cannot import says what it lacks.
string(REPLACE "\"model_type\": \"llama\"" "\"model_type\": \"bloom\"" bloom "${llama}")
file(WRITE ${WORK}/bloom/config.json "${bloom}")
expect_run(2 "fk import-hf: ${WORK}/bloom/config.json: model_type: \"bloom\" cannot be imported: ALiBi positions"
           ${FK} import-hf ${WORK}/bloom/config.json -o ${WORK}/bloom.yaml)
string(REPLACE "\"rope_type\": \"llama3\"" "\"rope_type\": \"longrope\"" longrope "${llama}")
file(WRITE ${WORK}/longrope/config.json "${longrope}")
expect_run(2 "fk import-hf: ${WORK}/longrope/config.json: rope_parameters.rope_type: found \"longrope\""
           ${FK} import-hf ${WORK}/longrope/config.json)
# yarn keeps the llama3 keys of the fixture: each is named as not yarn's.
string(REPLACE "\"rope_type\": \"llama3\"" "\"rope_type\": \"yarn\"" yarn "${llama}")
file(WRITE ${WORK}/yarn/config.json "${yarn}")
expect_run(2 "fk import-hf: ${WORK}/yarn/config.json: rope_parameters.high_freq_factor: found 4.0"
           ${FK} import-hf ${WORK}/yarn/config.json)
string(REPLACE "\"num_key_value_heads\": 2" "\"num_key_value_heads\": 3" kv "${llama}")
file(WRITE ${WORK}/kv/config.json "${kv}")
expect_run(2 "num_key_value_heads: found 3, expected a divisor of num_attention_heads (4)"
           ${FK} import-hf ${WORK}/kv/config.json)
string(REPLACE "\"hidden_size\": 32," "" nohidden "${llama}")
file(WRITE ${WORK}/nohidden/config.json "${nohidden}")
expect_run(2 "${WORK}/nohidden/config.json: hidden_size: missing" ${FK} import-hf ${WORK}/nohidden/config.json)
file(WRITE ${WORK}/broken/config.json "{\n  \"model_type\": \"llama\"\n  \"hidden_size\": 32\n}\n")
expect_run(2 "fk import-hf: ${WORK}/broken/config.json:3:" ${FK} import-hf ${WORK}/broken/config.json)
# Values the spec cannot hold: exit 2 naming the file and the key, not 1 ("unexpected
# error" or "internal error").
string(REPLACE "\"rms_norm_eps\": 1e-05" "\"rms_norm_eps\": 1e400" huge "${llama}")
file(WRITE ${WORK}/huge/config.json "${huge}")
expect_run(2 "fk import-hf: ${WORK}/huge/config.json:23:19: rms_norm_eps: found 1e400"
           ${FK} import-hf ${WORK}/huge/config.json)
string(REPLACE "\"num_hidden_layers\": 2" "\"num_hidden_layers\": 1e12" layers "${llama}")
file(WRITE ${WORK}/layers/config.json "${layers}")
expect_run(2 "${WORK}/layers/config.json: num_hidden_layers: found 1000000000000.0, expected an integer in [1, 100000]"
           ${FK} import-hf ${WORK}/layers/config.json)
string(REPLACE "\"rms_norm_eps\": 1e-05" "\"rms_norm_eps\": 0" eps "${llama}")
file(WRITE ${WORK}/eps/config.json "${eps}")
expect_run(2 "${WORK}/eps/config.json: rms_norm_eps: found 0, expected a number in (0, 0.1]"
           ${FK} import-hf ${WORK}/eps/config.json)
expect_run(2 "cannot open" ${FK} import-hf ${WORK}/nothing/config.json)
expect_run(2 "--checkpoint: found" ${FK} import-hf ${HF}/llama/config.json --checkpoint ${WORK}/nothing.safetensors)
expect_run(2 "--dtype: found 'int8'" ${FK} import-hf ${HF}/llama/config.json --dtype int8)
expect_run(2 "--name: found 'a b'" ${FK} import-hf ${HF}/llama/config.json --name "a b")
