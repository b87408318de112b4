# cmake -DMANIFEST=file -DDIRS="dir1|dir2" -P site_manifest.cmake
# Writes one line "sha256  path" per file under DIRS (sorted) to MANIFEST, touching MANIFEST only
# when the content changed: the site rebuilds when a program output or a figure changes, and
# not when a chapter program merely reran with the same results.
string(REPLACE "|" ";" dirs "${DIRS}")
set(lines "")
foreach(dir IN LISTS dirs)
  if(IS_DIRECTORY "${dir}")
    file(GLOB_RECURSE files LIST_DIRECTORIES false "${dir}/*")
    list(SORT files)
    foreach(f IN LISTS files)
      file(SHA256 "${f}" h)
      string(APPEND lines "${h}  ${f}\n")
    endforeach()
  endif()
endforeach()
file(WRITE "${MANIFEST}.tmp" "${lines}")
file(COPY_FILE "${MANIFEST}.tmp" "${MANIFEST}" ONLY_IF_DIFFERENT)
file(REMOVE "${MANIFEST}.tmp")
