# Nadaraya–Watson fits of the chapter's data: one panel per kernel, three bandwidths each.
# Data: in = CSV with x, f, then <kernel>_h<h> for 4 kernels x 3 bandwidths (from ch02);
# data = CSV with the training points x, y; h1, h2, h3 = the bandwidths (strings).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 1300 : 780) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set multiplot
set xrange [0:1]
set yrange [-2.2:2.2]
set xtics 0.2
set grid lc rgb "#dddddd"
set key off
names = "Gaussian box triangle Epanechnikov"
do for [k = 0:3] {
  if (narrow) {  # one column, the key on top
    set lmargin at screen 0.13; set rmargin at screen 0.97
    set tmargin at screen 0.895 - k * 0.225; set bmargin at screen 0.72 - k * 0.225
  } else {
    set lmargin at screen 0.075 + (k % 2) * 0.495
    set rmargin at screen 0.49 + (k % 2) * 0.495
    set tmargin at screen 0.91 - (k / 2) * 0.46
    set bmargin at screen 0.54 - (k / 2) * 0.46
  }
  set title word(names, k + 1) . " kernel" offset 0,-0.4
  if (k >= (narrow ? 3 : 2)) { set xlabel "x" offset 0,0.5 }  # the bottom row labels the shared axis
  plot data skip 1 using 1:2 with points pt 7 ps 0.35 lc rgb "#999999", \
       in skip 1 using 1:2 with lines lw 1.5 dt 2 lc rgb "#000000", \
       in skip 1 using 1:(column(3 + 3*k)) with lines lw 1.3 lc rgb "#e67e22", \
       in skip 1 using 1:(column(4 + 3*k)) with lines lw 2 lc rgb "#2471a3", \
       in skip 1 using 1:(column(5 + 3*k)) with lines lw 2 lc rgb "#c0392b"
}
# One key for the four panels, across the top: an empty plot over the whole canvas.
unset title; unset xlabel; unset tics; unset border; unset grid
set lmargin at screen 0; set rmargin at screen 1; set tmargin at screen 1; set bmargin at screen 0
if (narrow) { set key at screen 0.5, screen 0.995 center top horizontal maxrows 3 Left reverse samplen 1.5 width -3 } \
else { set key at screen 0.5, screen 0.99 center top horizontal maxrows 1 Left reverse samplen 1.5 width -5 }
plot NaN with points pt 7 ps 0.5 lc rgb "#999999" title "data", \
     NaN with lines lw 1.5 dt 2 lc rgb "#000000" title "f(x) = sin 2πx", \
     NaN with lines lw 1.3 lc rgb "#e67e22" title "h = " . h1, \
     NaN with lines lw 2 lc rgb "#2471a3" title "h = " . h2, \
     NaN with lines lw 2 lc rgb "#c0392b" title "h = " . h3
unset multiplot
