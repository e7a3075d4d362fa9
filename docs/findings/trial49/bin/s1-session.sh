#!/bin/bash
# docker reuse="session" through the official TS SDK client: one session, several calls
. /work/notes/trial49/env.sh
cd /tmp/trial49/node && timeout 120 node sess.mjs stdio /tmp/trial49/dsess.toml
