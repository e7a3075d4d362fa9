#!/bin/sh
# remove the round's copy and scratch directories
rm -rf /tmp/atk44a
