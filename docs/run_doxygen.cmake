# cmake -DDOXYGEN=exe -DDOXYFILE=file -DHTML_DIR=dir -DOUT_DIR=dir -DSTAMP=file
#       -DPYTHON=exe -DFILTER=docs/md_filter.py -DPAGES=docs/pages.py -DROOT=dir -P run_doxygen.cmake
# Empties HTML_DIR (except the MathJax copy, which has its own rule), so pages of deleted or
# renamed inputs do not linger, then runs Doxygen, which fails on any warning
# (WARN_AS_ERROR = FAIL_ON_WARNINGS) or filter error; the stamp is written only on success.
file(MAKE_DIRECTORY "${HTML_DIR}" "${OUT_DIR}")
file(GLOB old LIST_DIRECTORIES true "${HTML_DIR}/*" "${HTML_DIR}/.*")
list(REMOVE_ITEM old "${HTML_DIR}/mathjax")
if(old)
  file(REMOVE_RECURSE ${old})
endif()
get_filename_component(workdir "${DOXYFILE}" DIRECTORY)
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" WORKING_DIRECTORY "${workdir}"
                RESULT_VARIABLE rc ERROR_VARIABLE err ECHO_ERROR_VARIABLE)
# Doxygen's own warnings make rc non-zero; md_filter.py's errors (math in a heading) only reach
# stderr, so they are caught here.
if(NOT rc EQUAL 0 OR err MATCHES ": (error|warning):")
  message(FATAL_ERROR "Doxygen reported warnings or errors (above); they are errors for the site.")
endif()
# Doxygen puts a space before every inline formula; drop it where the text glued the formula to
# the preceding character, "($n$ tokens)" (md_filter.py marks those places).
execute_process(COMMAND "${PYTHON}" "${FILTER}" --fix-html "${HTML_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "md_filter.py --fix-html failed")
endif()
# The full-text search's data: every section of every page (docs/search.js reads it).
get_filename_component(docs_dir "${PAGES}" DIRECTORY)
execute_process(COMMAND "${PYTHON}" -B "${docs_dir}/search_index.py" "${HTML_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "search_index.py failed")
endif()
# The pages of the source files that code blocks and cited tests link to (html/src/).
execute_process(COMMAND "${PYTHON}" -B "${PAGES}" sources "${ROOT}" "${HTML_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pages.py sources failed")
endif()
file(TOUCH "${STAMP}")
