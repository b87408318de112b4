# Softmax of s*z as the scale s grows: entropy and Jacobian 2-norm, median and 10-90% band.
# Data: in = CSV with scale, entropy_{median,p10,p90}, jacobian_{median,p10,p90} (from ch01).
# Variables: rounding (harness::rounding_floor): a Jacobian norm below it is drawn on it.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 760 : 440) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
if (narrow) { set multiplot layout 2,1 } else { set multiplot layout 1,2 }
set logscale x 10
set format x "10^{%L}"
set xlabel "logit scale s"
set grid lc rgb "#dddddd"
set key top right
set style fill transparent solid 0.25 noborder
set title "Entropy of softmax(s z), nats"
plot in skip 1 using 1:3:4 with filledcurves lc rgb "#2471a3" title "10–90% of draws", \
     in skip 1 using 1:2 with lines lw 2 lc rgb "#2471a3" title "median"
set logscale y 10
set format y "10^{%L}"
set yrange [rounding / 30:1]
set key at graph 0.02, graph 0.5 left Left reverse samplen 1.5
set title "Jacobian norm ||J||_2 (the gradient)"
set arrow from graph 0, first rounding to graph 1, first rounding nohead dt 3 lc rgb "#555555"
set label "rounding level" at graph 0.03, first rounding * 8 left tc rgb "#555555"
plot in skip 1 using 1:6:7 with filledcurves lc rgb "#c0392b" title "10–90% of draws", \
     in skip 1 using 1:5 with lines lw 2 lc rgb "#c0392b" title "median"
unset multiplot
