# The hat matrix H = X (XᵀX)⁻¹ Xᵀ as a heatmap with signed colours.
# Data: in = CSV with row, col, value (from ch03).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, the key below
set terminal svg size (narrow ? 360 : 720),(narrow ? 440 : 620) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set key off
stats in skip 1 using 3 nooutput
m = (abs(STATS_min) > abs(STATS_max)) ? abs(STATS_min) : abs(STATS_max)
set cbrange [-m:m]
set palette defined (-1 "#b2182b", 0 "#f7f7f7", 1 "#2166ac")
set cblabel "weight H_{ij} (red: negative)"
set xlabel "training row j (key)"
set ylabel "training row i (query)"
stats in skip 1 using 1 name "R" nooutput
set xrange [-0.5:R_max + 0.5]
set yrange [R_max + 0.5:-0.5]
set tics out nomirror
set title "Least squares as attention:" . (narrow ? "\n" : " ") . "the weights H_{ij} of the hat matrix"
plot in skip 1 using 2:1:3 with image pixels
