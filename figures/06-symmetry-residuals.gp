# How far each layer variant is from permutation symmetry: one horizontal bar per variant.
# Data: in = CSV with index,variant,residual_max,residual_min,symmetric (from ch06).
# Variables: rounding (harness::rounding_floor: a residual below it is drawn on it), nvar
# (number of variants).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 1060 : 640) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set key off
floor = rounding / 1000  # the left edge
clamp(x) = x > floor ? x : floor
set logscale x
set xrange [floor:30]
set yrange [nvar - 0.5:-0.6]
set format x "10^{%L}"
set xtics floor, (narrow ? 1e6 : 1000) nomirror
unset mxtics
set ytics nomirror scale 0
# On a phone each layer's name goes above its bar, with the full width for the bars.
if (narrow) { unset ytics; set lmargin 2; set yrange [nvar - 0.5:-1.1] }
bar = narrow ? 0.2 : 0.35
names = narrow ? "" : ":ytic(2)"
set grid xtics lc rgb "#dddddd"
set xlabel "relative change under a permutation\nbar: max over permutations, dot: min"
# The long y labels push the plot right: the title is centred on the canvas, not on the plot.
set tmargin (narrow ? 5.5 : 4.5)
set label (narrow ? "Which layers keep permutation symmetry?\nblue: symmetric by the chapter's argument,\nred: symmetry broken" : "Which layers keep permutation symmetry?\nblue: symmetric by the chapter's argument, red: symmetry broken") at screen 0.5, screen 0.975 center
set style fill solid 0.85 noborder
set arrow from rounding, graph 0 to rounding, graph 1 nohead dt 2 lc rgb "#555555"
set label "rounding level" at rounding, graph 1.0 offset -4.5, 0.6 tc rgb "#555555"
set arrow from 1e-3, graph 0 to 1e-3, graph 1 nohead dt 3 lc rgb "#c0392b"
set label "test: broken if > 10^{-3}" at 1e-3, graph 1.0 offset (narrow ? -10 : -5), 0.6 tc rgb "#c0392b"
plot in skip 1 using (sqrt(floor*clamp($3))):1:(floor):(clamp($3)):($1 - bar):($1 + bar):($5 > 0 ? 0x2471a3 : 0xc0392b)@names \
        with boxxyerror lc rgb variable, \
     in skip 1 using (clamp($4)):1 with points pt 7 ps 0.5 lc rgb "#222222", \
     in skip 1 using (narrow ? 1.5*floor : NaN):($1 - 0.47):2 with labels left notitle
