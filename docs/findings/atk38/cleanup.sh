#!/bin/bash
# atk38: remove what the scripts made (no users, containers or services were created)
rm -rf /tmp/atk38/f1 /tmp/atk38/f1audit /tmp/atk38/f2 /tmp/atk38/f2audit /tmp/atk38/f3 /tmp/atk38/f3audit /tmp/atk38/f4 /tmp/atk38/f4audit /tmp/atk38/f2b /tmp/atk38/f2baudit /tmp/atk38/tsclient
