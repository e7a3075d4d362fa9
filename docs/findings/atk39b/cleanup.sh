#!/bin/sh
# removes everything round atk39b made outside /work/notes/atk39b (scratch under /tmp/atk39b, PWNED files)
rm -rf /tmp/atk39b /tmp/PWNED-atk39b-f4 /tmp/PWNED-atk39b-f4js
