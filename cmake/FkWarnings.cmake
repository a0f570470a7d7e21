# fk_target_warnings(<target>): the warning set for our own code (not for dependencies).
function(fk_target_warnings target)
  set(flags -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wimplicit-fallthrough)
  # GCC 12 and 13 report -Warray-bounds false positives inside libstdc++'s red-black tree
  # when nlohmann::json objects are built from initializer lists (GCC bug 107852).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 15)
    list(APPEND flags -Wno-array-bounds)
  endif()
  if(FK_WERROR)
    list(APPEND flags -Werror)
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${flags}>)
endfunction()
