# Run at every build (experiments/CMakeLists.txt): writes OUT, a header defining
# TREPRO_BUILD_COMMIT as the source tree's commit ("-dirty" when tracked files differ from it, or
# "unknown" outside git), and rewrites it only when that changes, so an unchanged tree rebuilds
# nothing. Reports name the commit the binary was built from, not the one checked out when they
# are written.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "-dirty")
  endif()
endif()
set(text "#define TREPRO_BUILD_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" previous)
endif()
if(NOT previous STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
