# How far each layer variant is from permutation symmetry: one horizontal bar per variant.
# Data: in = CSV with index,variant,residual_max,residual_min,symmetric (from ch06).
# Variables: eps (machine epsilon), nvar (number of variants).
set terminal svg size 800,640 font "DejaVu Sans,14" background rgb "white"
set output out
set datafile separator ","
set key off
floor = 1e-18
clamp(x) = x > floor ? x : floor
set logscale x
set xrange [floor:30]
set yrange [nvar - 0.5:-0.6]
set format x "10^{%L}"
set xtics floor, 1000 nomirror
unset mxtics
set ytics nomirror scale 0
set grid xtics lc rgb "#dddddd"
set xlabel "relative change under a permutation\nbar: max over permutations, dot: min"
# The long y labels push the plot right: the title is centred on the canvas, not on the plot.
set tmargin 4.5
set label "Which layers keep permutation symmetry?\nblue: symmetric by the chapter's argument, red: symmetry broken" at screen 0.5, screen 0.975 center
set style fill solid 0.85 noborder
set arrow from eps, graph 0 to eps, graph 1 nohead dt 2 lc rgb "#555555"
set label "machine ε" at eps, graph 1.0 offset -3.5, 0.6 tc rgb "#555555"
set arrow from 1e-3, graph 0 to 1e-3, graph 1 nohead dt 3 lc rgb "#c0392b"
set label "test: broken if > 10^{-3}" at 1e-3, graph 1.0 offset -5, 0.6 tc rgb "#c0392b"
plot in skip 1 using (sqrt(floor*clamp($3))):1:(floor):(clamp($3)):($1 - 0.35):($1 + 0.35):($5 > 0 ? 0x2471a3 : 0xc0392b):ytic(2) \
        with boxxyerror lc rgb variable, \
     in skip 1 using (clamp($4)):1 with points pt 7 ps 0.5 lc rgb "#222222", \
     in skip 1 using (1.5*floor):1:($3 > 0 ? "" : "exactly 0 for every permutation") with labels left offset 0.6,0 tc rgb "#2471a3"
