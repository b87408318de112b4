# Var(q.k) against d, with and without the 1/sqrt(d) scale, with +-2 standard-error bars.
# Data: in = CSV with d,var,var_scaled,se,se_scaled,max_weight,max_weight_scaled (from ch01).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 760 : 440) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
if (narrow) { set multiplot layout 2,1 } else { set multiplot layout 1,2 }
set logscale xy 2
set format x "%g"
set format y "%g"
set xlabel "width d"
set grid lc rgb "#dddddd"
set key top left
set title "Variance of the logits"
plot in skip 1 using 1:2:(2*$4) with yerrorbars pt 7 ps 0.6 lc rgb "#c0392b" title "Var(q·k)", \
     x with lines dt 2 lc rgb "#c0392b" title "= d", \
     in skip 1 using 1:3:(2*$5) with yerrorbars pt 5 ps 0.6 lc rgb "#2471a3" title "Var(q·k/√d)", \
     1 with lines dt 2 lc rgb "#2471a3" title "= 1"
unset logscale y
set yrange [0:1.05]
set format y "%.1f"
set key bottom right
set title "Largest softmax weight (mean)"
plot in skip 1 using 1:6 with linespoints pt 7 ps 0.6 lc rgb "#c0392b" title "softmax(q·k)", \
     in skip 1 using 1:7 with linespoints pt 5 ps 0.6 lc rgb "#2471a3" title "softmax(q·k/√d)"
unset multiplot
