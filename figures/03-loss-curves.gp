# Training loss per iteration, geometric mean over runs with a ×/÷ one geometric-sd band,
# for h = id and h = softmax, against the least-squares loss. One CSV per (n, d).
# Data: in = CSV with iteration, id_mean, id_lo, id_hi, softmax_mean, softmax_lo, softmax_hi, ls.
# Variables: title; systems = "both" (default), "identity" or "softmax".
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 480 : 500) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale y 10
set format y "10^{%L}"
set xlabel "iteration"
set ylabel (narrow ? "MSE (training rows)" : "mean squared error (training rows)")
set grid lc rgb "#dddddd"
set key top right
set style fill transparent solid 0.2 noborder
if (!exists("title")) title = ""
if (!exists("systems")) systems = "both"
set title title
id = "in skip 1 using 1:3:4 with filledcurves lc rgb '#2471a3' notitle, in skip 1 using 1:2 with lines lw 2 lc rgb '#2471a3' title 'h = id', "
sm = "in skip 1 using 1:6:7 with filledcurves lc rgb '#c0392b' notitle, in skip 1 using 1:5 with lines lw 2 lc rgb '#c0392b' title 'h = softmax', "
ls = "in skip 1 using 1:8 with lines dt 2 lw 1.5 lc rgb '#000000' title 'least squares'"
curves = systems eq "softmax" ? sm.ls : systems eq "identity" ? id.ls : id.sm.ls
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
plot @curves
