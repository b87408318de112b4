# cmake -DOUT=book-live.js -DIN="live.js;chapters/*/live.js" -P bundle.cmake: the files in
# order, each after a comment naming it.
set(text "")
foreach(f IN LISTS IN)
  file(READ "${f}" body)
  string(APPEND text "/* ---- ${f} ---- */\n${body}\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
