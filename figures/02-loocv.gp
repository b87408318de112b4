# Choosing h: leave-one-out cross-validation error against h for every kernel, and the
# path of gradient descent on log h for the Gaussian kernel.
# Data: in = CSV with h, cv_<kernel> x 4, risk_gaussian (the sample's mean squared noise
# plus the Gaussian fit's MSE against f on [0, 1]) (from ch02);
# learned = CSV with step, h, loss, grad.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 1000 : 520) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set multiplot
set logscale x 10
set xlabel "bandwidth h" offset 0,0.3
set grid lc rgb "#dddddd"
set xrange [0.005:0.5]
set yrange [0.2:0.6]
# Two panels side by side, each with its key underneath (a key inside would hide the curves).
# On a phone: one above the other, the same way.
if (narrow) { set tmargin at screen 0.93; set bmargin at screen 0.71; set lmargin at screen 0.16; set rmargin at screen 0.97; set key at screen 0.05, screen 0.655 left top Left reverse samplen 2 } \
else { set tmargin at screen 0.905; set bmargin at screen 0.39; set lmargin at screen 0.08; set rmargin at screen 0.48; set key at screen 0.08, screen 0.255 left top Left reverse samplen 2 }
set title "Leave-one-out error CV(h)"
plot in skip 1 using 1:2 with lines lw 2 lc rgb "#2471a3" title "Gaussian", \
     in skip 1 using 1:3 with lines lw 1.5 lc rgb "#e67e22" title "box", \
     in skip 1 using 1:4 with lines lw 1.5 lc rgb "#27ae60" title "triangle", \
     in skip 1 using 1:5 with lines lw 1.5 lc rgb "#8e44ad" title "Epanechnikov", \
     in skip 1 using 1:6 with lines lw 1.5 dt 2 lc rgb "#000000" title "noise² + MSE against f (Gaussian)"
if (narrow) { set tmargin at screen 0.46; set bmargin at screen 0.215; set key at screen 0.05, screen 0.16 left top Left reverse samplen 2 } \
else { set lmargin at screen 0.585; set rmargin at screen 0.985; set key at screen 0.585, screen 0.255 left top Left reverse samplen 2 }
set title "Learning h by gradient descent on log h"
plot in skip 1 using 1:2 with lines lw 2 lc rgb "#2471a3" title "Gaussian CV(h)", \
     learned skip 1 using 2:3 with linespoints pt 7 ps 0.7 lc rgb "#c0392b" title "iterates from h = 0.3", \
     learned skip 1 using 2:3:(sprintf("%d", $1)) every ::0::2 with labels offset 0,0.8 font "DejaVu Sans,14" tc rgb "#c0392b" notitle
unset multiplot
