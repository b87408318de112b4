# Left: singular values of the n x n softmax and linear attention matrices (sigma_i /
# sigma_1). Right: numerical rank of softmax(s Q K^T) against the logit scale s.
# Data: in = 05-spectra.csv (index, softmax, linear_r<r_small>, linear_r<r_big>);
# in2 = 05-rank-scale.csv (scale, rank_1e10, rank_1e6, favourites).
# Variables: r_small, r_big = the two r; rounding = the rounding level (harness::rounding_floor):
# a singular value below it is drawn on it.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 1000 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set multiplot
set logscale y 10
set format y "10^{%L}"
set yrange [rounding / 30:2]
set xlabel "index i"
set ylabel "σ_i / σ_1"
set grid lc rgb "#dddddd"
# Two panels side by side, each with its key underneath (inside, a key would hide data).
# On a phone: one above the other, the same way.
if (narrow) { set tmargin at screen 0.93; set bmargin at screen 0.71; set lmargin at screen 0.19; set rmargin at screen 0.94; set key at screen 0.05, screen 0.645 left top Left reverse samplen 2 } \
else { set tmargin at screen 0.9; set bmargin at screen 0.37; set lmargin at screen 0.135; set rmargin at screen 0.495; set key at screen 0.135, screen 0.215 left top Left reverse samplen 2 }
set title (narrow ? "Singular values of\nthe attention matrix" : "Singular values of the attention matrix")
set arrow 1 from graph 0, first rounding to graph 1, first rounding nohead dt 3 lc rgb "#555555"
set label 1 "rounding level" at graph 0.97, first rounding * 8 right tc rgb "#555555"
plot in skip 1 using 1:2 with lines lw 2 lc rgb "#c0392b" title "softmax(QK^T)", \
     in skip 1 using 1:3 with lines lw 2 lc rgb "#27ae60" title sprintf("linear, r = %d", r_small), \
     in skip 1 using 1:4 with lines lw 2 lc rgb "#2471a3" title sprintf("linear, r = %d", r_big)
unset arrow 1
unset label 1
set logscale x 10
unset logscale y
set format x "%g"
set format y "%g"
set autoscale y
set yrange [0:*]
set xlabel "logit scale s"
set ylabel "numerical rank"
if (narrow) { set tmargin at screen 0.46; set bmargin at screen 0.215; set key at screen 0.05, screen 0.15 left top Left reverse samplen 2 } \
else { set lmargin at screen 0.61; set rmargin at screen 0.98; set key at screen 0.61, screen 0.215 left top Left reverse samplen 2 }
set title "Rank of softmax(s QK^T)"
plot in2 skip 1 using 1:2 with linespoints pt 7 ps 0.6 lc rgb "#c0392b" title "σ_i > 10^{-10} σ_1", \
     in2 skip 1 using 1:3 with linespoints pt 5 ps 0.6 lc rgb "#d68910" title "σ_i > 10^{-6} σ_1", \
     in2 skip 1 using 1:4 with lines dt 2 lc rgb "#555555" title "keys that are a query's argmax"
unset multiplot
