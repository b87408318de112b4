# Attention weights of the toy sentence without a mask (left) and with the causal mask (right):
# two heatmaps with the weight printed in each cell.
# Data: in = CSV with query,key,weight,query_token,key_token,masked,weight_unmasked (from ch01).
if (!exists("narrow")) narrow = 0  # 1: drawn for a phone, 360 px wide, panels stacked
set terminal svg size (narrow ? 360 : 800),(narrow ? 900 : 480) font (narrow ? "DejaVu Sans,15" : "DejaVu Sans,14") background rgb "white"
set output out
set datafile separator ","
set multiplot layout 1,2
set key off
set xlabel "key: the token attended to"
set ylabel "query: the token being updated"
set xrange [-0.5:5.5]
set yrange [5.5:-0.5]
set cbrange [0:1]
set palette defined (0 "#f7fbff", 0.5 "#6baed6", 1 "#08306b")
set tics nomirror out scale 0
set style fill solid 1.0 noborder
cells = narrow ? "DejaVu Sans,13" : "DejaVu Sans,12"
masked = narrow ? "–" : "masked"  # a phone's cell is too narrow for the word
# Equal panels; no colour bar: every cell prints its weight.
# Side by side; on a phone one above the other.
if (narrow) { set lmargin at screen 0.25; set rmargin at screen 0.97; set tmargin at screen 0.9; set bmargin at screen 0.6 } \
else { set lmargin at screen 0.115; set rmargin at screen 0.545; set tmargin at screen 0.84; set bmargin at screen 0.17 }
unset colorbox
set title "No mask (encoder): softmax(XX^T/√4)\nrow t averages every token"
plot in skip 1 using 2:1:(0.5):(0.5):7:xtic(5):ytic(4) with boxxyerror fc palette, \
     in skip 1 using 2:1:(sprintf("%.3f", $7)):($7 > 0.55 ? 0xffffff : 0x000000) \
        with labels tc rgb variable font cells
# Same rows as the left panel: its token labels serve both.
if (narrow) { set tmargin at screen 0.41; set bmargin at screen 0.11 } \
else { set lmargin at screen 0.565; set rmargin at screen 0.995; unset ylabel; set format y "" }
set title "Causal (decoder):" . (narrow ? "\n" : " ") . "softmax(XX^T/√4 + M)\nrow t averages tokens 0..t"
plot in skip 1 using 2:1:(0.5):(0.5):($6 > 0 ? NaN : $3):xtic(5) with boxxyerror fc palette, \
     in skip 1 using 2:1:(0.5):($6 > 0 ? 0.5 : NaN) with boxxyerror fs solid 1.0 lc rgb "#eeeeee", \
     in skip 1 using 2:1:($6 > 0 ? masked : sprintf("%.3f", $3)):($6 > 0 ? 0x888888 : ($3 > 0.55 ? 0xffffff : 0x000000)) \
        with labels tc rgb variable font cells
unset multiplot
