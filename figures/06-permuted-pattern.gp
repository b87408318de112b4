# Attention weights before and after permuting the tokens: three heatmaps side by side.
# Data: in = CSV with panel,row,col,weight,row_token,col_token (from ch06); panel 0 = A(X),
# 1 = A(PX) (row i is token perm[i]), 2 = P^T A(PX) P. Variable: n (tokens).
# Each cell prints its weight in per cent (two digits: legible in a 800 px wide figure).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 1400 : 400) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set key off
set multiplot title (narrow ? "One attention head with biases,\nbefore and after reordering the tokens\n(weights in per cent)" : "One attention head with biases, before and after reordering the tokens\n(weights in per cent)")
set xrange [-0.5:n - 0.5]
set yrange [n - 0.5:-0.5]
set cbrange [0:*]
set palette defined (0 "#f7fbff", 0.5 "#6baed6", 1 "#08306b")
set tics nomirror out scale 0
set style fill solid 1.0 noborder
unset colorbox
set xlabel "key" offset 0,0.4
# Square panels of 216 x 216 px: 0.27 of the width, 0.54 of the height.
if (!narrow) { set bmargin at screen 0.135; set tmargin at screen 0.675 }
array titles[3] = ["A(X)\ntokens in order", "A(PX)\nthe same tokens reordered", \
                   "P^{T} A(PX) P\nrows and columns put back"]
do for [p = 0:2] {
  if (narrow) {  # one column, square panels
    set lmargin at screen 0.16; set rmargin at screen 0.92
    set tmargin at screen 0.87 - p * 0.3; set bmargin at screen 0.655 - p * 0.3
  } else {
    set lmargin at screen 0.075 + p * 0.32
    set rmargin at screen 0.345 + p * 0.32
  }
  if (narrow || p == 0) { set ylabel "query" offset 1,0 } else { unset ylabel }
  set title titles[p + 1] offset 0,-0.3
  plot in skip 1 every ::(p*n*n)::((p+1)*n*n - 1) using 3:2:(0.5):(0.5):4:xtic(6):ytic(5) \
         with boxxyerror fc palette, \
       in skip 1 every ::(p*n*n)::((p+1)*n*n - 1) using 3:2:(sprintf("%.0f", 100 * $4)):($4 > 0.45 ? 0xffffff : 0x000000) \
         with labels tc rgb variable font (narrow ? "DejaVu Sans,13" : "DejaVu Sans,12")
}
unset multiplot
