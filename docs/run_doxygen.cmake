# cmake -DDOXYGEN=exe -DDOXYFILE=file -DHTML_DIR=dir -DOUT_DIR=dir -P run_doxygen.cmake
# Empties HTML_DIR (except the MathJax copy, which has its own rule), so pages of deleted or
# renamed inputs do not linger, then runs Doxygen, which fails on any warning
# (WARN_AS_ERROR = FAIL_ON_WARNINGS) or filter error (docs/CMakeLists.txt runs the page tools on
# its output next, then writes the stamp).
file(MAKE_DIRECTORY "${HTML_DIR}" "${OUT_DIR}")
file(GLOB old LIST_DIRECTORIES true "${HTML_DIR}/*" "${HTML_DIR}/.*")
list(REMOVE_ITEM old "${HTML_DIR}/mathjax")
if(old)
  file(REMOVE_RECURSE ${old})
endif()
get_filename_component(workdir "${DOXYFILE}" DIRECTORY)
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" WORKING_DIRECTORY "${workdir}"
                RESULT_VARIABLE rc ERROR_VARIABLE err ECHO_ERROR_VARIABLE)
# Doxygen's own warnings make rc non-zero; the filter's errors (book.pages.site: math in a
# heading) only reach stderr, so they are caught here.
if(NOT rc EQUAL 0 OR err MATCHES ": (error|warning):")
  message(FATAL_ERROR "Doxygen reported warnings or errors (above); they are errors for the site.")
endif()
