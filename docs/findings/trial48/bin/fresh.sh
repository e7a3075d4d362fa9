# source me: a fresh HOME under /tmp/trial48/$1 with the trial's binary and clients
export HOME=/tmp/trial48/$1
rm -rf "$HOME"; mkdir -p "$HOME/bin"; cp /tmp/trial48/home/bin/mcpsandbox "$HOME/bin/"
export XDG_CONFIG_HOME=$HOME/.config XDG_STATE_HOME=$HOME/.local/state XDG_DATA_HOME=$HOME/.local/share XDG_CACHE_HOME=$HOME/.cache
export PATH=/tmp/trial48/node/node_modules/.bin:$HOME/bin:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin
