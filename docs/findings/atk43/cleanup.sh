#!/bin/sh
# removes the round's scratch (the copy of HEAD, the runtime check directories)
rm -rf /tmp/atk43
