# Peak resident memory of softmax attention at d = 64 against the sequence length N
# (log-log, bench-memory), with the N^2 * 8 bytes one N x N matrix needs and the 4 N d * 8
# bytes of Q, K, V and the output. Data: in = CSV with N,weights,attention,tiled,n2_mib,
# inputs_mib (MiB; empty where not measured).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 640 : 500) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale x 2
set format x "2^{%L}"
set logscale y 10
set format y "10^{%L}"
set xlabel "sequence length N"
set ylabel (narrow ? "peak RSS (MiB)" : "peak resident memory (MiB)")
set grid lc rgb "#dddddd"
set key top left opaque
set title "Memory of softmax attention, d = 64" . (narrow ? "\n" : " ") . "(measured peak RSS)"
set arrow from graph 0, first 1024 to graph 1, first 1024 nohead dt 3 lc rgb "#888888"
set label "1 GiB" at graph 0.01, first 1300 tc rgb "#555555"
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
# on a phone the longest entry of the key, shorter, fits the width
reference = narrow ? "attention(): weights formed" : "attention() (reference): weights formed"
plot in skip 1 using 1:5 with lines dt 2 lw 2 lc rgb "#555555" title "N^2 · 8 bytes (one N×N matrix)", \
     in skip 1 using 1:6 with lines dt 3 lw 2 lc rgb "#27ae60" title "Q, K, V and output (4Nd · 8 bytes)", \
     in skip 1 using 1:($2 > 0 ? $2 : NaN) with linespoints pt 7 ps 0.6 lc rgb "#c0392b" title reference, \
     in skip 1 using 1:($3 > 0 ? $3 : NaN) with linespoints pt 13 ps 0.7 lc rgb "#8e44ad" title "attention\\_row\\_blocks()", \
     in skip 1 using 1:($4 > 0 ? $4 : NaN) with linespoints pt 5 ps 0.6 lc rgb "#e67e22" title "tiled\\_attention() (online softmax)"
