# Consistency: interior mean squared error against n, with h = c n^{-1/5}, log-log.
# Data: in = CSV with n, mse, mse_lo, mse_hi (±2 standard errors), fitted, h, reference
# (a line of slope -4/5 through the data's centre) (from ch02);
# kernel (string), slope, slope_se (numbers).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 600 : 500) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale xy 10
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "training points n"
set ylabel (narrow ? "MSE on [0.25, 0.75]" : "mean squared error on [0.25, 0.75]")
set grid lc rgb "#dddddd"
set key top right
set style fill transparent solid 0.25 noborder
set title sprintf("%s kernel, h ∝ n^{-1/5}:%sfitted slope %.3f ± %.3f (theory -4/5)", kernel, narrow ? "\n" : " ", slope, 2*slope_se)
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
plot in skip 1 using 1:3:4 with filledcurves lc rgb "#2471a3" title "mean ± 2 s.e.", \
     in skip 1 using 1:2 with points pt 7 ps 0.8 lc rgb "#2471a3" title "mean over data sets", \
     in skip 1 using 1:5 with lines lw 2 lc rgb "#c0392b" title "least-squares line", \
     in skip 1 using 1:7 with lines lw 1.5 dt 2 lc rgb "#000000" title "slope -4/5"
