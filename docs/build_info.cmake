# cmake -DROOT=dir -DINFO=file -P build_info.cmake
# Writes INFO, {"commit": "<git describe --always --dirty>", "date": "<the commit's date>"}, the
# version of the book this build is made from, which the About page shows (book.pages.about).
# INFO is touched only when it changed, so the site is rebuilt after a commit and not otherwise.
# Without git (an exported copy): "unknown".
set(commit "unknown")
set(date "unknown")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND "${GIT}" describe --always --dirty --abbrev=7 WORKING_DIRECTORY "${ROOT}"
                  OUTPUT_VARIABLE described RESULT_VARIABLE rc1 ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND "${GIT}" log -1 --format=%cs WORKING_DIRECTORY "${ROOT}"
                  OUTPUT_VARIABLE day RESULT_VARIABLE rc2 ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc1 EQUAL 0 AND rc2 EQUAL 0)
    set(commit "${described}")
    set(date "${day}")
  endif()
endif()
file(WRITE "${INFO}.tmp" "{\"commit\": \"${commit}\", \"date\": \"${date}\"}\n")
file(COPY_FILE "${INFO}.tmp" "${INFO}" ONLY_IF_DIFFERENT)
file(REMOVE "${INFO}.tmp")
