# GFLOP/s of softmax attention (the reference form, the row-block and tiled forward passes,
# the backward pass) against the sequence length N, next to Eigen's GEMM on the same shapes,
# for d = 64 and d = 128 (bench-attention).
# Data: in64, in128 = CSV with N,gemm,forward,tiled,backward,reference (GFLOP/s, medians).
# Flops count the matrix products only (4 N^2 d forward, 10 N^2 d backward).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 860 : 470) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set multiplot
set logscale x 2
set format x "2^{%L}"
set xlabel "sequence length N" offset 0,0.3
set yrange [0:*]  # from 0 up to the fastest line, whatever this machine's rates
set offsets 0, 0, graph 0.08, 0  # room above the fastest line
set grid lc rgb "#dddddd"
set key off
# Two panels side by side; one key for both underneath.
if (!narrow) { set tmargin at screen 0.9; set bmargin at screen 0.31 }
do for [i = 1:2] {
  file = (i == 1) ? in64 : in128
  if (narrow) {  # one above the other, the key underneath
    set lmargin at screen 0.24; set rmargin at screen 0.95
    set tmargin at screen (i == 1) ? 0.93 : 0.57; set bmargin at screen (i == 1) ? 0.71 : 0.35
  } else {
    set lmargin at screen (i == 1) ? 0.1 : 0.59
    set rmargin at screen (i == 1) ? 0.48 : 0.97
  }
  if (narrow || i == 1) { set ylabel "GFLOP/s (one core)" } else { unset ylabel }
  set title sprintf("d = %d", (i == 1) ? 64 : 128)
  plot file skip 1 using 1:2 with linespoints pt 9 ps 0.7 dt 2 lw 2 lc rgb "#555555", \
       file skip 1 using 1:(0.7 * $2) with lines dt 3 lc rgb "#999999", \
       file skip 1 using 1:3 with linespoints pt 7 ps 0.6 lc rgb "#c0392b", \
       file skip 1 using 1:4 with linespoints pt 5 ps 0.6 lc rgb "#e67e22", \
       file skip 1 using 1:5 with linespoints pt 13 ps 0.7 lc rgb "#2471a3", \
       file skip 1 using 1:6 with linespoints pt 11 ps 0.7 lc rgb "#7d3c98"
}
# The key: an empty plot over the whole canvas.
unset title; unset xlabel; unset ylabel; unset tics; unset border; unset grid; unset logscale x
set yrange [0:1]  # nothing is drawn; gnuplot needs a range it need not find in data
set lmargin at screen 0; set rmargin at screen 1; set tmargin at screen 1; set bmargin at screen 0
if (narrow) { set key at screen 0.5, screen 0.26 center top vertical maxrows 6 Left reverse samplen 2 } \
else { set key at screen 0.5, screen 0.15 center top horizontal maxrows 3 Left reverse samplen 2 width -3 }
plot NaN with linespoints pt 9 ps 0.7 dt 2 lw 2 lc rgb "#555555" title "GEMM, same shapes", \
     NaN with lines dt 3 lc rgb "#999999" title "70% of GEMM", \
     NaN with linespoints pt 7 ps 0.6 lc rgb "#c0392b" title "forward, row blocks", \
     NaN with linespoints pt 5 ps 0.6 lc rgb "#e67e22" title "forward, tiled", \
     NaN with linespoints pt 13 ps 0.7 lc rgb "#2471a3" title "backward", \
     NaN with linespoints pt 11 ps 0.7 lc rgb "#7d3c98" title "reference attention()"
unset multiplot
