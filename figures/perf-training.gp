# Chapter 03's trainer: time per Adam iteration at the source's three sizes, one thread, this
# book's C++ (bench-training, medians) against its PyTorch formulation measured in the same
# `./book bench` run (bench/peers/training.py), log scale.
# Data: in = CSV with config,identity,softmax,torch_identity,torch_softmax.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 560 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.9
set logscale y 10
set format y "10^{%L}"
set yrange [1e-7:1]
set ylabel (narrow ? "seconds per iteration" : "seconds per Adam iteration")
set xlabel "(n, d)"
set grid ytics lc rgb "#dddddd"
set key top left
set xtics nomirror
set xrange [-0.6:2.6]
set title (narrow ? "Chapter 03's trainer: this book's C++\nagainst the PyTorch formulation" : "Chapter 03's trainer: this book's C++ against the PyTorch formulation")
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque; set xtics rotate by 25 right }
plot in skip 1 using 2:xtic(1) lc rgb "#2471a3" title "C++, h = identity", \
     in skip 1 using 4 lc rgb "#85c1e9" title "PyTorch, h = identity", \
     in skip 1 using 3 lc rgb "#c0392b" title "C++, h = softmax", \
     in skip 1 using 5 lc rgb "#f1948a" title "PyTorch, h = softmax"
