# cmake -DCOMPILER=... -DSOURCE=... -DLOG=... -DDEPFILE=... -DINCLUDES="a|b" -P record_compile.cmake
#
# Compiles SOURCE as far as templates and static_asserts go (-fsyntax-only: no code is
# generated) and records the outcome in LOG: a first line "exit status N", then the
# compiler's messages. It never fails itself; the ctest test reads LOG. DEPFILE lists the
# headers SOURCE includes, so the build reruns this only when one of them changes.
string(REPLACE "|" ";" includes "${INCLUDES}")
list(TRANSFORM includes PREPEND "-I")
execute_process(
  COMMAND "${COMPILER}" -std=c++20 ${includes} -fsyntax-only -MD -MF "${DEPFILE}"
          -MT "${LOG}" "${SOURCE}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE messages
  ERROR_VARIABLE messages)
if(NOT EXISTS "${DEPFILE}")
  file(WRITE "${DEPFILE}" "${LOG}: ${SOURCE}\n")
endif()
file(WRITE "${LOG}" "exit status ${status}\n${messages}")
