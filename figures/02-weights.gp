# Nadaraya–Watson weights as attention maps: queries on a grid (rows) x training points
# sorted by x (columns), one panel per kernel.
# Data: in = CSV with kernel, key_rank, query, weight, empty (from ch02); h = bandwidth,
# rows = queries, cols = keys. A query with no key in range is left white (undefined).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 1400 : 760) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set multiplot
set key off
set yrange [1:0]
set xrange [-0.5:cols - 0.5]
set cbrange [0:*]
set palette defined (0 "#f7fbff", 0.3 "#6baed6", 1 "#08306b")
set tics out nomirror
names = "Gaussian box triangle Epanechnikov"
cells = rows * cols  # rows of the CSV per kernel: queries x keys
# 2 x 2 panels, each with its own colour bar; axis labels on the outer panels only.
do for [k = 0:3] {
  if (narrow) {  # one column
    x0 = 0.15; y0 = 0.06 + (3 - k) * 0.24; w = 0.66; hh = 0.19
  } else {
    x0 = 0.095 + (k % 2) * 0.47; y0 = 0.1 + (1 - k / 2) * 0.475; w = 0.3; hh = 0.35
  }
  set lmargin at screen x0
  set rmargin at screen x0 + w
  set bmargin at screen y0
  set tmargin at screen y0 + hh
  set colorbox user origin screen x0 + w + 0.015 * (narrow ? 2 : 1), screen y0 size screen 0.022 * (narrow ? 2 : 1), screen hh
  if (narrow || k % 2 == 0) { set ylabel "query x" offset 1.5,0 } else { unset ylabel }
  if (k >= (narrow ? 3 : 2)) { set xlabel "key: training point, ranked by x_i" } else { unset xlabel }
  set title word(names, k + 1) . " kernel, h = " . h offset 0,-0.4
  plot in skip 1 every ::(k*cells)::((k+1)*cells - 1) using 2:3:($5 > 0 ? NaN : $4) with image pixels
}
unset multiplot
