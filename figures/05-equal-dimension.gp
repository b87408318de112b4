# The three feature maps at equal feature dimension D (d_k = 4): relative Frobenius error of
# the 64 x 64 kernel matrix against D, log-log.
# Data: in = CSV with map (taylor / exp_limit / random), dim, rel_frobenius_error.
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 800),(narrow ? 520 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set logscale xy 10
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "feature dimension D"
set ylabel "‖Φ(Q)Φ(K)^T − exp(QK^T)‖ / ‖exp(QK^T)‖"
set grid lc rgb "#dddddd"
set key top right
set title "d_k = 4, logits q·k with" . (narrow ? "\n" : " ") . "standard deviation 1/2"
if (narrow) { set key below center Left reverse maxcols 1 samplen 2 height 1 opaque }
plot in skip 1 using 2:(strcol(1) eq "taylor" ? $3 : NaN) with linespoints pt 7 ps 0.7 lc rgb "#c0392b" title "Taylor, D = Σ_{ℓ≤p} 4^ℓ", \
     in skip 1 using 2:(strcol(1) eq "exp_limit" ? $3 : NaN) with linespoints pt 5 ps 0.7 lc rgb "#27ae60" title "exp-limit, D = 5^p", \
     in skip 1 using 2:(strcol(1) eq "random" ? $3 : NaN) with linespoints pt 9 ps 0.8 lc rgb "#2471a3" title "positive random, D = r"
