(sleep 300 &) ; echo atk-mark
