# expect_run(<exit status> <text> <command...>): runs the command (60 s at most) and
# fails the calling test script unless it exits with that status and prints the text
# (stdout or stderr). Included by the CLI test scripts run with `cmake -P`.
function(expect_run expected_rc needle)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc STREQUAL "${expected_rc}")
    message(FATAL_ERROR "`${ARGN}` exited ${rc}, expected ${expected_rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  string(FIND "${out}${err}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "`${ARGN}` did not print '${needle}'\nstdout: ${out}\nstderr: ${err}")
  endif()
endfunction()
