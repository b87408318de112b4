# The same data with every current multiplied by c (c = 1000: mA), for four predictors whose
# weights are fixed numbers chosen in amperes. One script, three figures, chosen by `which`:
#   04-entropy            mean attention entropy of the two softmax systems against c
#   04-prediction-change  relative change of the predictions against c = 1 (log-log)
#   04-prediction-error   held-out mean squared error against c (log-log)
# Data: in = CSV with c, change_{ls,id,softmax,whitened}, mse_{ls,id,softmax,whitened},
# entropy_{softmax,whitened}, change_layernorm, layernorm_formula (from ch04); logn = log n;
# slope = the fitted slope of the h = id change for c ≥ 10; eps = LayerNorm's epsilon;
# rounding = the rounding level (harness::rounding_floor), where the program put every change
# below it.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 560 : 500) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale x 10
set format x "10^{%L}"
if (narrow) { set xtics 100 }  # every other decade: room for the labels
set xlabel "unit factor c" . (narrow ? "\n" : " ") . "(numbers × c: 10^3 = mA, 10^{-3} = kA)"
set grid lc rgb "#dddddd"
blue = "#2471a3"; red = "#c0392b"; green = "#1e8449"; orange = "#d68910"; purple = "#7d3c98"
# The change at c = 1 is 0 by definition (the reference itself): not drawn.
change(c, v) = c == 1 ? 1/0 : v
# eps as the key shows it: 10^{k} for a power of ten, else as a number.
k = int(floor(log10(eps) + 0.5))
epsilon = abs(eps / 10.0**k - 1) < 1e-9 ? sprintf("10^{%d}", k) : sprintf("%g", eps)

if (which eq "04-entropy") {
  set title "A change of unit is" . (narrow ? "\n" : " ") . "a change of temperature"
  set ylabel (narrow ? "mean entropy of the weights" : "mean entropy of a query's weights (nats)")
  set yrange [-0.2:logn + 0.5]
  set key at graph 0.02, graph 0.45 left Left reverse
  set arrow from graph 0, first logn to graph 1, first logn nohead dt 2 lc rgb "#888888"
  set label sprintf("uniform: log n = %.2f", logn) at graph 0.98, first logn + 0.2 right tc rgb "#888888"
  set label "one-hot (argmax): 0" at graph 0.98, first 0.15 right tc rgb "#888888"
  if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
  plot in skip 1 using 1:10 with linespoints lw 2 pt 7 ps 0.5 lc rgb red title "softmax, fixed W_Q = W_K", \
       in skip 1 using 1:11 with linespoints lw 2 pt 7 ps 0.5 lc rgb green title "softmax, whitened: W_Q = W_K ∝ L^T"
}

if (which eq "04-prediction-change") {
  set logscale y 10
  set format y "10^{%L}"
  set yrange [rounding / 30:1e16]
  set arrow from graph 0, first rounding to graph 1, first rounding nohead dt 3 lc rgb "#555555"
  set label "rounding level" at graph 0.97, first rounding * 8 right tc rgb "#555555"
  set ylabel "||ŷ(c) − ŷ(1)|| / ||ŷ(1)||"
  set title "Which predictions depend" . (narrow ? "\n" : " ") . "on the unit of x?"
  set key top left
  # The program's least-squares slope of the unnormalised attention's change for c ≥ 10
  # (results.json: sweep_id_change_slope): it should be 2 (c²).
  set label sprintf("slope %.3f (fit, c ≥ 10)", slope) at graph 0.97, graph 0.45 right tc rgb orange
  if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
  plot in skip 1 using 1:(change($1, $3)) with lines lw 2 lc rgb orange title "attention, h = id (W fixed)", \
       in skip 1 using 1:(change($1, $4)) with linespoints lw 2 pt 7 ps 0.5 lc rgb red title "softmax attention (W fixed)", \
       in skip 1 using 1:(change($1, $12)) with lines lw 2 dt 2 lc rgb purple title "LayerNorm, ε = ".epsilon, \
       in skip 1 using 1:(change($1, $5)) with linespoints lw 2 pt 6 ps 0.6 lc rgb green title "softmax attention, whitened", \
       in skip 1 using 1:(change($1, $2)) with linespoints lw 2 pt 7 ps 0.5 lc rgb blue title "least squares"
}

if (which eq "04-prediction-error") {
  set logscale y 10
  set format y "10^{%L}"
  set ylabel "held-out mean squared error (V^2)"
  set title "Prediction error in every unit"
  set yrange [0.3:*]
  set key top left
  if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
  plot in skip 1 using 1:7 with lines lw 2 lc rgb orange title "attention, h = id (W fixed)", \
       in skip 1 using 1:8 with linespoints lw 2 pt 7 ps 0.5 lc rgb red title "softmax attention (W fixed)", \
       in skip 1 using 1:9 with linespoints lw 2 pt 6 ps 0.6 lc rgb green title "softmax attention, whitened", \
       in skip 1 using 1:6 with linespoints lw 2 pt 7 ps 0.5 lc rgb blue title "least squares"
}
