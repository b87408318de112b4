# Nadaraya–Watson weights as attention maps: queries on a grid (rows) x training points
# sorted by x (columns), one panel per kernel.
# Data: in = CSV with kernel, key_rank, query, weight, empty (from ch02); h = bandwidth,
# rows = queries, cols = keys. A query with no key in range is left white (undefined).
set terminal svg size 1000,760 font "DejaVu Sans,13" background rgb "white"
set output out
set datafile separator ","
set multiplot layout 2,2
set key off
set xlabel "key: training point, ranked by x_i"
set ylabel "query x"
set yrange [1:0]
set xrange [-0.5:cols - 0.5]
set cbrange [0:*]
set palette defined (0 "#f7fbff", 0.3 "#6baed6", 1 "#08306b")
set tics out nomirror
names = "Gaussian box triangle Epanechnikov"
cells = rows * cols  # rows of the CSV per kernel: queries x keys
do for [k = 0:3] {
  set title word(names, k + 1) . " kernel, h = " . h
  plot in skip 1 every ::(k*cells)::((k+1)*cells - 1) using 2:3:($5 > 0 ? NaN : $4) with image pixels
}
unset multiplot
