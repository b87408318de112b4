# Random features. Left: relative RMSE of the kernel estimate against r (log-log), with
# theory lines. Right: relative RMSE against q.k at r = 64 for |q| = |k| = 1.
# Data: in = 05-rf-error.csv (r, positive, orthogonal, trigonometric, positive_theory,
# trig_theory); in2 = 05-rf-kernel.csv (qk, kernel, positive, trig, positive_theory,
# trig_theory, trig_negative). Variables: slope_positive, slope_orthogonal,
# slope_trigonometric = fitted slopes.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 1000 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set multiplot
set logscale xy 10
set format x "%g"
set format y "10^{%L}"
set xlabel "random features r"
set ylabel "relative RMSE of φ(q)·φ(k)"
set grid lc rgb "#dddddd"
# Two panels side by side, each with its key underneath (inside, a key would hide data).
# On a phone: one above the other, the same way.
if (narrow) { set tmargin at screen 0.93; set bmargin at screen 0.71; set lmargin at screen 0.19; set rmargin at screen 0.94; set key at screen 0.05, screen 0.645 left top Left reverse samplen 2 } \
else { set tmargin at screen 0.9; set bmargin at screen 0.37; set lmargin at screen 0.11; set rmargin at screen 0.48; set key at screen 0.11, screen 0.215 left top Left reverse samplen 2 }
set title "|q| = |k| = 0.5, q·k = 0.1"
plot in skip 1 using 1:2 with points pt 7 ps 0.7 lc rgb "#c0392b" title sprintf("positive, slope %.2f", slope_positive), \
     in skip 1 using 1:5 with lines dt 2 lc rgb "#c0392b" notitle, \
     in skip 1 using 1:3 with points pt 5 ps 0.7 lc rgb "#7d3c98" title sprintf("orthogonal, slope %.2f", slope_orthogonal), \
     in skip 1 using 1:4 with points pt 9 ps 0.8 lc rgb "#2471a3" title sprintf("trigonometric, slope %.2f", slope_trigonometric), \
     in skip 1 using 1:6 with lines dt 2 lc rgb "#2471a3" notitle
unset logscale x
set format x "%.1f"
set xrange [-1.05:1.05]
set yrange [1e-3:3]
set xlabel "q·k   (|q| = |k| = 1)"
if (narrow) { set tmargin at screen 0.46; set bmargin at screen 0.215; set key at screen 0.05, screen 0.15 left top Left reverse samplen 2 } \
else { set lmargin at screen 0.6; set rmargin at screen 0.98; set key at screen 0.6, screen 0.215 left top Left reverse samplen 2 }
set title "r = 64: where each estimator fails"
plot in2 skip 1 using 1:($3 > 0 ? $3 : NaN) with points pt 7 ps 0.7 lc rgb "#c0392b" title "positive", \
     in2 skip 1 using 1:($5 > 0 ? $5 : NaN) with lines dt 2 lc rgb "#c0392b" notitle, \
     in2 skip 1 using 1:($4 > 0 ? $4 : NaN) with points pt 9 ps 0.8 lc rgb "#2471a3" title "trigonometric", \
     in2 skip 1 using 1:($6 > 0 ? $6 : NaN) with lines dt 2 lc rgb "#2471a3" notitle
unset multiplot
