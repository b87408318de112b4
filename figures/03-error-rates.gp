# Error rate |β_eq − β_LS| / |β_LS| of the trained h = id system, one point per run and configuration.
# Data: in = CSV with config (0, 1, ...), run, error_rate, label (from ch03).
# Variables: rounding = the rounding level (harness::rounding_floor): a rate below it is drawn on it.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 420 : 500) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
stats in skip 1 using 1 name "C" nooutput
stats in skip 1 using 2 name "R" nooutput
configs = C_max + 1
mid = R_max / 2.0
set logscale y 10
set format y "10^{%L}"
set xrange [-0.5:configs - 0.5]
stats in skip 1 using (log10($3)) name "E" nooutput
lo = E_min < -5 ? E_min : -5
hi = E_max > -3 ? E_max : -3
set yrange [10**(floor(lo) - 0.5):10**(ceil(hi) + 0.5)]
set xlabel "n × d"
set xtics scale 0
set ylabel "error rate of β_{eq} after training"
set grid ytics lc rgb "#dddddd"
set key off
set title "h = id: every run reaches least squares"
set arrow from -0.5,1e-4 to configs - 0.5,1e-4 nohead dt 2 lc rgb "#888888"
set label "source's threshold 10^{-4}" at configs - 0.55,2.6e-4 right tc rgb "#888888"
set arrow from -0.5,rounding to configs - 0.5,rounding nohead dt 3 lc rgb "#555555"
set label (narrow ? "rounding level" : sprintf("rounding level 10^{%d}: a rate below it is drawn on it", int(floor(log10(rounding) + 0.5)))) at configs - 0.55,rounding*8 right tc rgb "#555555"
# Runs spread sideways around their configuration; one tic label per configuration.
plot in skip 1 using ($1 + ($2 - mid) * 0.04):3:xtic($2 == 0 ? strcol(4) : "") \
     with points pt 7 ps 0.8 lc rgb "#2471a3"
