# Taylor truncation error |e^t - T_p(t)| against the order p, with the Lagrange bound.
# Data: in = CSV with p, then err/bound pairs for t = -4, -1, 1, 4 (from ch05).
# Variables: rounding (harness::rounding_floor): an error below rounding * e^|t| is drawn there.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 560 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale y 10
set format y "10^{%L}"
set yrange [1e-14:1e3]
set xrange [0:20]
set xlabel "order p"
set ylabel "|e^t − T_p(t)|"
set grid lc rgb "#dddddd"
set key bottom left opaque
set title "Taylor map: error of T_p(q·k) (points)" . (narrow ? "\n" : " ") . "and Lagrange bound (lines)"
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
plot in skip 1 using 1:($2 > 0 ? $2 : NaN) with points pt 7 ps 0.7 lc rgb "#c0392b" title "t = −4", \
     in skip 1 using 1:3 with lines dt 2 lc rgb "#c0392b" notitle, \
     in skip 1 using 1:($4 > 0 ? $4 : NaN) with points pt 5 ps 0.7 lc rgb "#d68910" title "t = −1", \
     in skip 1 using 1:5 with lines dt 2 lc rgb "#d68910" notitle, \
     in skip 1 using 1:($6 > 0 ? $6 : NaN) with points pt 9 ps 0.8 lc rgb "#27ae60" title "t = 1", \
     in skip 1 using 1:7 with lines dt 2 lc rgb "#27ae60" notitle, \
     in skip 1 using 1:($8 > 0 ? $8 : NaN) with points pt 11 ps 0.8 lc rgb "#2471a3" title "t = 4", \
     in skip 1 using 1:9 with lines dt 2 lc rgb "#2471a3" notitle, \
     rounding * exp(1) with lines dt 3 lc rgb "#888888" title "rounding level, |t| = 1"
