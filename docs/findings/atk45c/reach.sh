python3 /tmp/reach.py </dev/null >/tmp/reach.out 2>&1 &
while ! grep -q REACH-DONE /tmp/reach.out 2>/dev/null; do sleep 0.1; done
cat /tmp/reach.out
echo atk-mark
