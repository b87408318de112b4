# Relative error of beta against the condition number of X, for three least-squares solvers.
# Data: in = CSV with kappa, normal, qr, svd (median relative error over seeds; from ch03).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 560 : 520) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale xy 10
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "condition number κ(X)"
set ylabel "relative error of β"
set grid lc rgb "#dddddd"
set key top left
set title "Normal equations square" . (narrow ? "\n" : " ") . "the condition number"
eps = 2.220446e-16
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
plot in skip 1 using 1:2 with linespoints pt 7 ps 0.7 lc rgb "#c0392b" title "normal equations (XᵀX)⁻¹Xᵀy", \
     in skip 1 using 1:3 with linespoints pt 5 ps 0.7 lc rgb "#2471a3" title "Householder QR", \
     in skip 1 using 1:4 with linespoints pt 9 ps 0.7 lc rgb "#1e8449" title "SVD", \
     eps*x*x with lines dt 2 lc rgb "#c0392b" title "κ² · eps", \
     eps*x with lines dt 2 lc rgb "#2471a3" title "κ · eps"
