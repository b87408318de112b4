# GFLOP/s of softmax attention (forward, tiled forward, backward) against the sequence
# length N, next to Eigen's GEMM on the same shapes, for d = 64 and d = 128 (bench-attention).
# Data: in64, in128 = CSV with N,gemm,forward,tiled,backward (GFLOP/s, medians).
# Flops count the matrix products only (4 N^2 d forward, 10 N^2 d backward).
set terminal svg size 900,420 font "DejaVu Sans,13" background rgb "white"
set output out
set datafile separator ","
set multiplot layout 1,2
set logscale x 2
set format x "2^{%L}"
set xlabel "sequence length N"
set ylabel "GFLOP/s (one core)"
set yrange [0:100]
set grid lc rgb "#dddddd"
set key bottom center maxrows 3 samplen 2 font ",11"
do for [i = 1:2] {
  file = (i == 1) ? in64 : in128
  set title sprintf("d = %d", (i == 1) ? 64 : 128)
  plot file skip 1 using 1:2 with linespoints pt 9 ps 0.7 dt 2 lw 2 lc rgb "#555555" title "GEMM, same shapes", \
       file skip 1 using 1:(0.7 * $2) with lines dt 3 lc rgb "#999999" title "70% of GEMM", \
       file skip 1 using 1:3 with linespoints pt 7 ps 0.6 lc rgb "#c0392b" title "forward, row blocks", \
       file skip 1 using 1:4 with linespoints pt 5 ps 0.6 lc rgb "#e67e22" title "forward, tiled", \
       file skip 1 using 1:5 with linespoints pt 13 ps 0.7 lc rgb "#2471a3" title "backward"
}
unset multiplot
