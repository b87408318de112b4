# Time per call of softmax attention and linear attention against the sequence length n
# (log-log), with the measured crossover. Data: in = CSV with n, softmax (empty when not
# measured), linear. Variables: crossover (0 = none), ss, sl = fitted slopes, d (= d_k), r.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 480 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale xy 2
set format x "2^{%L}"
set logscale y 10
set format y "10^{%L}"
set xlabel "sequence length n"
set ylabel "seconds per call"
set grid lc rgb "#dddddd"
set key bottom right
set title sprintf("Softmax vs linear attention,%sd_k = %d, r = %d (this machine)", narrow ? "\n" : " ", d, r)
if (crossover > 0) {
  set arrow from crossover, graph 0 to crossover, graph 1 nohead dt 3 lc rgb "#555555"
  set label sprintf("crossover n ≈ %.0f", crossover) at crossover, graph 0.95 offset 0.8,0
}
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
plot in skip 1 using 1:($2 > 0 ? $2 : NaN) with linespoints pt 7 ps 0.6 lc rgb "#c0392b" title sprintf("softmax attention, slope %.2f", ss), \
     in skip 1 using 1:3 with linespoints pt 5 ps 0.6 lc rgb "#2471a3" title sprintf("linear attention, slope %.2f", sl)
