# cmake -DEXE=<program> "-DARGS=<arguments, space-separated>" -DOUT=<file> -P RunToFile.cmake
# Runs EXE ARGS with its standard output into OUT (written whole, or not at all: a failed run
# leaves no file, so the build step runs again).
separate_arguments(ARGS UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${EXE} ${ARGS} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${EXE} ${ARGS} failed (${rc}): ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
