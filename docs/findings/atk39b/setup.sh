#!/bin/sh
# builds nothing: expects /tmp/atk39b/mcpsandbox (CGO_ENABLED=0 go build -o /tmp/atk39b/mcpsandbox ./cmd/mcpsandbox at /work/main 3ce1f75)
mkdir -p /tmp/atk39b/bin && ln -sf /tmp/atk39b/mcpsandbox /tmp/atk39b/bin/mcpsandbox
