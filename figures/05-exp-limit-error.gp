# Exp-limit error |e^t - (1 + t/p)^p| against p (log-log), with the asymptote e^t t^2/(2p).
# Data: in = CSV with p, then err/asymptote pairs for t = -2, 0.5, 1, 2 (from ch05).
# Variables: s1..s4 = fitted slopes (p >= 64) for the four t.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 560 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale xy 10
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "power p"
set ylabel "|e^t − (1 + t/p)^p|"
set grid lc rgb "#dddddd"
set key top right title "slopes fitted for p ≥ 64"
# On a phone the key's title goes into the figure's (under the key it would overlap "power p").
set title "Exp-limit map: error (points)" . (narrow ? "\n" : " ") . "and e^t t²/(2p) (lines)" . (narrow ? ";\nslopes fitted for p ≥ 64" : "")
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque title "" }
plot in skip 1 using 1:2 with points pt 7 ps 0.6 lc rgb "#c0392b" title sprintf("t = −2, slope %.3f", s1), \
     in skip 1 using 1:3 with lines dt 2 lc rgb "#c0392b" notitle, \
     in skip 1 using 1:4 with points pt 5 ps 0.6 lc rgb "#d68910" title sprintf("t = 0.5, slope %.3f", s2), \
     in skip 1 using 1:5 with lines dt 2 lc rgb "#d68910" notitle, \
     in skip 1 using 1:6 with points pt 9 ps 0.7 lc rgb "#27ae60" title sprintf("t = 1, slope %.3f", s3), \
     in skip 1 using 1:7 with lines dt 2 lc rgb "#27ae60" notitle, \
     in skip 1 using 1:8 with points pt 11 ps 0.7 lc rgb "#2471a3" title sprintf("t = 2, slope %.3f", s4), \
     in skip 1 using 1:9 with lines dt 2 lc rgb "#2471a3" notitle
