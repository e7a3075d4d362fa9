#!/bin/sh
userdel -r atk40u 2>/dev/null; rm -rf /home/atk40u; id atk40u 2>&1 | head -1
