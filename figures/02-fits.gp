# Nadaraya–Watson fits of the chapter's data: one panel per kernel, three bandwidths each.
# Data: in = CSV with x, f, then <kernel>_h<h> for 4 kernels x 3 bandwidths (from ch02);
# data = CSV with the training points x, y; h1, h2, h3 = the bandwidths (strings).
set terminal svg size 1000,720 font "DejaVu Sans,13" background rgb "white"
set output out
set datafile separator ","
set multiplot layout 2,2
set xrange [0:1]
set yrange [-2.2:2.2]
set grid lc rgb "#dddddd"
set key bottom left font "DejaVu Sans,11" samplen 2 spacing 0.9
set xlabel "x"
names = "Gaussian box triangle Epanechnikov"
do for [k = 0:3] {
  set title word(names, k + 1) . " kernel"
  plot data skip 1 using 1:2 with points pt 7 ps 0.35 lc rgb "#999999" title "data", \
       in skip 1 using 1:2 with lines lw 1.5 dt 2 lc rgb "#000000" title "f(x) = sin 2πx", \
       in skip 1 using 1:(column(3 + 3*k)) with lines lw 1.3 lc rgb "#e67e22" title "h = " . h1, \
       in skip 1 using 1:(column(4 + 3*k)) with lines lw 2 lc rgb "#2471a3" title "h = " . h2, \
       in skip 1 using 1:(column(5 + 3*k)) with lines lw 2 lc rgb "#c0392b" title "h = " . h3
}
unset multiplot
