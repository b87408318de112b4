# Attention weights before and after permuting the tokens: three heatmaps side by side.
# Data: in = CSV with panel,row,col,weight,row_token,col_token (from ch06); panel 0 = A(X),
# 1 = A(PX) (row i is token perm[i]), 2 = P^T A(PX) P. Variable: n (tokens).
set terminal svg size 1260,470 font "DejaVu Sans,12" background rgb "white"
set output out
set datafile separator ","
set key off
set multiplot layout 1,3 title "One attention head with biases, before and after reordering the tokens"
set xrange [-0.5:n - 0.5]
set yrange [n - 0.5:-0.5]
set size ratio -1
set cbrange [0:*]
set palette defined (0 "#f7fbff", 0.5 "#6baed6", 1 "#08306b")
set tics nomirror out scale 0 font "DejaVu Sans,10"
set style fill solid 1.0 noborder
unset colorbox
set xlabel "key"
set ylabel "query"
array titles[3] = ["A(X): tokens in order", "A(PX): the same tokens reordered", \
                   "P^{T} A(PX) P: rows and columns put back"]
do for [p = 0:2] {
  set title titles[p + 1]
  plot in skip 1 every ::(p*n*n)::((p+1)*n*n - 1) using 3:2:(0.5):(0.5):4:xtic(6):ytic(5) \
         with boxxyerror fc palette, \
       in skip 1 every ::(p*n*n)::((p+1)*n*n - 1) using 3:2:(sprintf("%.2f", $4)):($4 > 0.45 ? 0xffffff : 0x000000) \
         with labels tc rgb variable font "DejaVu Sans,8"
}
unset multiplot
