#!/bin/sh
# atk45b: remove the round's copy, binary and e2e workspace
rm -rf /tmp/atk45b
