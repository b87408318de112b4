# Causal attention weights of the toy sentence: a heatmap with the weight printed in each cell.
# Data: in = CSV with query,key,weight,query_token,key_token,masked (from ch01).
set terminal svg size 620,520 font "DejaVu Sans,13" background rgb "white"
set output out
set datafile separator ","
set key off
set title "Causal self-attention weights on the toy sentence\nsoftmax(XX^T/√4 + M): row t averages tokens 0..t"
set xlabel "key: the token attended to"
set ylabel "query: the token being updated"
set xrange [-0.5:5.5]
set yrange [5.5:-0.5]
set x2range [-0.5:5.5]
set cbrange [0:1]
set cblabel "weight"
set palette defined (0 "#f7fbff", 0.5 "#6baed6", 1 "#08306b")
set tics nomirror out scale 0
set style fill solid 1.0 noborder
plot in skip 1 using 2:1:(0.5):(0.5):($6 > 0 ? NaN : $3):xtic(5):ytic(4) with boxxyerror fc palette, \
     in skip 1 using 2:1:(0.5):($6 > 0 ? 0.5 : NaN) with boxxyerror fs solid 1.0 lc rgb "#eeeeee", \
     in skip 1 using 2:1:($6 > 0 ? "masked" : sprintf("%.2f", $3)):($6 > 0 ? 0x888888 : ($3 > 0.55 ? 0xffffff : 0x000000)) \
        with labels tc rgb variable font "DejaVu Sans,11"
