#!/bin/sh
# atk44b: remove the round's copy, its binary and the e2e workspace (the serve it ran removed its containers)
rm -rf /tmp/atk44b
